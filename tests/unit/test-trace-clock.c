/* tests/unit/test-trace-clock.c: clock alignment against hand calculations, peer mapping through
 * sub- and inter-communicators, and the merge of ranks by aligned time. */
#include "scratch-trace.h"

static void write_rank(const char *dir, uint32_t rank, const fc_clock *k, size_t nk, const fc_event *ev, size_t n)
{
    char path[4200];
    fc_writer *w;
    static const uint32_t world[] = {0, 1, 2, 3}, sub[] = {3, 1}, remote[] = {0, 2};
    static const fc_comm comms[] = {{0, 0, 4, 0, world, NULL, 0},
                                    {2, 0, 2, 0, sub, NULL, 0},
                                    {3, FC_COMMF_INTER, 2, 2, sub, remote, 0}};
    rank_path(path, sizeof path, dir, (int)rank);
    assert_int_equal(fc_writer_open(path, rank, 4, 0, 1, 0, &w), 0);
    assert_int_equal(fc_writer_comms(w, comms, 3), 0);
    if (nk)
        assert_int_equal(fc_writer_clock(w, k, nk), 0);
    if (n)
        assert_int_equal(fc_writer_events(w, 0, ev, n), 0);
    assert_int_equal(fc_writer_end(w, 0, 0, 0, 0), 0);
    assert_int_equal(fc_writer_close(w), 0);
}

static void test_align(void **state)
{
    (void)state;
    char dir[4096];
    make_scratch(dir, sizeof dir);
    /* Rank 1: +5000 ns at local 1 ms, +7000 ns at local 1.001 s: the offset grows by 2 us per s. */
    const fc_clock k1[] = {{FC_CLOCK_INIT, 1000000, 5000, 30, 8, 60}, {FC_CLOCK_FINALIZE, 1001000000, 7000, 50, 8, 100}};
    /* Rank 2: INIT only, measured twice; the second is tighter and wins. */
    const fc_clock k2[] = {{FC_CLOCK_INIT, 10, -100, 90, 1, 180}, {FC_CLOCK_INIT, 20, -300, 10, 1, 20}};
    /* Rank 3: FINALIZE only. */
    const fc_clock k3[] = {{FC_CLOCK_FINALIZE, 10, 40, 5, 1, 10}};
    fc_event e0[] = {ev_make(FC_EV_MPI_Init, 2000, 3000, FC_PEER_NONE, 0, 0, 0, 0)};
    fc_event e1[] = {ev_make(FC_EV_MPI_Init, 1000, 2000, FC_PEER_NONE, 0, 0, 0, 0)};
    write_rank(dir, 0, NULL, 0, e0, 1);
    write_rank(dir, 1, k1, 2, e1, 1);
    write_rank(dir, 2, k2, 2, NULL, 0);
    write_rank(dir, 3, k3, 1, NULL, 0);
    fc_trace *t;
    assert_int_equal(fc_trace_open(dir, &t), 0);
    const fc_rank *r0 = fc_trace_rank(t, 0), *r1 = fc_trace_rank(t, 1), *r2 = fc_trace_rank(t, 2),
                  *r3 = fc_trace_rank(t, 3);
    /* No measurement: identity. */
    assert_int_equal(fc_rank_align(r0, 123456), 123456);
    /* At the measurements themselves. */
    assert_int_equal(fc_rank_align(r1, 1000000), 1005000);
    assert_int_equal(fc_rank_align(r1, 1001000000), 1001007000);
    /* Half way: 5000 + 2000 * 0.5 = 6000. */
    assert_int_equal(fc_rank_align(r1, 501000000), 501006000);
    /* A quarter: 5000 + 2000 * 0.25 = 5500. */
    assert_int_equal(fc_rank_align(r1, 251000000), 251005500);
    /* Beyond FINALIZE the line goes on: one more second adds 2000 ns. */
    assert_int_equal(fc_rank_align(r1, 2001000000), 2001009000);
    /* Before INIT: 1000 - 1000000 = -999000 ns, times 2000/1e9 = -1.998 ns, truncated to -1. */
    assert_int_equal(fc_rank_align(r1, 1000), 1000 + 5000 - 1);
    /* INIT only, least uncertain measurement: -300. */
    assert_int_equal(fc_rank_align(r2, 50), -250);
    assert_int_equal(fc_rank_clock_uncertainty(r2), 10);
    /* FINALIZE only: its constant offset. */
    assert_int_equal(fc_rank_align(r3, 1000), 1040);
    assert_int_equal(fc_rank_clock_uncertainty(r1), 50);
    /* The origin is rank 0's first event (2000), even though rank 1's starts earlier (1000 + 4999). */
    assert_int_equal(fc_trace_origin(t), 2000);
    fc_trace_close(t);
    rm_scratch(dir);
}

