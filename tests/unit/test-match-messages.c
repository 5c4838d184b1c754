/* tests/unit/test-match-messages.c: message matching on hand-built traces; every expected flow
 * time, count and wait state below is worked out by hand from the events written. */
#include <math.h>
#include "scratch-trace.h"
#include "match/match.h"
#include "util/internal.h" /* fc__comm_key; libtrace has an internal.h too */

#define MS 1000000ull  /* ns in a millisecond */
#define US 1000ull     /* ns in a microsecond */
#define EPS 1e-12      /* seconds: the aligned times are whole ns, so far below any difference */

/* Appends an event to a rank of the test trace (times in ns of the rank's clock). */
static void add(trank *r, unsigned kind, uint64_t t0, uint64_t t1, int64_t peer, int64_t tag, uint64_t bytes,
                uint64_t obj, uint64_t flags, uint64_t site)
{
    assert_true(r->n < 64);
    fc_event e = ev_make(kind, t0, t1, peer, tag, 0, bytes, obj);
    e.flags = flags;
    e.site = site;
    r->ev[r->n++] = e;
}

/* A receive's completion with a status (actual source, tag and bytes), at the exit time t. */
static void done(trank *r, uint64_t t, uint64_t obj, int64_t src, int64_t tag, uint64_t bytes, uint64_t flags)
{
    add(r, FC_EV_COMPLETE, t, t, src, tag, bytes, obj, FC_EVF_STATUS | flags, 0);
}

/* Clock offsets: offset_init at local 0 and offset_fin at local 1 s. */
static void clock_of(trank *r, int64_t offset_init, int64_t offset_fin)
{
    memset(r->clk, 0, sizeof r->clk);
    r->clk[0].phase = FC_CLOCK_INIT;
    r->clk[0].offset_ns = offset_init;
    r->clk[0].samples = 1;
    r->clk[1].phase = FC_CLOCK_FINALIZE;
    r->clk[1].local_ns = 1000 * MS;
    r->clk[1].offset_ns = offset_fin;
    r->clk[1].samples = 1;
    r->nclk = 2;
}

/* Writes n ranks (all in MPI_COMM_WORLD, an MPI_Init at local time 0 first) into a fresh scratch
 * directory, and matches the trace. The origin is rank 0's Init, local and aligned time 0. */
static fc__match *run(char *dir, size_t dirlen, trank *rk, uint32_t n, uint64_t eager)
{
    make_scratch(dir, dirlen);
    write_world(dir, rk, n, 10);
    fc_trace *t;
    fc__match *m;
    assert_int_equal(fc_trace_open(dir, &t), 0);
    assert_int_equal(fc__match_trace(t, eager, &m), 0);
    fc_trace_close(t);
    rm_scratch(dir);
    return m;
}

/* The flow from src to dst whose receive was posted at recv_post seconds. */
static const fc__flow *find(const fc__match *m, uint32_t src, uint32_t dst, double recv_post)
{
    for (size_t i = 0; i < m->nflows; i++)
        if (m->flows[i].src_rank == src && m->flows[i].dst_rank == dst && fabs(m->flows[i].recv_post - recv_post) < EPS)
            return &m->flows[i];
    fail_msg("no flow %u -> %u posted at %.9f", src, dst, recv_post);
    return NULL;
}

static const fc__wait_site *site_of(const fc__match *m, uint32_t rank, uint64_t site)
{
    for (size_t i = 0; i < m->nsites; i++)
        if (m->sites[i].rank == rank && m->sites[i].site == site)
            return &m->sites[i];
    fail_msg("no wait states at rank %u site %llu", rank, (unsigned long long)site);
    return NULL;
}

static void no_loose_ends(const fc__match *m)
{
    assert_int_equal(m->unmatched_sends, 0);
    assert_int_equal(m->unmatched_recvs, 0);
    assert_int_equal(m->clock_violations, 0);
    for (size_t i = 0; i < m->nflows; i++)
        assert_int_equal(m->flows[i].id, i);
}

/* Rank 1's clock runs 5 ms behind at init and 5.002 ms at 1 s: aligned = local + 5 ms + 2 us x s. */
static void test_simple(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[2] = {{.node = "nodeA"}, {.node = "nodeB"}};
    clock_of(&rk[1], 5 * MS, 5 * MS + 2 * US);
    add(&rk[0], FC_EV_MPI_Send, 300 * MS, 300 * MS + 10 * US, 1, 7, 1000, 0, 0, 2);
    add(&rk[1], FC_EV_MPI_Recv, 250 * MS, 500 * MS, 0, 7, 1000, 0, 0, 3);
    fc__match *m = run(dir, sizeof dir, rk, 2, 0);
    no_loose_ends(m);
    assert_int_equal(m->eager_threshold, FC_MATCH_EAGER_DEFAULT);
    assert_int_equal(m->nnodes, 2);
    assert_string_equal(m->nodes[0], "nodeA");
    assert_string_equal(m->nodes[1], "nodeB");
    assert_int_equal(m->nflows, 1);
    assert_int_equal(m->ninter, 1);
    const fc__flow *f = &m->flows[0];
    assert_int_equal(f->src_rank, 0);
    assert_int_equal(f->dst_rank, 1);
    assert_int_equal(f->src_node, 0);
    assert_int_equal(f->dst_node, 1);
    assert_int_equal(f->bytes, 1000);
    assert_int_equal(f->tag, 7);
    assert_false(f->intra);
    assert_false(f->rendezvous);
    assert_int_equal(f->send_kind, FC_EV_MPI_Send);
    assert_int_equal(f->recv_kind, FC_EV_MPI_Recv);
    assert_int_equal(f->send_site, 2);
    assert_int_equal(f->recv_site, 3);
    /* Receive: local 0.25 s -> 0.25 + 0.005 + 0.0000005; local 0.5 s -> 0.5 + 0.005 + 0.000001. */
    assert_float_equal(f->send_start, 0.3, EPS);
    assert_float_equal(f->send_end, 0.30001, EPS);
    assert_float_equal(f->recv_post, 0.2550005, EPS);
    assert_float_equal(f->recv_end, 0.505001, EPS);
    assert_float_equal(f->start, 0.3, EPS);
    assert_float_equal(f->end, 0.505001, EPS);
    assert_float_equal(f->observed, 0.205001, EPS);
    /* Late Sender: the receive waited from 0.2550005 until the send began at 0.3. */
    assert_float_equal(m->late_sender[1], 0.0449995, EPS);
    assert_float_equal(m->late_sender[0], 0, EPS);
    assert_float_equal(site_of(m, 1, 3)->late_sender, 0.0449995, EPS);
    assert_int_equal(site_of(m, 1, 3)->n_late_sender, 1);
    assert_float_equal(m->late_receiver[0], 0, EPS); /* eager: the send never waits */
    fc__match_free(m);
}

