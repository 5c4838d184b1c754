/* tests/unit/scratch-trace.h: helpers shared by the analyzer unit tests: a scratch trace
 * directory and shorthands for writing events with the writer. */
#ifndef SCRATCH_TRACE_H
#define SCRATCH_TRACE_H

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

/* One rank of a hand-made trace: its node name, clock measurements (nclk of them, maybe none)
 * and events. */
typedef struct trank {
    const char *node;
    fc_clock clk[2];
    size_t nclk;
    fc_event ev[64];
    size_t n;
} trank;

/* Writes ranks rk[0 .. n) as rank files in dir: every rank in MPI_COMM_WORLD, its node as node
 * and host name, an MPI_Init on [0, init_t1) local ns first, then its events and clock blocks. */
static inline void write_world(const char *dir, const trank *rk, uint32_t n, uint64_t init_t1)
{
    uint32_t members[16];
    assert_true(n <= 16);
    for (uint32_t i = 0; i < n; i++)
        members[i] = i;
    for (uint32_t i = 0; i < n; i++) {
        char path[4200];
        fc_writer *w;
        fc_rank_info info;
        fc_comm world = {.id = 0, .local_size = n, .local = members, .ordinal = 0};
        fc_event all[65];
        memset(&info, 0, sizeof info);
        info.present = (1u << FC_RK_RANK) | (1u << FC_RK_SIZE) | (1u << FC_RK_NODE) | (1u << FC_RK_HOST);
        info.rank = i;
        info.size = n;
        info.node = info.host = rk[i].node;
        all[0] = ev_make(FC_EV_MPI_Init, 0, init_t1, FC_PEER_NONE, 0, 0, 0, 0);
        memcpy(all + 1, rk[i].ev, rk[i].n * sizeof *all);
        rank_path(path, sizeof path, dir, (int)i);
        assert_int_equal(fc_writer_open(path, i, n, 0, 1, 0, &w), 0);
        assert_int_equal(fc_writer_rank(w, &info), 0);
        assert_int_equal(fc_writer_comms(w, &world, 1), 0);
        if (rk[i].nclk)
            assert_int_equal(fc_writer_clock(w, rk[i].clk, rk[i].nclk), 0);
        assert_int_equal(fc_writer_events(w, 0, all, rk[i].n + 1), 0);
        assert_int_equal(fc_writer_end(w, 0, 0, 0, 0), 0);
        assert_int_equal(fc_writer_close(w), 0);
    }
}

#endif
