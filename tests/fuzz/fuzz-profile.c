/* tests/fuzz/fuzz-profile.c: the platform-profile parser (model/profile.c) on arbitrary text,
 * then the queries the models make of what it accepted and the writer that prints it back. */
#include <stdio.h>
#include "model/profile.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_file("platform.profile", data, size);
    fc__profile *p = NULL;
    if (path == NULL || fc__profile_read(path, &p) < 0)
        return 0;
    uint64_t sizes[] = {0, 1, 1000, 1u << 20, UINT64_MAX};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        fc__profile_time(p, 0, sizes[i]);
        fc__profile_time(p, 1, sizes[i]);
    }
    for (uint32_t kind = 0; kind < 4; kind++)
        for (uint32_t k = 1; k < 5; k++)
            for (uint32_t i = 0; i < k; i++)
                fc__profile_alpha(p, kind, k, i);
    FILE *f = fopen("/dev/null", "w");
    if (f != NULL) {
        fc__profile_write(f, p);
        fclose(f);
    }
    fc__profile_free(p);
    return 0;
}