/* ANY_SOURCE receives resolved by their status, completed by a Waitall in the other order, and by
 * two Waitany calls, again not in posting order. Times in microseconds. */
static void test_wildcards(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[3] = {{.node = "a"}, {.node = "b"}, {.node = "c"}};
    add(&rk[0], FC_EV_MPI_Irecv, 100 * US, 101 * US, FC_PEER_ANY, 5, 64, 0x10, FC_EVF_ANY_SOURCE, 0);
    add(&rk[0], FC_EV_MPI_Irecv, 200 * US, 201 * US, FC_PEER_ANY, 5, 64, 0x20, FC_EVF_ANY_SOURCE, 0);
    add(&rk[0], FC_EV_MPI_Waitall, 300 * US, 1000 * US, FC_PEER_NONE, 0, 0, 0, 0, 8);
    done(&rk[0], 1000 * US, 0x20, 1, 5, 8, FC_EVF_ANY_SOURCE);
    done(&rk[0], 1000 * US, 0x10, 2, 5, 16, FC_EVF_ANY_SOURCE);
    add(&rk[0], FC_EV_MPI_Irecv, 1100 * US, 1101 * US, FC_PEER_ANY, FC_TAG_ANY, 64, 0x30,
        FC_EVF_ANY_SOURCE | FC_EVF_ANY_TAG, 0);
    add(&rk[0], FC_EV_MPI_Irecv, 1200 * US, 1201 * US, 1, 6, 64, 0x40, 0, 0);
    add(&rk[0], FC_EV_MPI_Waitany, 1300 * US, 1500 * US, FC_PEER_NONE, 0, 0, 0, 0, 9);
    done(&rk[0], 1500 * US, 0x40, 1, 6, 4, 0);
    add(&rk[0], FC_EV_MPI_Waitany, 1600 * US, 1800 * US, FC_PEER_NONE, 0, 0, 0, 0, 9);
    done(&rk[0], 1800 * US, 0x30, 2, 5, 24, FC_EVF_ANY_SOURCE | FC_EVF_ANY_TAG);
    add(&rk[1], FC_EV_MPI_Send, 400 * US, 410 * US, 0, 5, 8, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Send, 1250 * US, 1260 * US, 0, 6, 4, 0, 0, 0);
    add(&rk[2], FC_EV_MPI_Send, 500 * US, 510 * US, 0, 5, 16, 0, 0, 0);
    add(&rk[2], FC_EV_MPI_Send, 1400 * US, 1410 * US, 0, 5, 24, 0, 0, 0);
    fc__match *m = run(dir, sizeof dir, rk, 3, 0);
    no_loose_ends(m);
    assert_int_equal(m->nflows, 4);
    const fc__flow *f = find(m, 1, 0, 200e-6); /* the second Irecv got rank 1's message */
    assert_int_equal(f->bytes, 8);
    assert_float_equal(f->start, 400e-6, EPS);
    assert_float_equal(f->end, 1000e-6, EPS);
    f = find(m, 2, 0, 100e-6);
    assert_int_equal(f->bytes, 16);
    assert_float_equal(f->start, 500e-6, EPS);
    assert_float_equal(f->end, 1000e-6, EPS);
    f = find(m, 1, 0, 1200e-6);
    assert_int_equal(f->bytes, 4);
    assert_int_equal(f->tag, 6);
    assert_float_equal(f->end, 1500e-6, EPS);
    f = find(m, 2, 0, 1100e-6);
    assert_int_equal(f->bytes, 24);
    assert_int_equal(f->tag, 5);
    assert_float_equal(f->send_start, 1400e-6, EPS);
    assert_float_equal(f->end, 1800e-6, EPS);
    /* Flow ids follow the start times: 400, 500, 1250, 1400 us. */
    assert_float_equal(m->flows[0].start, 400e-6, EPS);
    assert_float_equal(m->flows[1].start, 500e-6, EPS);
    assert_float_equal(m->flows[2].start, 1250e-6, EPS);
    assert_float_equal(m->flows[3].start, 1400e-6, EPS);
    /* Late Sender: the Waitall (entered at 300) waited for the later send, at 500: 200 us; the
     * Waitany calls were entered after their sends had started. */
    assert_float_equal(m->late_sender[0], 200e-6, EPS);
    assert_float_equal(site_of(m, 0, 8)->late_sender, 200e-6, EPS);
    assert_int_equal(site_of(m, 0, 8)->n_late_sender, 1);
    fc__match_free(m);
}

/* One Waitall completes three receives whose messages were sent 100 ms apart. Traced in steps
 * (format 2.1), each COMPLETE carries the time its receive completed, and each flow ends there;
 * traced as before 2.1, all three COMPLETE at the Waitall's exit and so do the flows. The reader
 * takes both as they come, so the two traces differ in the COMPLETE times alone. */
