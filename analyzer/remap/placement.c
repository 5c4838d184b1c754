/* analyzer/remap/placement.c: reads a placement the user gives: a Hydra machinefile, as
 * `flowcut remap --placement` replays it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "remap/remap.h"

uint32_t *fc__placement_read_hydra(const char *path, const fc__remap *rm)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    uint32_t *slots = NULL, *pl = NULL;
    size_t n = 0, cap = 0, lineno = 0;
    if (f == NULL) {
        fc__err(FC_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *name = strtok(line, " \t\r\n");
        if (name == NULL)
            continue;
        char *colon = strchr(name, ':');
        unsigned long count = 1;
        if (colon) {
            char *end;
            *colon = '\0';
            count = strtoul(colon + 1, &end, 10);
            if (*end || count == 0 || count > 65536) {
                fc__err(FC_EINVAL, "%s: line %zu: bad slot count", path, lineno);
                goto fail;
            }
        }
        uint32_t g = 0;
        while (g < rm->nnames && strcmp(rm->node_names[g], name) != 0)
            g++;
        if (g == rm->nnames) {
            fc__err(FC_EINVAL, "%s: line %zu: node '%s' is not a node of the trace", path, lineno, name);
            goto fail;
        }
        while (count--) {
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                uint32_t *v = realloc(slots, cap * sizeof *v);
                if (v == NULL) {
                    fc__err(FC_ENOMEM, "out of memory");
                    goto fail;
                }
                slots = v;
            }
            slots[n++] = g;
        }
    }
    if (n == 0) {
        fc__err(FC_EINVAL, "%s: no node in the file", path);
        goto fail;
    }
    if ((pl = malloc((rm->nranks + 1) * sizeof *pl)) == NULL) {
        fc__err(FC_ENOMEM, "out of memory");
        goto fail;
    }
    for (uint32_t r = 0; r < rm->nranks; r++)
        pl[r] = slots[r % n];
fail:
    fclose(f);
    free(slots);
    return pl;
}
