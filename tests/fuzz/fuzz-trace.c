/* tests/fuzz/fuzz-trace.c: the trace reader on arbitrary bytes: the input is one rank file (file
 * header, every block kind, event chunks in rows and columns) in a trace directory, opened as the
 * commands open it, then every event read through a cursor and the merge, and printed as
 * `flowcut dump` prints it. Input of the form "FCSPLIT" + u16 length + first file + second file
 * gives a directory of two rank files, so that the reader's handling of ranks side by side
 * (world size, missing and damaged ranks) is fuzzed too; when the second file starts with the
 * rescue file's magic, it is the first one's rescue file instead (a killed rank's buffer). */
#include <stdio.h>
#include <string.h>
#include <flowcut/format.h>
#include <flowcut/reader.h>
#include "fuzz.h"

static void read_all(fc_trace *t)
{
    fc_symbols *syms = NULL;
    fc_symbols_create(t, FC_SYM_NO_ADDR2LINE, &syms);
    int64_t origin = fc_trace_origin(t);
    char line[512];
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        fc_cursor *c = NULL;
        fc_record rec;
        if (fc_cursor_open(t, i, &c) < 0)
            continue;
        while (fc_cursor_next(c, &rec) > 0) {
            const char *site = syms ? fc_symbols_chain(syms, i, rec.ev.site) : NULL;
            fc_record_format(&rec, origin, site, line, sizeof line);
        }
        fc_cursor_close(c);
    }
    fc_merge *m = NULL;
    fc_record rec;
    if (fc_merge_open(t, NULL, 0, &m) == 0) {
        while (fc_merge_next(m, &rec) > 0)
            fc_record_format(&rec, origin, NULL, line, sizeof line);
        fc_merge_close(m);
    }
    fc_symbols_free(syms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = fz_dir();
    if (dir == NULL)
        return 0;
    fz_clear();
    if (size >= 9 && memcmp(data, "FCSPLIT", 7) == 0) {
        size_t a = (size_t)data[7] | (size_t)data[8] << 8;
        data += 9;
        size -= 9;
        if (a > size)
            a = size;
        fz_file("rank-000000.fct", data, a);
        /* A second part that is a rescue file goes beside the first (format.h, RESCUE). */
        if (size - a >= 8 && memcmp(data + a, FC_RESCUE_MAGIC, 8) == 0)
            fz_file("rank-000000.fcr", data + a, size - a);
        else
            fz_file("rank-000001.fct", data + a, size - a);
    } else {
        fz_file("rank-000000.fct", data, size);
    }
    fc_trace *t = NULL;
    if (fc_trace_open(dir, &t) == 0)
        read_all(t);
    fc_trace_close(t);
    return 0;
}