static void test_own_times(void **state)
{
    (void)state;
    char dir[4096];
    for (int own = 0; own < 2; own++) {
        trank rk[2] = {{.node = "a"}, {.node = "b"}};
        for (int k = 0; k < 3; k++)
            add(&rk[1], FC_EV_MPI_Irecv, (10 + k) * MS, (10 + k) * MS + 1 * US, 0, k, 8, 0x10 + k, 0, 0);
        add(&rk[1], FC_EV_MPI_Waitall, 20 * MS, 320 * MS, FC_PEER_NONE, 0, 0, 0, 0, 5);
        for (int k = 0; k < 3; k++) {
            uint64_t t = own ? (100 * (k + 1) + 1) * MS : 320 * MS;
            done(&rk[1], t, 0x10 + k, 0, k, 8, own ? FC_EVF_OWN_TIME : 0);
            add(&rk[0], FC_EV_MPI_Send, 100 * (k + 1) * MS, 100 * (k + 1) * MS + 10 * US, 1, k, 8, 0, 0, 0);
        }
        fc__match *m = run(dir, sizeof dir, rk, 2, 0);
        no_loose_ends(m);
        assert_int_equal(m->nflows, 3);
        for (int k = 0; k < 3; k++) {
            const fc__flow *f = find(m, 0, 1, (10 + k) * 1e-3);
            assert_int_equal(f->tag, k);
            assert_float_equal(f->start, 0.1 * (k + 1), EPS);
            assert_float_equal(f->end, own ? 0.1 * (k + 1) + 0.001 : 0.32, EPS);
            assert_float_equal(f->observed, own ? 0.001 : 0.32 - 0.1 * (k + 1), EPS);
        }
        fc__match_free(m);
    }
}

/* Three messages with the same envelope: matched in posting order even though the receives
 * complete in reverse order (three Waitany calls) and carry no status (so the bytes can only come
 * from the sends). */
static void test_non_overtaking(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Isend, 100 * US, 101 * US, 1, 1, 10, 0x10, 0, 0);
    add(&rk[0], FC_EV_MPI_Isend, 110 * US, 111 * US, 1, 1, 20, 0x11, 0, 0);
    add(&rk[0], FC_EV_MPI_Send, 120 * US, 130 * US, 1, 1, 30, 0, 0, 0);
    add(&rk[0], FC_EV_MPI_Waitall, 140 * US, 150 * US, FC_PEER_NONE, 0, 0, 0, 0, 0);
    add(&rk[0], FC_EV_COMPLETE, 150 * US, 150 * US, 1, 1, 0, 0x10, 0, 0);
    add(&rk[0], FC_EV_COMPLETE, 150 * US, 150 * US, 1, 1, 0, 0x11, 0, 0);
    add(&rk[1], FC_EV_MPI_Irecv, 50 * US, 51 * US, 0, 1, 100, 0x20, 0, 0);
    add(&rk[1], FC_EV_MPI_Irecv, 60 * US, 61 * US, 0, 1, 100, 0x21, 0, 0);
    add(&rk[1], FC_EV_MPI_Irecv, 70 * US, 71 * US, 0, 1, 100, 0x22, 0, 0);
    add(&rk[1], FC_EV_MPI_Waitany, 80 * US, 150 * US, FC_PEER_NONE, 0, 0, 0, 0, 0);
    add(&rk[1], FC_EV_COMPLETE, 150 * US, 150 * US, 0, 1, 0, 0x22, 0, 0);
    add(&rk[1], FC_EV_MPI_Waitany, 160 * US, 170 * US, FC_PEER_NONE, 0, 0, 0, 0, 0);
    add(&rk[1], FC_EV_COMPLETE, 170 * US, 170 * US, 0, 1, 0, 0x21, 0, 0);
    add(&rk[1], FC_EV_MPI_Waitany, 180 * US, 200 * US, FC_PEER_NONE, 0, 0, 0, 0, 0);
    add(&rk[1], FC_EV_COMPLETE, 200 * US, 200 * US, 0, 1, 0, 0x20, 0, 0);
    fc__match *m = run(dir, sizeof dir, rk, 2, 0);
    no_loose_ends(m);
    assert_int_equal(m->nflows, 3);
    assert_int_equal(find(m, 0, 1, 50e-6)->bytes, 10);
    assert_int_equal(find(m, 0, 1, 60e-6)->bytes, 20);
    assert_int_equal(find(m, 0, 1, 70e-6)->bytes, 30);
    assert_float_equal(find(m, 0, 1, 50e-6)->send_end, 150e-6, EPS); /* its Waitall's exit */
    assert_float_equal(find(m, 0, 1, 70e-6)->send_end, 130e-6, EPS);
    assert_float_equal(find(m, 0, 1, 50e-6)->end, 200e-6, EPS);
    assert_float_equal(find(m, 0, 1, 70e-6)->end, 150e-6, EPS);
    /* Late Sender: only the first Waitany (entered at 80, completing the third receive, whose send
     * began at 120) was entered before its send. */
    assert_float_equal(m->late_sender[1], 40e-6, EPS);
    fc__match_free(m);
}

/* A wildcard receive resolved late: rank 1 posts Irecv(ANY_SOURCE, tag 5) at 100 us, then a
 * Recv(0, 5) at 150 us that returns at 200 us, and only at 310 us does a Wait complete the wildcard
 * (source 0). MPI matched the first send to the first receive posted, so the wildcard has the
 * 10-byte send of 120 us and the Recv the 20-byte one of 130 us, although the Recv was seen
 * complete first. A second wildcard (tag 6) never completes: it is reported unresolved and does
 * not hold back the Recv(0, 6) posted after it. */
static void test_late_wildcard(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Send, 120 * US, 121 * US, 1, 5, 10, 0, 0, 0);
    add(&rk[0], FC_EV_MPI_Send, 130 * US, 131 * US, 1, 5, 20, 0, 0, 0);
    add(&rk[0], FC_EV_MPI_Send, 450 * US, 451 * US, 1, 6, 30, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Irecv, 100 * US, 101 * US, FC_PEER_ANY, 5, 64, 0x10, FC_EVF_ANY_SOURCE, 0);
    add(&rk[1], FC_EV_MPI_Recv, 150 * US, 200 * US, 0, 5, 20, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Wait, 300 * US, 310 * US, FC_PEER_NONE, 0, 0, 0, 0, 0);
    done(&rk[1], 310 * US, 0x10, 0, 5, 10, FC_EVF_ANY_SOURCE);
    add(&rk[1], FC_EV_MPI_Irecv, 400 * US, 401 * US, FC_PEER_ANY, 6, 64, 0x11, FC_EVF_ANY_SOURCE, 0);
    add(&rk[1], FC_EV_MPI_Recv, 500 * US, 600 * US, 0, 6, 30, 0, 0, 0);
    fc__match *m = run(dir, sizeof dir, rk, 2, 0);
    assert_int_equal(m->nflows, 3);
    assert_int_equal(find(m, 0, 1, 100e-6)->bytes, 10);
    assert_float_equal(find(m, 0, 1, 100e-6)->send_start, 120e-6, EPS);
    assert_float_equal(find(m, 0, 1, 100e-6)->end, 310e-6, EPS);
    assert_int_equal(find(m, 0, 1, 150e-6)->bytes, 20);
    assert_float_equal(find(m, 0, 1, 150e-6)->send_start, 130e-6, EPS);
    assert_float_equal(find(m, 0, 1, 500e-6)->send_start, 450e-6, EPS);
    assert_int_equal(m->unmatched_sends, 0);
    assert_int_equal(m->unmatched_recvs, 1);
    assert_int_equal(m->unmatched[0].reason, FC_UNMATCHED_UNRESOLVED);
    assert_float_equal(m->unmatched[0].post, 400e-6, EPS);
    fc__match_free(m);
}

