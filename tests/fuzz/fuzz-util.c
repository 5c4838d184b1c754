/* tests/fuzz/fuzz-util.c: the scratch directory of the fuzz targets (fuzz.h). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz.h"

static char dir[4096];
static int made;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    if (ftw->level > 0 || !made)
        remove(path);
    return 0;
}

static void cleanup(void)
{
    if (made) {
        made = 0;
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
}

const char *fz_dir(void)
{
    if (made)
        return dir;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/flowcut-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
        return NULL;
    made = 1;
    atexit(cleanup);
    return dir;
}

void fz_clear(void)
{
    if (made)
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fz_file(const char *name, const void *data, size_t n)
{
    static char path[8192];
    const char *d = fz_dir();
    if (d == NULL)
        return NULL;
    snprintf(path, sizeof path, "%s/%s", d, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return NULL;
    size_t w = n ? fwrite(data, 1, n, f) : 0;
    if (fclose(f) != 0 || w != n)
        return NULL;
    return path;
}
