/* tests/unit/test-trace-cursor.c: request ids joined from reused raw handles, persistent requests,
 * and the time order of a rank's threads. Expected ids follow the rule of reader.h by hand. */
#include "scratch-trace.h"
#include "trace/cursor.h"

typedef struct step {
    unsigned kind;
    uint64_t obj, flags;
    uint64_t want; /* expected request id, worked out by hand */
} step;

static void test_request_ids(void **state)
{
    (void)state;
    static const step steps[] = {
        {FC_EV_MPI_Isend, 0x10, 0, 1},
        {FC_EV_MPI_Irecv, 0x20, 0, 2},
        {FC_EV_MPI_Wait, 0x10, 0, 1},
        {FC_EV_COMPLETE, 0x10, 0, 1},             /* retires 0x10 */
        {FC_EV_MPI_Isend, 0x10, 0, 3},            /* MPI reused the handle: a new request */
        {FC_EV_COMPLETE, 0x20, 0, 2},
        {FC_EV_COMPLETE, 0x10, 0, 3},
        {FC_EV_MPI_Send_init, 0x30, 0, 4},
        {FC_EV_MPI_Start, 0x30, 0, 4},
        {FC_EV_COMPLETE, 0x30, 0, 4},             /* persistent: keeps its id */
        {FC_EV_MPI_Startall, 0, 0, 0},
        {FC_EV_START, 0x30, 0, 4},
        {FC_EV_COMPLETE, 0x30, 0, 4},
        {FC_EV_MPI_Request_free, 0x30, 0, 4},     /* retires 0x30 */
        {FC_EV_MPI_Recv_init, 0x30, 0, 5},
        {FC_EV_COMPLETE, 0x30, FC_EVF_NULL, 0},   /* an inactive request: none */
        {FC_EV_COMPLETE, 0, FC_EVF_STATUS, 0},    /* receive half of a Sendrecv */
        {FC_EV_MPI_Start, 0x30, 0, 5},
        {FC_EV_MPI_Wait, 0x99, 0, 6},             /* never posted while tracing: fresh, bound */
        {FC_EV_COMPLETE, 0x99, 0, 6},
        {FC_EV_COMPLETE, 0x77, 0, 7},             /* unknown and not bound */
        {FC_EV_COMPLETE, 0x77, 0, 8},
        {FC_EV_MPI_Ibarrier, 0x10, 0, 9},
        {FC_EV_MPI_Cancel, 0x10, 0, 9},
        {FC_EV_COMPLETE, 0x10, FC_EVF_CANCELLED, 9},
        {FC_EV_MPI_Comm_dup, 3, 0, 0},            /* obj is a new communicator, not a request */
        {FC_EV_COMPLETE, 0x30, 0, 5},             /* the persistent Recv_init still holds 0x30 */
        {FC_EV_MPI_Isend, 0x40, 0, 10},           /* one handle for several live sends (MPICH) */
        {FC_EV_MPI_Isend, 0x40, 0, 11},
        {FC_EV_MPI_Isend, 0x40, 0, 12},
        {FC_EV_MPI_Waitall, 0, 0, 0},
        {FC_EV_COMPLETE, 0x40, 0, 10},            /* completions in posting order */
        {FC_EV_COMPLETE, 0x40, 0, 11},
        {FC_EV_COMPLETE, 0x40, 0, 12},
        {FC_EV_COMPLETE, 0x40, 0, 13},            /* the queue is empty again: fresh */
    };
    size_t n = sizeof steps / sizeof *steps, got;
    fc_event ev[64];
    char dir[4096], path[4200];
    fc_writer *w;
    for (size_t i = 0; i < n; i++) {
        ev[i] = ev_make(steps[i].kind, 1000 + 10 * i, 1005 + 10 * i, 1, 5, 0, 8, steps[i].obj);
        ev[i].flags = steps[i].flags;
    }
    make_scratch(dir, sizeof dir);
    rank_path(path, sizeof path, dir, 0);
    assert_int_equal(fc_writer_open(path, 0, 2, 0, 1, 0, &w), 0);
    /* Split across blocks: the ids carry over from one chunk to the next. */
    assert_int_equal(fc_writer_events(w, 0, ev, 10), 0);
    assert_int_equal(fc_writer_events(w, 0, ev + 10, n - 10), 0);
    assert_int_equal(fc_writer_end(w, 0, 0, 0, 0), 0);
    assert_int_equal(fc_writer_close(w), 0);
    fc_record *rec = read_all(dir, 0, &got);
    assert_int_equal(got, n);
    for (size_t i = 0; i < n; i++) {
        if (rec[i].req != steps[i].want)
            fail_msg("step %zu (%s obj 0x%llx): req %llu, expected %llu", i, fc_event_kind_name(steps[i].kind),
                     (unsigned long long)steps[i].obj, (unsigned long long)rec[i].req,
                     (unsigned long long)steps[i].want);
    }
    free(rec);
    rm_scratch(dir);
}