/* A persistent send started three times (MPI_Start) against a persistent receive started by
 * MPI_Startall: three message instances. */
static void test_persistent(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Send_init, 10 * US, 11 * US, 1, 2, 100, 0x50, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv_init, 10 * US, 11 * US, 0, 2, 100, 0x60, 0, 0);
    for (uint64_t k = 0; k < 3; k++) {
        uint64_t b = 1000 * US * (k + 1);
        add(&rk[0], FC_EV_MPI_Start, b + 100 * US, b + 101 * US, FC_PEER_NONE, 0, 0, 0x50, 0, 0);
        add(&rk[0], FC_EV_MPI_Wait, b + 110 * US, b + 150 * US, FC_PEER_NONE, 0, 0, 0x50, 0, 0);
        add(&rk[0], FC_EV_COMPLETE, b + 150 * US, b + 150 * US, 1, 2, 0, 0x50, 0, 0);
        add(&rk[1], FC_EV_MPI_Startall, b + 50 * US, b + 51 * US, FC_PEER_NONE, 0, 0, 0, 0, 0);
        add(&rk[1], FC_EV_START, b + 50 * US, b + 50 * US, FC_PEER_NONE, 0, 0, 0x60, 0, 0);
        add(&rk[1], FC_EV_MPI_Wait, b + 60 * US, b + 200 * US, FC_PEER_NONE, 0, 0, 0x60, 0, 0);
        done(&rk[1], b + 200 * US, 0x60, 0, 2, 100, 0);
    }
    add(&rk[0], FC_EV_MPI_Request_free, 5000 * US, 5001 * US, FC_PEER_NONE, 0, 0, 0x50, 0, 0);
    add(&rk[1], FC_EV_MPI_Request_free, 5000 * US, 5001 * US, FC_PEER_NONE, 0, 0, 0x60, 0, 0);
    fc__match *m = run(dir, sizeof dir, rk, 2, 0);
    no_loose_ends(m);
    assert_int_equal(m->nflows, 3);
    for (uint64_t k = 0; k < 3; k++) {
        double b = 1e-3 * (double)(k + 1);
        const fc__flow *f = &m->flows[k];
        assert_float_equal(f->send_start, b + 100e-6, EPS);
        assert_float_equal(f->send_end, b + 150e-6, EPS);
        assert_float_equal(f->recv_post, b + 50e-6, EPS);
        assert_float_equal(f->end, b + 200e-6, EPS);
        assert_int_equal(f->send_kind, FC_EV_MPI_Send_init);
        assert_int_equal(f->recv_kind, FC_EV_MPI_Recv_init);
    }
    /* Each Wait on the receive began at b + 60 and the send at b + 100: 40 us, three times. */
    assert_float_equal(m->late_sender[1], 120e-6, EPS);
    fc__match_free(m);
}

/* A ring of Sendrecv over three nodes: each rank sends right and receives from the left. */
static void test_sendrecv_ring(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[3] = {{.node = "a"}, {.node = "b"}, {.node = "c"}};
    for (uint32_t r = 0; r < 3; r++) {
        uint64_t t0 = (100 + 10 * r) * US, t1 = (200 + 10 * r) * US;
        add(&rk[r], FC_EV_MPI_Sendrecv, t0, t1, (r + 1) % 3, 9, 64 + r, 0, 0, 0);
        rk[r].ev[rk[r].n - 1].bytes2 = 1024;
        done(&rk[r], t1, 0, (r + 2) % 3, 9, 64 + (r + 2) % 3, 0);
    }
    fc__match *m = run(dir, sizeof dir, rk, 3, 0);
    no_loose_ends(m);
    assert_int_equal(m->nflows, 3);
    for (uint32_t r = 0; r < 3; r++) {
        uint32_t left = (r + 2) % 3;
        const fc__flow *f = find(m, left, r, (100 + 10 * r) * 1e-6);
        assert_int_equal(f->bytes, 64 + left);
        assert_float_equal(f->send_start, (100 + 10 * left) * 1e-6, EPS);
        assert_float_equal(f->end, (200 + 10 * r) * 1e-6, EPS);
        assert_int_equal(f->recv_kind, FC_EV_MPI_Sendrecv);
    }
    /* Rank 0 entered at 100 and its left neighbour (2) sent at 120: 20 us; ranks 1 and 2 entered
     * after their left neighbours. */
    assert_float_equal(m->late_sender[0], 20e-6, EPS);
    assert_float_equal(m->late_sender[1], 0, EPS);
    assert_float_equal(m->late_sender[2], 0, EPS);
    fc__match_free(m);
}