static void test_peer_mapping(void **state)
{
    (void)state;
    char dir[4096];
    size_t n = 0, got;
    fc_event ev[8];
    make_scratch(dir, sizeof dir);
    ev[n++] = ev_make(FC_EV_MPI_Send, 10, 20, 0, 1, 2, 4, 0);                 /* comm 2 rank 0 = world 3 */
    ev[n++] = ev_make(FC_EV_MPI_Send, 30, 40, 1, 1, 3, 4, 0);                 /* inter: remote 1 = world 2 */
    ev[n++] = ev_make(FC_EV_MPI_Irecv, 50, 60, FC_PEER_ANY, FC_TAG_ANY, 2, 4, 0x500);
    ev[n] = ev_make(FC_EV_COMPLETE, 70, 70, 1, 9, 0, 4, 0x500);               /* status source 1 of comm 2 */
    ev[n++].flags = FC_EVF_STATUS | FC_EVF_ANY_SOURCE | FC_EVF_ANY_TAG;
    ev[n++] = ev_make(FC_EV_MPI_Bcast, 80, 90, 2, 0, 0, 4, 0);                /* root 2 of world */
    ev[n++] = ev_make(FC_EV_MPI_Send, 100, 110, FC_PEER_NULL, 1, 2, 0, 0);
    ev[n++] = ev_make(FC_EV_MPI_Send, 120, 130, 5, 1, 2, 0, 0);               /* outside comm 2 */
    ev[n++] = ev_make(FC_EV_MPI_Send, 140, 150, 0, 1, 1, 0, 0);               /* comm 1 (self), undefined */
    write_rank(dir, 1, NULL, 0, ev, n);
    fc_record *rec = read_all(dir, 0, &got);
    assert_int_equal(got, n);
    assert_int_equal(rec[0].peer, 3);
    assert_int_equal(rec[1].peer, 2);
    assert_int_equal(rec[2].peer, FC_PEER_ANY);
    assert_int_equal(rec[3].comm, 2);
    assert_int_equal(rec[3].peer, 1);
    assert_int_equal(rec[3].req, rec[2].req);
    assert_int_equal(rec[4].peer, 2);
    assert_int_equal(rec[5].peer, FC_PEER_NULL);
    assert_true(rec[6].peer == FC_PEER_UNMAPPED);
    assert_int_equal(rec[7].peer, 1);
    free(rec);
    rm_scratch(dir);
}

/* The merge orders ranks by aligned time, which differs from their local order. */
static void test_merge_aligned(void **state)
{
    (void)state;
    char dir[4096];
    make_scratch(dir, sizeof dir);
    const fc_clock k1[] = {{FC_CLOCK_INIT, 0, 1000, 1, 1, 2}}; /* rank 1 runs 1000 ns behind */
    fc_event e0[] = {ev_make(FC_EV_MPI_Send, 500, 510, 1, 0, 0, 1, 0), ev_make(FC_EV_MPI_Send, 1600, 1610, 1, 0, 0, 3, 0)};
    fc_event e1[] = {ev_make(FC_EV_MPI_Recv, 0, 10, 0, 0, 0, 0, 0), ev_make(FC_EV_MPI_Recv, 550, 560, 0, 0, 0, 2, 0),
                     ev_make(FC_EV_MPI_Recv, 700, 710, 0, 0, 0, 4, 0)};
    write_rank(dir, 0, NULL, 0, e0, 2);
    write_rank(dir, 1, k1, 1, e1, 3);
    fc_trace *t;
    fc_merge *m;
    fc_record rec;
    assert_int_equal(fc_trace_open(dir, &t), 0);
    assert_int_equal(fc_merge_open(t, NULL, 0, &m), 0);
    /* Aligned: r0 500, 1600; r1 1000, 1550, 1700. */
    static const int64_t t0[] = {500, 1000, 1550, 1600, 1700};
    static const uint32_t rank[] = {0, 1, 1, 0, 1};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(fc_merge_next(m, &rec), 1);
        assert_int_equal(rec.t0, t0[i]);
        assert_int_equal(rec.rank, rank[i]);
    }
    assert_int_equal(fc_merge_next(m, &rec), 0);
    fc_merge_close(m);
    size_t only = 1;
    assert_int_equal(fc_merge_open(t, &only, 1, &m), 0);
    assert_int_equal(fc_merge_next(m, &rec), 1);
    assert_int_equal(rec.rank, 1);
    fc_merge_close(m);
    fc_trace_close(t);
    rm_scratch(dir);
}

/* The dump line of a record, built here field by field from the documented shape. */
static void test_format(void **state)
{
    (void)state;
    fc_record r;
    char buf[512];
    memset(&r, 0, sizeof r);
    r.ev = ev_make(FC_EV_MPI_Irecv, 100, 1600, FC_PEER_ANY, FC_TAG_ANY, 2, 64, 0x10);
    r.ev.flags = FC_EVF_ANY_SOURCE | FC_EVF_ANY_TAG;
    r.ev.thread = 1;
    r.rank = 3;
    r.t0 = 1500000123;
    r.comm = 2;
    r.peer = FC_PEER_ANY;
    r.req = 7;
    size_t n = fc_record_format(&r, 500000000, "main@ring.c:42", buf, sizeof buf);
    assert_string_equal(buf, "time=1.000000123 rank=3 thread=1 kind=MPI_Irecv peer=any tag=any comm=2 bytes=64 "
                             "req=7 dur=0.000001500 flags=any_source,any_tag site=main@ring.c:42");
    assert_int_equal(n, strlen(buf));
    /* Truncation reports the full length. */
    char small[10];
    assert_int_equal(fc_record_format(&r, 500000000, NULL, small, sizeof small), n - strlen(" site=main@ring.c:42"));
    assert_string_equal(small, "time=1.00");
    /* Negative time, a communicator constructor returning MPI_COMM_NULL. */
    memset(&r, 0, sizeof r);
    r.ev = ev_make(FC_EV_MPI_Comm_split, 0, 2, FC_PEER_NONE, 0, 0, 0, 0);
    r.t0 = 5;
    fc_record_format(&r, 1000000005, NULL, buf, sizeof buf);
    assert_string_equal(buf, "time=-1.000000000 rank=0 thread=0 kind=MPI_Comm_split comm=0 newcomm=null dur=0.000000002");
    assert_int_equal(fc_event_kind_from_name("COMPLETE"), FC_EV_COMPLETE);
    assert_int_equal(fc_event_kind_from_name("MPI_Nothing"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_align),
        cmocka_unit_test(test_peer_mapping),
        cmocka_unit_test(test_merge_aligned),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