/* Many handles, reused in turn, so that the handle table grows and deletes with collisions. */
static void test_many_handles(void **state)
{
    (void)state;
    enum { H = 300, ROUNDS = 3 };
    size_t n = 0, got;
    fc_event *ev = calloc(2 * H * ROUNDS, sizeof *ev);
    char dir[4096], path[4200];
    fc_writer *w;
    assert_non_null(ev);
    for (int r = 0; r < ROUNDS; r++) {
        for (int h = 0; h < H; h++, n++)
            ev[n] = ev_make(FC_EV_MPI_Isend, n, n, 0, 0, 0, 0, (uint64_t)(h + 1) * 64);
        for (int h = H - 1; h >= 0; h--, n++)
            ev[n] = ev_make(FC_EV_COMPLETE, n, n, 0, 0, 0, 0, (uint64_t)(h + 1) * 64);
    }
    make_scratch(dir, sizeof dir);
    rank_path(path, sizeof path, dir, 0);
    assert_int_equal(fc_writer_open(path, 0, 1, 0, 1, 0, &w), 0);
    assert_int_equal(fc_writer_events(w, 0, ev, n), 0);
    assert_int_equal(fc_writer_close(w), 0);
    fc_record *rec = read_all(dir, 0, &got);
    assert_int_equal(got, n);
    /* Round r posts handle h as id r*H + h + 1; its completion, H - 1 - h places later in the
     * completion run, carries the same id. */
    for (int r = 0; r < ROUNDS; r++)
        for (int h = 0; h < H; h++) {
            size_t post = (size_t)r * 2 * H + (size_t)h, done = (size_t)r * 2 * H + H + (size_t)(H - 1 - h);
            assert_int_equal(rec[post].req, (uint64_t)r * H + (uint64_t)h + 1);
            assert_int_equal(rec[done].req, rec[post].req);
        }
    free(rec);
    free(ev);
    rm_scratch(dir);
}

/* A long queue on one handle, drained while it is refilled (the queue compacts as it goes). */
static void test_long_queue(void **state)
{
    (void)state;
    enum { N = 200 };
    size_t n = 0, got;
    fc_event ev[3 * N];
    char dir[4096], path[4200];
    fc_writer *w;
    /* N posts, then alternately one completion and one post, then the remaining completions. */
    for (int i = 0; i < N; i++, n++)
        ev[n] = ev_make(FC_EV_MPI_Isend, n, n, 0, 0, 0, 0, 0x40);
    for (int i = 0; i < N / 2; i++) {
        ev[n] = ev_make(FC_EV_COMPLETE, n, n, 0, 0, 0, 0, 0x40);
        n++;
        ev[n] = ev_make(FC_EV_MPI_Isend, n, n, 0, 0, 0, 0, 0x40);
        n++;
    }
    while (n < 3 * N) {
        ev[n] = ev_make(FC_EV_COMPLETE, n, n, 0, 0, 0, 0, 0x40);
        n++;
    }
    make_scratch(dir, sizeof dir);
    rank_path(path, sizeof path, dir, 0);
    assert_int_equal(fc_writer_open(path, 0, 1, 0, 1, 0, &w), 0);
    assert_int_equal(fc_writer_events(w, 0, ev, n), 0);
    assert_int_equal(fc_writer_close(w), 0);
    fc_record *rec = read_all(dir, 0, &got);
    assert_int_equal(got, n);
    /* Posts are numbered 1, 2, ... in order; completions take them first in, first out. */
    uint64_t next_post = 1, next_done = 1;
    for (size_t i = 0; i < n; i++) {
        if (rec[i].ev.kind == FC_EV_MPI_Isend)
            assert_int_equal(rec[i].req, next_post++);
        else
            assert_int_equal(rec[i].req, next_done++);
    }
    assert_int_equal(next_post, next_done);
    free(rec);
    rm_scratch(dir);
}