/* Ranks 0 and 1 share a node: their message is intra-node and comes after the inter-node flows. */
static void test_intra(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[3] = {{.node = "n0"}, {.node = "n0"}, {.node = "n1"}};
    add(&rk[0], FC_EV_MPI_Send, 100 * US, 110 * US, 1, 0, 8, 0, 0, 0);
    add(&rk[0], FC_EV_MPI_Send, 200 * US, 210 * US, 2, 0, 8, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv, 100 * US, 150 * US, 0, 0, 8, 0, 0, 0);
    add(&rk[2], FC_EV_MPI_Recv, 100 * US, 250 * US, 0, 0, 8, 0, 0, 0);
    fc__match *m = run(dir, sizeof dir, rk, 3, 0);
    no_loose_ends(m);
    assert_int_equal(m->nnodes, 2);
    assert_int_equal(m->rank_node[0], 0);
    assert_int_equal(m->rank_node[1], 0);
    assert_int_equal(m->rank_node[2], 1);
    assert_int_equal(m->nflows, 2);
    assert_int_equal(m->ninter, 1);
    assert_int_equal(m->flows[0].dst_rank, 2);
    assert_false(m->flows[0].intra);
    assert_int_equal(m->flows[1].dst_rank, 1);
    assert_true(m->flows[1].intra);
    assert_int_equal(m->flows[1].src_node, m->flows[1].dst_node);
    fc__match_free(m);
}

/* Two sends and one receive with the same envelope: the second (later) send is left over. */
static void test_unmatched(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Send, 100 * US, 110 * US, 1, 3, 8, 0, 0, 4);
    add(&rk[0], FC_EV_MPI_Send, 200 * US, 210 * US, 1, 3, 8, 0, 0, 5);
    add(&rk[1], FC_EV_MPI_Recv, 100 * US, 150 * US, 0, 3, 8, 0, 0, 0);
    fc__match *m = run(dir, sizeof dir, rk, 2, 0);
    assert_int_equal(m->nflows, 1);
    assert_float_equal(m->flows[0].send_start, 100e-6, EPS);
    assert_int_equal(m->unmatched_sends, 1);
    assert_int_equal(m->unmatched_recvs, 0);
    assert_int_equal(m->nunmatched, 1);
    assert_true(m->unmatched[0].send);
    assert_int_equal(m->unmatched[0].rank, 0);
    assert_int_equal(m->unmatched[0].peer, 1);
    assert_int_equal(m->unmatched[0].site, 5);
    assert_float_equal(m->unmatched[0].post, 200e-6, EPS);
    assert_int_equal(m->unmatched[0].reason, FC_UNMATCHED_NO_PARTNER);
    fc__match_free(m);
}

/* Rank 1's recorded offset is 200 ms too low, so its second receive seems to end 0.1 s before the
 * send began: counted, located, and the flow keeps the measured (negative) duration. The third
 * ends 0.01 s early, within rank 1's stated uncertainty of 60 ms: counted, but not beyond it. */
static void test_clock_violation(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    clock_of(&rk[1], -(int64_t)(200 * MS), -(int64_t)(200 * MS));
    add(&rk[0], FC_EV_MPI_Send, 100 * MS, 101 * MS, 1, 0, 8, 0, 0, 0);
    add(&rk[0], FC_EV_MPI_Send, 500 * MS, 501 * MS, 1, 0, 8, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv, 250 * MS, 350 * MS, 0, 0, 8, 0, 0, 0); /* aligned 0.05 .. 0.15 */
    add(&rk[1], FC_EV_MPI_Recv, 400 * MS, 600 * MS, 0, 0, 8, 0, 0, 0); /* aligned 0.2 .. 0.4 */
    add(&rk[0], FC_EV_MPI_Send, 700 * MS, 701 * MS, 1, 0, 8, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv, 850 * MS, 890 * MS, 0, 0, 8, 0, 0, 0); /* aligned 0.65 .. 0.69 */
    rk[1].clk[0].uncertainty_ns = rk[1].clk[1].uncertainty_ns = 60 * MS;
    fc__match *m = run(dir, sizeof dir, rk, 2, 0);
    assert_int_equal(m->nflows, 3);
    assert_int_equal(m->clock_violations, 2);
    assert_int_equal(m->clock_violations_beyond, 1);
    assert_float_equal(m->worst_violation, 0.1, EPS);
    const fc__flow *f = &m->flows[m->worst_flow];
    assert_float_equal(f->send_start, 0.5, EPS);
    assert_float_equal(f->end, 0.4, EPS);
    assert_float_equal(f->observed, -0.1, EPS);
    fc__match_free(m);
}

/* Eager threshold 1024: a small message starts with its send, a large one when both sides are
 * there; Late Receiver for the rendezvous send and for a small synchronous send. Times in ms. */
static void test_eager_rendezvous(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Send, 100 * MS, 110 * MS, 1, 1, 100, 0, 0, 3);
    add(&rk[0], FC_EV_MPI_Send, 120 * MS, 350 * MS, 1, 2, 4096, 0, 0, 4);
    add(&rk[0], FC_EV_MPI_Ssend, 400 * MS, 600 * MS, 1, 3, 8, 0, 0, 5);
    add(&rk[1], FC_EV_MPI_Recv, 300 * MS, 310 * MS, 0, 1, 100, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv, 320 * MS, 360 * MS, 0, 2, 4096, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv, 500 * MS, 600 * MS, 0, 3, 8, 0, 0, 0);
    fc__match *m = run(dir, sizeof dir, rk, 2, 1024);
    no_loose_ends(m);
    assert_int_equal(m->eager_threshold, 1024);
    const fc__flow *a = find(m, 0, 1, 0.3), *b = find(m, 0, 1, 0.32), *c = find(m, 0, 1, 0.5);
    assert_false(a->rendezvous);
    assert_float_equal(a->start, 0.1, EPS);
    assert_float_equal(a->observed, 0.21, EPS);
    assert_true(b->rendezvous);
    assert_float_equal(b->start, 0.32, EPS);
    assert_float_equal(b->observed, 0.04, EPS);
    assert_false(c->rendezvous);
    assert_float_equal(c->start, 0.4, EPS);
    /* Late Receiver: the large send waited 0.12 .. 0.32, the Ssend 0.4 .. 0.5; the eager send none. */
    assert_float_equal(site_of(m, 0, 4)->late_receiver, 0.2, EPS);
    assert_float_equal(site_of(m, 0, 5)->late_receiver, 0.1, EPS);
    assert_float_equal(m->late_receiver[0], 0.3, EPS);
    assert_float_equal(m->late_sender[1], 0, EPS);
    fc__match_free(m);
}

