/* tests/fuzz/fuzz-otf2.c: OTF2 import (otf2/import*.c through fc_trace_open) on damaged archives.
 * The input is an archive packed as a sequence of files, each
 *   u8 name length, name (letters, digits, '.', '_', '-' and '/', no "..", not starting with '/'),
 *   u32 little-endian length, that many bytes,
 * unpacked into the scratch directory; the anchor file is traces.otf2. pack-otf2.py packs real
 * archives (the tests' and the exporter's) into seeds in this form. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <flowcut/reader.h>
#include "analysis/analysis.h"
#include "otf2/common.h"
#include "fuzz.h"

static int name_ok(const char *s)
{
    if (s[0] == '\0' || s[0] == '/' || strstr(s, "..") != NULL)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-' || *p == '/'))
            return 0;
    return 1;
}

/* Creates the directories of a relative file name inside the scratch directory. */
static void make_parents(const char *name)
{
    char rel[300], path[8192];
    snprintf(rel, sizeof rel, "%s", name);
    for (char *p = strchr(rel, '/'); p != NULL; p = strchr(p + 1, '/')) {
        *p = '\0';
        snprintf(path, sizeof path, "%s/%s", fz_dir(), rel);
        mkdir(path, 0700);
        *p = '/';
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int init;
    if (!init) {
        fc__analysis_init();
        /* In this process: a crash of OTF2's reader must reach libFuzzer, and so must the
         * coverage of the library's callers. */
        fc__otf2_isolate = 0;
        init = 1;
    }
    if (fz_dir() == NULL)
        return 0;
    fz_clear();
    size_t off = 0;
    int files = 0;
    while (off < size && files < 64) {
        char name[256];
        size_t nl = data[off++];
        if (nl == 0 || off + nl + 4 > size)
            break;
        memcpy(name, data + off, nl);
        name[nl] = '\0';
        off += nl;
        size_t len = (size_t)data[off] | (size_t)data[off + 1] << 8 | (size_t)data[off + 2] << 16 |
                     (size_t)data[off + 3] << 24;
        off += 4;
        if (len > size - off)
            len = size - off;
        if (!name_ok(name))
            break;
        make_parents(name);
        fz_file(name, data + off, len);
        off += len;
        files++;
    }
    char anchor[8192];
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", fz_dir());
    fc_trace *t = NULL;
    if (fc_trace_open(anchor, &t) == 0) {
        for (size_t i = 0; i < fc_trace_nranks(t); i++) {
            fc_cursor *c = NULL;
            fc_record rec;
            if (fc_cursor_open(t, i, &c) < 0)
                continue;
            while (fc_cursor_next(c, &rec) > 0)
                ;
            fc_cursor_close(c);
        }
    }
    fc_trace_close(t);
    return 0;
}