/* Writes rank file rank of the trace in dir: t1[0 .. n1) on thread 1, then t0[0 .. n0) on thread 0
 * (each a block of its own, thread 1's first: out of time order), without an END. */
static void write_threads(const char *dir, uint32_t rank, const fc_event *t0, size_t n0, const fc_event *t1,
                          size_t n1)
{
    char path[4200];
    fc_writer *w;
    rank_path(path, sizeof path, dir, rank);
    assert_int_equal(fc_writer_open(path, rank, 2, 0, 1, 0, &w), 0);
    assert_int_equal(fc_writer_events(w, 1, t1, n1), 0);
    assert_int_equal(fc_writer_events(w, 0, t0, n0), 0);
    assert_int_equal(fc_writer_close(w), 0);
}

/* Two threads whose chunks are written out of time order come back merged by time. */
static void test_threads_merge(void **state)
{
    (void)state;
    char dir[4096];
    size_t got;
    fc_event a[2] = {ev_make(FC_EV_MPI_Send, 100, 110, 1, 0, 0, 1, 0), ev_make(FC_EV_MPI_Send, 300, 310, 1, 0, 0, 3, 0)};
    fc_event b[3] = {ev_make(FC_EV_MPI_Recv, 200, 210, 1, 0, 0, 2, 0), ev_make(FC_EV_MPI_Recv, 300, 410, 1, 0, 0, 4, 0),
                     ev_make(FC_EV_MPI_Recv, 500, 510, 1, 0, 0, 5, 0)};
    make_scratch(dir, sizeof dir);
    write_threads(dir, 0, a, 2, b, 3);
    fc_record *rec = read_all(dir, 0, &got);
    assert_int_equal(got, 5);
    /* By t0, and thread 0 before thread 1 at the tie at 300. */
    static const uint64_t bytes[] = {1, 2, 3, 4, 5};
    static const uint32_t thread[] = {0, 1, 0, 1, 1};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(rec[i].ev.bytes, bytes[i]);
        assert_int_equal(rec[i].ev.thread, thread[i]);
    }
    free(rec);
    fc_trace *t;
    assert_int_equal(fc_trace_open(dir, &t), 0);
    assert_int_equal(fc_trace_rank(t, 0)->threads, 2);
    assert_int_equal(fc_trace_rank(t, 0)->first_t0, 100);
    assert_true(fc_trace_rank(t, 0)->partial); /* no END */
    fc_trace_close(t);
    rm_scratch(dir);
}

/* Asserts that two records hold the same values, field by field (a record has padding, which a
 * comparison of its bytes would read). */
_Static_assert(sizeof(fc_event) == 2 * sizeof(uint32_t) + 10 * sizeof(uint64_t), "fc_event has no padding");
static void same_record(const fc_record *a, const fc_record *b)
{
    assert_memory_equal(&a->ev, &b->ev, sizeof a->ev);
    assert_int_equal(a->rank, b->rank);
    assert_int_equal(a->t0, b->t0);
    assert_int_equal(a->t1, b->t1);
    assert_int_equal(a->comm, b->comm);
    assert_int_equal(a->peer, b->peer);
    assert_int_equal(a->req, b->req);
}