/* Matched probes: Mprobe with ANY_SOURCE then Mrecv (which carries the envelope the probe found),
 * and Improbe then Imrecv completed by a Wait; a Probe alone receives nothing. Times in us. */
static void test_mprobe(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[3] = {{.node = "a"}, {.node = "b"}, {.node = "c"}};
    add(&rk[1], FC_EV_MPI_Send, 100 * US, 110 * US, 0, 4, 32, 0, 0, 0);
    add(&rk[2], FC_EV_MPI_Send, 120 * US, 130 * US, 0, 4, 48, 0, 0, 0);
    add(&rk[0], FC_EV_MPI_Probe, 50 * US, 105 * US, 1, 4, 32, 0, 0, 0);
    add(&rk[0], FC_EV_MPI_Mprobe, 106 * US, 107 * US, 1, 4, 32, 0x70, FC_EVF_ANY_SOURCE, 0);
    add(&rk[0], FC_EV_MPI_Mrecv, 150 * US, 160 * US, 1, 4, 32, 0, 0, 0);
    add(&rk[0], FC_EV_MPI_Improbe, 170 * US, 171 * US, 2, 4, 48, 0x71, FC_EVF_FOUND, 0);
    add(&rk[0], FC_EV_MPI_Imrecv, 180 * US, 181 * US, 2, 4, 48, 0x72, 0, 0);
    add(&rk[0], FC_EV_MPI_Wait, 190 * US, 200 * US, FC_PEER_NONE, 0, 0, 0x72, 0, 0);
    done(&rk[0], 200 * US, 0x72, 2, 4, 48, 0);
    fc__match *m = run(dir, sizeof dir, rk, 3, 0);
    no_loose_ends(m);
    assert_int_equal(m->nflows, 2);
    const fc__flow *f = find(m, 1, 0, 150e-6);
    assert_int_equal(f->bytes, 32);
    assert_int_equal(f->recv_kind, FC_EV_MPI_Mrecv);
    assert_float_equal(f->end, 160e-6, EPS);
    f = find(m, 2, 0, 180e-6);
    assert_int_equal(f->bytes, 48);
    assert_int_equal(f->recv_kind, FC_EV_MPI_Imrecv);
    assert_float_equal(f->end, 200e-6, EPS);
    fc__match_free(m);
}

/* MPI_PROC_NULL partners, a cancelled receive and a wildcard receive completed without a status:
 * none of them takes part in the matching, and the last is reported as unresolved. */
/* A rank whose records end early (it died, or its file was cut): rank 0 posts an Isend at 100 us
 * and nothing more. Its send never completes, so it ends as it starts (send_end = send_start) and
 * still meets rank 1's Recv; rank 1's later Send to rank 0 (tag 2) and its Irecv from rank 0 (tag
 * 3, never completed) have no partner, nor its Isend (tag 4) freed while outstanding. The same as
 * if every rank were read to its end first. */
static void test_rank_ends(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Isend, 100 * US, 101 * US, 1, 1, 64, 0x10, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv, 50 * US, 300 * US, 0, 1, 64, 0, 0, 0);
    /* Rank 1 also frees an outstanding Isend (tag 4) that rank 0 never receives. */
    add(&rk[1], FC_EV_MPI_Isend, 310 * US, 311 * US, 0, 4, 8, 0x12, 0, 0);
    add(&rk[1], FC_EV_MPI_Request_free, 320 * US, 321 * US, FC_PEER_NONE, 0, 0, 0x12, 0, 0);
    add(&rk[1], FC_EV_MPI_Send, 400 * US, 410 * US, 0, 2, 8, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Irecv, 500 * US, 501 * US, 0, 3, 8, 0x11, 0, 0);
    add(&rk[1], FC_EV_MPI_Barrier, 5000 * US, 6000 * US, FC_PEER_NONE, 0, 0, 0, 0, 0);
    fc__match *m = run(dir, sizeof dir, rk, 2, 0);
    assert_int_equal(m->nflows, 1);
    assert_float_equal(m->flows[0].send_start, 100e-6, EPS);
    assert_float_equal(m->flows[0].send_end, 100e-6, EPS);
    assert_float_equal(m->flows[0].end, 300e-6, EPS);
    assert_int_equal(m->unmatched_sends, 2);
    assert_int_equal(m->unmatched_recvs, 1);
    const int64_t tags[] = {4, 2, 3}; /* by post: tag 4 at 310, tag 2 at 400, tag 3 at 500 */
    assert_int_equal(m->nunmatched, 3);
    for (size_t i = 0; i < m->nunmatched; i++) {
        assert_int_equal(m->unmatched[i].rank, 1);
        assert_int_equal(m->unmatched[i].reason, FC_UNMATCHED_NO_PARTNER);
        assert_int_equal(m->unmatched[i].tag, tags[i]);
    }
    fc__match_free(m);
}

/* A record at the last representable time (a damaged clock) is read like any other, and the
 * matching still ends. */
static void test_last_time(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Send, 10 * US, 11 * US, 1, 1, 100, 0, 0, 0);
    add(&rk[0], FC_EV_MPI_Barrier, INT64_MAX, INT64_MAX, FC_PEER_NONE, 0, 0, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv, 5 * US, 20 * US, 0, 1, 100, 0, 0, 0);
    fc__match *m = run(dir, sizeof dir, rk, 2, 0);
    assert_int_equal(m->nflows, 1);
    assert_float_equal(m->flows[0].send_start, 10e-6, EPS);
    fc__match_free(m);
}

