/* tests/unit/test-analyzer-util.h: helpers shared by the analyzer unit tests: a scratch trace
 * directory and shorthands for writing events with the writer. */
#ifndef TEST_ANALYZER_UTIL_H
#define TEST_ANALYZER_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <flowcut/reader.h>
#include <flowcut/writer.h>

/* Makes a fresh scratch directory (removed by rm_scratch) and returns its path in dir. */
static inline void make_scratch(char *dir, size_t n)
{
    snprintf(dir, n, "%s/fc-unit-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
}

static inline void rm_scratch(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Path of rank r's file inside dir. */
static inline void rank_path(char *out, size_t n, const char *dir, int r)
{
    char name[32];
    snprintf(name, sizeof name, FC_TRACE_FILE_FMT, r);
    snprintf(out, n, "%s/%s", dir, name);
}

/* An event with the fields most tests set; the rest are zero. */
static inline fc_event ev_make(unsigned kind, uint64_t t0, uint64_t t1, int64_t peer, int64_t tag,
                               uint64_t comm, uint64_t bytes, uint64_t obj)
{
    fc_event e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    e.t0 = t0;
    e.t1 = t1;
    e.peer = peer;
    e.tag = tag;
    e.comm = comm;
    e.bytes = bytes;
    e.obj = obj;
    return e;
}

/* Reads every record of rank file i of the trace at path into a malloc'd array. */
static inline fc_record *read_all(const char *path, size_t i, size_t *n)
{
    fc_trace *t;
    fc_cursor *c;
    fc_record *v = NULL;
    size_t cap = 0;
    int rc;
    *n = 0;
    assert_int_equal(fc_trace_open(path, &t), 0);
    assert_int_equal(fc_cursor_open(t, i, &c), 0);
    for (;;) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(v, cap * sizeof *v);
            assert_non_null(v);
        }
        rc = fc_cursor_next(c, &v[*n]);
        assert_true(rc >= 0);
        if (rc == 0)
            break;
        (*n)++;
    }
    fc_cursor_close(c);
    fc_trace_close(t);
    return v;
}

#endif