/* The batch reader (fc__cursor_fill, fc__cursor_peek) against fc_cursor_next, the second method:
 * over a rank with two threads and one with a single thread and a constant clock, for batches of
 * 1, 2 and 7 records and limits at, between and past the records' times, it must give the same
 * records in the same order, stop before the first one past its limit, and peek at that one. */
static void test_fill_batches(void **state)
{
    (void)state;
    char dir[4096], path[4200];
    fc_writer *w;
    fc_event a[3] = {ev_make(FC_EV_MPI_Isend, 100, 110, 1, 0, 0, 1, 0x10), ev_make(FC_EV_MPI_Send, 300, 310, 1, 0, 0, 3, 0),
                     ev_make(FC_EV_COMPLETE, 700, 700, 1, 0, 0, 6, 0x10)};
    fc_event b[3] = {ev_make(FC_EV_MPI_Recv, 200, 210, 1, 0, 0, 2, 0), ev_make(FC_EV_MPI_Recv, 300, 410, 1, 0, 0, 4, 0),
                     ev_make(FC_EV_MPI_Recv, 500, 510, 1, 0, 0, 5, 0)};
    make_scratch(dir, sizeof dir);
    write_threads(dir, 0, a, 3, b, 3);
    rank_path(path, sizeof path, dir, 1);
    assert_int_equal(fc_writer_open(path, 1, 2, 0, 1, 0, &w), 0);
    assert_int_equal(fc_writer_events(w, 0, a, 3), 0);
    assert_int_equal(fc_writer_events(w, 0, b, 1), 0); /* a second block of the same thread */
    assert_int_equal(fc_writer_close(w), 0);
    for (size_t f = 0; f < 2; f++) {
        size_t n;
        fc_record *want = read_all(dir, f, &n);
        assert_int_equal(n, f == 0 ? 6 : 4);
        static const size_t max[] = {1, 2, 7};
        static const int64_t lim[] = {0, 100, 250, 300, 699, INT64_MAX};
        for (size_t m = 0; m < 3; m++) {
            for (size_t l = 0; l < 6; l++) {
                fc_trace *t;
                fc_cursor *c;
                fc_record got[7];
                size_t at = 0, k;
                assert_int_equal(fc_trace_open(dir, &t), 0);
                assert_int_equal(fc_cursor_open(t, f, &c), 0);
                /* Every record up to the limit, a batch at a time, then the first one past it. */
                int rc;
                do {
                    rc = fc__cursor_fill(c, lim[l], got, max[m], &k);
                    assert_true(rc >= 0 && k <= max[m]);
                    for (size_t j = 0; j < k; j++, at++) {
                        assert_true(at < n && want[at].t0 <= lim[l]);
                        same_record(&got[j], &want[at]);
                    }
                } while (rc == 1 && k == max[m]);
                int64_t t0 = -1;
                if (at < n) {
                    assert_int_equal(rc, 1);
                    assert_true(want[at].t0 > lim[l]);
                    assert_int_equal(fc__cursor_peek(c, &t0), 1);
                    assert_int_equal(t0, want[at].t0);
                    /* The rest, past any limit. */
                    do {
                        rc = fc__cursor_fill(c, INT64_MAX, got, max[m], &k);
                        for (size_t j = 0; j < k; j++, at++)
                            same_record(&got[j], &want[at]);
                    } while (rc == 1);
                }
                assert_int_equal(rc, 0);
                assert_int_equal(at, n);
                assert_int_equal(fc__cursor_peek(c, &t0), 0);
                fc_cursor_close(c);
                fc_trace_close(t);
            }
        }
        free(want);
    }
    rm_scratch(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_ids),
        cmocka_unit_test(test_many_handles),
        cmocka_unit_test(test_long_queue),
        cmocka_unit_test(test_threads_merge),
        cmocka_unit_test(test_fill_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