static void test_leftovers(void **state)
{
    (void)state;
    char dir[4096];
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Send, 100 * US, 110 * US, FC_PEER_NULL, 0, 8, 0, 0, 0);
    add(&rk[0], FC_EV_MPI_Send, 200 * US, 210 * US, 1, 0, 8, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Irecv, 50 * US, 51 * US, 0, 0, 8, 0x10, 0, 0);
    add(&rk[1], FC_EV_MPI_Cancel, 60 * US, 61 * US, FC_PEER_NONE, 0, 0, 0x10, 0, 0);
    add(&rk[1], FC_EV_MPI_Wait, 70 * US, 80 * US, FC_PEER_NONE, 0, 0, 0x10, 0, 0);
    add(&rk[1], FC_EV_COMPLETE, 80 * US, 80 * US, 0, 0, 0, 0x10, FC_EVF_CANCELLED, 0);
    add(&rk[1], FC_EV_MPI_Recv, 90 * US, 250 * US, 0, 0, 8, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Irecv, 300 * US, 301 * US, FC_PEER_ANY, 0, 8, 0x11, FC_EVF_ANY_SOURCE, 0);
    add(&rk[1], FC_EV_MPI_Wait, 310 * US, 320 * US, FC_PEER_NONE, 0, 0, 0x11, 0, 0);
    add(&rk[1], FC_EV_COMPLETE, 320 * US, 320 * US, FC_PEER_ANY, 0, 0, 0x11, 0, 0);
    fc__match *m = run(dir, sizeof dir, rk, 2, 0);
    assert_int_equal(m->nflows, 1);
    assert_float_equal(m->flows[0].recv_post, 90e-6, EPS);
    assert_float_equal(m->flows[0].send_start, 200e-6, EPS);
    assert_int_equal(m->proc_null, 1);
    assert_int_equal(m->cancelled, 1);
    assert_int_equal(m->unmatched_sends, 0);
    assert_int_equal(m->unmatched_recvs, 1);
    assert_int_equal(m->unmatched[0].reason, FC_UNMATCHED_UNRESOLVED);
    assert_int_equal(m->unmatched[0].peer, FC_PEER_ANY);
    assert_float_equal(m->unmatched[0].post, 300e-6, EPS);
    fc__match_free(m);
}

/* The order of fc__sort_flows, stated again: intra last, then start, source and destination
 * ranks, end, send start, id. */
static int cmp_flow_order(const void *a, const void *b)
{
    const fc__flow *x = a, *y = b;
    if (x->intra != y->intra)
        return x->intra ? 1 : -1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->src_rank != y->src_rank)
        return x->src_rank < y->src_rank ? -1 : 1;
    if (x->dst_rank != y->dst_rank)
        return x->dst_rank < y->dst_rank ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    if (x->send_start != y->send_start)
        return x->send_start < y->send_start ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* fc__sort_flows against qsort with that order, on sizes around its runs of 16 and up to
 * thousands, with many ties on start (decided by the later keys) and flows given nearly sorted,
 * reversed or at random. */
static int count_flow(void *arg, const fc__flow *f)
{
    (void)f;
    ++*(size_t *)arg;
    return 0;
}

/* The traffic between nodes, by hand: nodes A (ranks 0, 1), B (2) and C (3), numbered 0, 1, 2 in
 * order of their first rank; one pair per (source, destination) that talked, intra-node ones
 * included, sorted. Summed in a matrix and, with the threshold lowered, in the table that many
 * nodes take: both give the same list. */
static void test_traffic(void **state)
{
    (void)state;
    static const fc__traffic want[] = {{0, 0, 1, 64, 0, 0}, {0, 1, 2, 1500, 0, 0}, {1, 2, 1, 0, 0, 0}, {2, 0, 1, 2000, 0, 0}};
    size_t keep = fc__traffic_dense;
    for (int sparse = 0; sparse < 2; sparse++) {
        char dir[4096];
        trank rk[4] = {{.node = "A"}, {.node = "A"}, {.node = "B"}, {.node = "C"}};
        add(&rk[0], FC_EV_MPI_Send, 100 * US, 110 * US, 2, 1, 1000, 0, 0, 0);
        add(&rk[0], FC_EV_MPI_Send, 200 * US, 210 * US, 1, 2, 64, 0, 0, 0);
        add(&rk[0], FC_EV_MPI_Recv, 300 * US, 400 * US, 3, 4, 2000, 0, 0, 0);
        add(&rk[1], FC_EV_MPI_Recv, 150 * US, 250 * US, 0, 2, 64, 0, 0, 0);
        add(&rk[1], FC_EV_MPI_Send, 260 * US, 270 * US, 2, 3, 500, 0, 0, 0);
        add(&rk[2], FC_EV_MPI_Recv, 90 * US, 120 * US, 0, 1, 1000, 0, 0, 0);
        add(&rk[2], FC_EV_MPI_Recv, 255 * US, 280 * US, 1, 3, 500, 0, 0, 0);
        add(&rk[2], FC_EV_MPI_Send, 290 * US, 295 * US, 3, 5, 0, 0, 0, 0);
        add(&rk[3], FC_EV_MPI_Recv, 285 * US, 296 * US, 2, 5, 0, 0, 0, 0);
        add(&rk[3], FC_EV_MPI_Send, 310 * US, 320 * US, 0, 4, 2000, 0, 0, 0);
        fc__traffic_dense = sparse ? 0 : keep;
        make_scratch(dir, sizeof dir);
        write_world(dir, rk, 4, 10);
        fc_trace *t;
        fc__match *ms[2];
        size_t seen = 0;
        fc__match_sink sink = {.arg = &seen, .flow = count_flow};
        assert_int_equal(fc_trace_open(dir, &t), 0);
        assert_int_equal(fc__match_trace(t, 0, &ms[0]), 0);
        /* Streamed, the inter-node flows are counted from the traffic alone. */
        assert_int_equal(fc__match_stream(t, 0, &sink, &ms[1]), 0);
        fc_trace_close(t);
        rm_scratch(dir);
        fc__traffic_dense = keep;
        assert_int_equal(seen, 5);
        for (int k = 0; k < 2; k++) {
            const fc__match *m = ms[k];
            assert_int_equal(m->nnodes, 3);
            assert_int_equal(m->nflows, 5);
            assert_int_equal(m->ninter, 4);
            assert_int_equal(m->ntraffic, 4);
            for (size_t i = 0; i < 4; i++) {
                assert_int_equal(m->traffic[i].src, want[i].src);
                assert_int_equal(m->traffic[i].dst, want[i].dst);
                assert_int_equal(m->traffic[i].count, want[i].count);
                assert_float_equal(m->traffic[i].bytes, want[i].bytes, 0);
            }
        }
        no_loose_ends(ms[0]);
        fc__match_free(ms[0]);
        fc__match_free(ms[1]);
    }
}

