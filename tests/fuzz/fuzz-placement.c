/* tests/fuzz/fuzz-placement.c: the remap inputs: a Hydra machinefile as `flowcut remap
 * --placement` reads it (remap/placement.c), against a placement of 8 ranks on the nodes n0..n3,
 * and the same text as a list of launcher format names (fc__launcher_parse). */
#include <stdlib.h>
#include <string.h>
#include "remap/remap.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char n0[] = "n0", n1[] = "n1", n2[] = "n2", n3[] = "n3";
    static char *names[] = {n0, n1, n2, n3};
    fc__remap rm;
    memset(&rm, 0, sizeof rm);
    rm.nranks = 8;
    rm.nodes = 4;
    rm.slots = 2;
    rm.node_names = names;
    rm.nnames = 4;
    const char *path = fz_file("machinefile", data, size);
    if (path != NULL) {
        uint32_t *pl = fc__placement_read_hydra(path, &rm);
        for (uint32_t r = 0; pl != NULL && r < rm.nranks; r++)
            if (pl[r] >= rm.nnames)
                abort(); /* a node index the caller would index names[] with */
        free(pl);
    }
    char *s = malloc(size + 1);
    if (s != NULL) {
        memcpy(s, data, size);
        s[size] = '\0';
        fc__launcher_parse(s);
        free(s);
    }
    return 0;
}