/* FNV-1a over the bytes of 64-bit words, little end first, worked out here apart from match.c. */
static uint64_t fnv_words(const uint64_t *w, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++) {
            h ^= (w[i] >> (8 * b)) & 0xff;
            h *= 0x100000001b3ull;
        }
    return h;
}

/* A communicator's global key hashes its kind (1: intra), member count, members and ordinal, so
 * that ranks agree on it; an undefined MPI_COMM_WORLD takes the key its definition would have.
 * The reader shares one array among the lists 0 .. n-1, and supplies the world a file leaves out.
 * MPI_COMM_WORLD's list (0 .. n-1) is hashed once per size: a list that only looks like it (a
 * duplicate of the world, another ordinal) and a permuted one keep their own keys. */
static void test_comm_keys(void **state)
{
    (void)state;
    char dir[4096], path[4200];
    make_scratch(dir, sizeof dir);
    static const uint32_t ident[] = {0, 1, 2}, perm[] = {2, 0, 1};
    fc_comm comms[] = {{.id = 4, .local_size = 2, .local = ident, .ordinal = 2},
                       {.id = 0, .local_size = 3, .local = ident, .ordinal = 0},
                       {.id = 2, .local_size = 3, .local = perm, .ordinal = 1},
                       {.id = 3, .local_size = 3, .local = ident, .ordinal = 1}};
    for (uint32_t r = 0; r < 2; r++) { /* rank 1 defines no communicator, not even the world */
        fc_writer *w;
        fc_rank_info info;
        memset(&info, 0, sizeof info);
        info.present = (1u << FC_RK_RANK) | (1u << FC_RK_SIZE);
        info.rank = r;
        info.size = 3;
        rank_path(path, sizeof path, dir, (int)r);
        assert_int_equal(fc_writer_open(path, r, 3, 0, 1, 0, &w), 0);
        assert_int_equal(fc_writer_rank(w, &info), 0);
        if (r == 0)
            assert_int_equal(fc_writer_comms(w, comms, 4), 0);
        assert_int_equal(fc_writer_end(w, 0, 0, 0, 0), 0);
        assert_int_equal(fc_writer_close(w), 0);
    }
    fc_trace *t;
    assert_int_equal(fc_trace_open(dir, &t), 0);
    const fc_rank *r0 = fc_trace_rank(t, 0), *r1 = fc_trace_rank(t, 1);
    const uint64_t world[] = {1, 3, 0, 1, 2, 0}, split[] = {1, 3, 2, 0, 1, 1}, dup[] = {1, 3, 0, 1, 2, 1};
    /* The reader keeps one array for the lists 0 .. n-1, grown as a longer one comes: the
     * shorter list read before keeps its members. */
    const fc_comm *w0 = fc_rank_comm(r0, 0), *c2 = fc_rank_comm(r0, 2), *c3 = fc_rank_comm(r0, 3);
    const fc_comm *c4 = fc_rank_comm(r0, 4);
    assert_non_null(w0);
    assert_non_null(c2);
    assert_non_null(c3);
    assert_non_null(c4);
    assert_ptr_equal(w0->local, c3->local);
    assert_memory_equal(w0->local, ident, sizeof ident);
    assert_memory_equal(c2->local, perm, sizeof perm);
    assert_int_equal(c4->local_size, 2);
    assert_memory_equal(c4->local, ident, 2 * sizeof *ident);
    /* A file that defines no MPI_COMM_WORLD (the tracer's) gets the one its size implies. */
    const fc_comm *w1 = fc_rank_comm(r1, 0);
    assert_non_null(w1);
    assert_int_equal(w1->local_size, 3);
    assert_int_equal(w1->remote_size, 0);
    assert_true(w1->ordinal == 0 && w1->flags == 0);
    assert_ptr_equal(w1->local, w0->local);
    assert_null(fc_rank_comm(r1, 2));
    for (int round = 0; round < 2; round++) { /* the second time from the memo */
        assert_true(fc__comm_key(r0, 0) == fnv_words(world, 6));
        assert_true(fc__comm_key(r1, 0) == fnv_words(world, 6));
        assert_true(fc__comm_key(r0, 2) == fnv_words(split, 6));
        assert_true(fc__comm_key(r0, 3) == fnv_words(dup, 6));
    }
    fc_trace_close(t);
    rm_scratch(dir);
}

static void test_sort_flows(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 15, 16, 17, 33, 100, 1000, 4099};
    unsigned seed = 99;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        fc__flow *a = calloc(n + 1, sizeof *a), *b = calloc(n + 1, sizeof *b);
        assert_non_null(a);
        assert_non_null(b);
        for (int shape = 0; shape < 3; shape++) {
            for (size_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                unsigned r = seed >> 8;
                double t = shape == 0 ? (double)(r % 50) : shape == 1 ? (double)(n - i) : (double)i + (r % 3);
                a[i] = (fc__flow){.id = i, .start = t, .src_rank = r % 4, .dst_rank = (r >> 2) % 4,
                                 .end = t + (double)((r >> 4) % 3), .send_start = t - (double)((r >> 6) % 2),
                                 .intra = (r >> 8) % 5 == 0};
            }
            memcpy(b, a, n * sizeof *a);
            fc__sort_flows(a, n);
            if (n > 0)
                qsort(b, n, sizeof *b, cmp_flow_order);
            for (size_t i = 0; i < n; i++)
                assert_int_equal(a[i].id, b[i].id);
        }
        free(a);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple),         cmocka_unit_test(test_wildcards),
        cmocka_unit_test(test_non_overtaking), cmocka_unit_test(test_late_wildcard), cmocka_unit_test(test_rank_ends), cmocka_unit_test(test_last_time), cmocka_unit_test(test_persistent),
        cmocka_unit_test(test_sendrecv_ring),  cmocka_unit_test(test_intra),
        cmocka_unit_test(test_unmatched), cmocka_unit_test(test_comm_keys), cmocka_unit_test(test_traffic),      cmocka_unit_test(test_clock_violation),
        cmocka_unit_test(test_eager_rendezvous), cmocka_unit_test(test_mprobe),
        cmocka_unit_test(test_leftovers),        cmocka_unit_test(test_sort_flows),
        cmocka_unit_test(test_own_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
