/* tests/unit/test-remap-replay.c: the replay of `flowcut remap` on tiny traces written with the
 * public writer, against timelines worked out by hand from the events and a hand-made platform,
 * and the collective expansions against the algorithms' trees drawn by hand. */
#include <math.h>
#include "scratch-trace.h"
#include "collective/calls.h"
#include "match/match.h"
#include "model/model.h"
#include "model/observe.h"
#include "model/profile.h"
#include "remap/replay.h"

#define US 1000ull /* ns in a microsecond */
#define EPS 1e-9   /* seconds: trace times are whole ns */

/* The platform: exact binary figures so that the hand sums below are exact. Inter-node: latency
 * L = 2^-10 s, 2^-26 s per byte (1 MiB in W = 2^-6 s). Intra-node: 2^-14 s and 2^-30 s per byte. */
#define L (1.0 / 1024)
#define W (1.0 / 64)
#define LI (1.0 / 16384)
#define MIB 1048576u

static fc__profile *platform(void)
{
    fc__profile *p = fc__profile_new();
    assert_non_null(p);
    assert_int_equal(fc__profile_add_segment(p, 0, 0, UINT64_MAX, L, 1.0 / 67108864, 0), 0);
    assert_int_equal(fc__profile_add_segment(p, 1, 0, UINT64_MAX, LI, 1.0 / 1073741824, 0), 0);
    return p;
}

/* Appends an event; times in microseconds of the rank's clock. */
static void add(trank *r, unsigned kind, uint64_t t0, uint64_t t1, int64_t peer, int64_t tag, uint64_t bytes,
                uint64_t obj, uint64_t flags)
{
    assert_true(r->n < 63);
    fc_event e = ev_make(kind, t0 * US, t1 * US, peer, tag, 0, bytes, obj);
    e.flags = flags;
    r->ev[r->n++] = e;
}

/* Writes the ranks (MPI_Init at local time 0 .. 0, so local time is replay time, no clock blocks)
 * and builds the replay. */
static fc__replay *build(trank *rk, uint32_t n)
{
    char dir[4096];
    make_scratch(dir, sizeof dir);
    write_world(dir, rk, n, 0);
    fc_trace *t;
    fc__replay *rp;
    assert_int_equal(fc_trace_open(dir, &t), 0);
    assert_int_equal(fc__replay_build(t, &rp), 0);
    fc_trace_close(t);
    rm_scratch(dir);
    return rp;
}

/* Ranks 0 and 1 of node n0 each send 1 MiB (rendezvous) to rank 2 and 3 of node n1, sends posted
 * at 1 ms and receives at 0.5 ms, all ending at 40 ms. */
static fc__replay *two_flows(void)
{
    trank rk[4] = {{.node = "n0"}, {.node = "n0"}, {.node = "n1"}, {.node = "n1"}};
    for (int s = 0; s < 2; s++) {
        add(&rk[s], FC_EV_MPI_Send, 1000, 40000, s + 2, 0, MIB, 0, 0);
        add(&rk[s], FC_EV_MPI_Finalize, 40000, 40000, FC_PEER_NONE, 0, 0, 0, 0);
        add(&rk[s + 2], FC_EV_MPI_Recv, 500, 40000, s, 0, MIB, 0, 0);
        add(&rk[s + 2], FC_EV_MPI_Finalize, 40000, 40000, FC_PEER_NONE, 0, 0, 0, 0);
    }
    return build(rk, 4);
}

static fc__replay_result run(const fc__replay *rp, const uint32_t *pl, uint32_t nodes, unsigned model)
{
    fc__profile *p = platform();
    fc__replay_opts o = {.profile = p, .model = model, .eager = 262144, .want_flows = 1};
    fc__replay_result res;
    assert_int_equal(fc__replay_run(rp, pl, nodes, &o, &res), 0);
    fc__profile_free(p);
    return res;
}

/* A rendezvous send (1 MiB >= 256 KiB): the transfer starts when both sides are there. */
static void test_rendezvous(void **state)
{
    (void)state;
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Send, 1000, 30000, 1, 5, MIB, 0, 0);    /* 1 ms of computation first */
    add(&rk[0], FC_EV_MPI_Finalize, 32000, 32000, FC_PEER_NONE, 0, 0, 0, 0); /* then 2 ms */
    add(&rk[1], FC_EV_MPI_Recv, 500, 30000, 0, 5, MIB, 0, 0);     /* 0.5 ms */
    add(&rk[1], FC_EV_MPI_Finalize, 31000, 31000, FC_PEER_NONE, 0, 0, 0, 0); /* then 1 ms */
    fc__replay *rp = build(rk, 2);
    assert_int_equal(rp->nmsgs, 1);
    assert_int_equal(rp->unmatched, 0);
    assert_int_equal(rp->nnodes, 2);
    assert_true(fabs(rp->obs_time - 0.032) < EPS);
    assert_true(fabs(rp->prog[0].obs_compute - 0.003) < EPS);

    /* Observed placement: start at 0.001 (the send), arrival 0.001 + L + W; rank 0 ends 2 ms
     * later, rank 1 1 ms later. Communication: rank 1 waited from 0.0005. */
    uint32_t apart[2] = {0, 1};
    fc__replay_result r = run(rp, apart, 2, FC_MODEL_FAIRSHARE);
    double arrive = 0.001 + L + W;
    assert_true(fabs(r.time - (arrive + 0.002)) < EPS);
    assert_true(fabs(r.comm - (arrive + 0.001 - 0.0015)) < EPS);
    assert_int_equal(r.nflows, 1);
    assert_true(fabs(r.flows[0].start - 0.001) < EPS);
    assert_true(fabs(r.flows[0].end - arrive) < EPS);
    fc__replay_result_clear(&r);

    /* Both on one node: the intra-node figures. */
    uint32_t together[2] = {0, 0};
    r = run(rp, together, 2, FC_MODEL_LINEAR);
    assert_true(fabs(r.time - (0.001 + LI + 1.0 / 1024 + 0.002)) < EPS);
    assert_int_equal(r.nflows, 0);
    fc__replay_result_clear(&r);
    fc__replay_free(rp);
}

/* An eager message whose receive is posted after the data arrived completes at the post. */
static void test_eager_late_receiver(void **state)
{
    (void)state;
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Send, 1000, 1001, 1, 0, 1024, 0, 0);
    add(&rk[0], FC_EV_MPI_Finalize, 1001, 1001, FC_PEER_NONE, 0, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv, 5000, 5002, 0, 0, 1024, 0, 0);
    add(&rk[1], FC_EV_MPI_Finalize, 6002, 6002, FC_PEER_NONE, 0, 0, 0, 0);
    fc__replay *rp = build(rk, 2);
    uint32_t pl[2] = {0, 1};
    fc__replay_result r = run(rp, pl, 2, FC_MODEL_FAIRSHARE);
    /* Rank 0: sends at 0.001 and is done at once, plus its 0 s tail: 0.001. Rank 1: the data is
     * there at 0.001 + L + 1024 * 2^-26 < 0.005, so its receive ends at 0.005, then 1 ms. */
    assert_true(fabs(r.time - 0.006) < EPS);
    assert_true(fabs(r.comm - 0.0) < EPS);
    fc__replay_result_clear(&r);
    fc__replay_free(rp);
}

/* Two rendezvous flows out of one node into another share both NICs (fair share: half each);
 * on four nodes they do not meet. */
static void test_contention(void **state)
{
    (void)state;
    fc__replay *rp = two_flows();
    assert_int_equal(rp->nmsgs, 2);
    assert_int_equal(rp->max_slots, 2);
    uint32_t observed[4] = {0, 0, 1, 1}, spread[4] = {0, 1, 2, 3};
    fc__replay_result r = run(rp, observed, 2, FC_MODEL_FAIRSHARE);
    assert_true(fabs(r.time - (0.001 + L + 2 * W)) < EPS);
    fc__replay_result_clear(&r);
    r = run(rp, spread, 4, FC_MODEL_FAIRSHARE);
    assert_true(fabs(r.time - (0.001 + L + W)) < EPS);
    fc__replay_result_clear(&r);
    fc__replay_free(rp);
}

/* Irecv + Isend + Waitall both ways: opposite directions do not share a NIC direction. */
static void test_waitall_exchange(void **state)
{
    (void)state;
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    for (int r = 0; r < 2; r++) {
        uint64_t base = 1000 * (uint64_t)(r + 1); /* rank 0 at 1 ms, rank 1 at 2 ms */
        add(&rk[r], FC_EV_MPI_Irecv, base, base, 1 - r, 0, MIB, 0x10, 0);
        add(&rk[r], FC_EV_MPI_Isend, base + 1, base + 1, 1 - r, 0, MIB, 0x20, 0);
        add(&rk[r], FC_EV_MPI_Waitall, base + 1, 30000, FC_PEER_NONE, 0, 0, 0, 0);
        add(&rk[r], FC_EV_COMPLETE, 30000, 30000, 1 - r, 0, MIB, 0x10, FC_EVF_STATUS);
        add(&rk[r], FC_EV_COMPLETE, 30000, 30000, FC_PEER_NONE, 0, 0, 0x20, 0);
        add(&rk[r], FC_EV_MPI_Finalize, 31000, 31000, FC_PEER_NONE, 0, 0, 0, 0);
    }
    fc__replay *rp = build(rk, 2);
    assert_int_equal(rp->nmsgs, 2);
    uint32_t pl[2] = {0, 1};
    fc__replay_result r = run(rp, pl, 2, FC_MODEL_FAIRSHARE);
    /* 0 -> 1 starts at 0.002 (rank 1's Irecv), 1 -> 0 at 0.002001 (rank 1's Isend); each rank's
     * Waitall ends with the later arrival, 0.002001 + L + W, then 1 ms of tail. */
    assert_true(fabs(r.time - (0.002001 + L + W + 0.001)) < EPS);
    fc__replay_result_clear(&r);
    fc__replay_free(rp);
}

/* MPI_Barrier of 4 ranks on 4 nodes: dissemination, two rounds of 0-byte messages (latency L). */
static void test_barrier(void **state)
{
    (void)state;
    trank rk[4] = {{.node = "a"}, {.node = "b"}, {.node = "c"}, {.node = "d"}};
    for (int r = 0; r < 4; r++) {
        add(&rk[r], FC_EV_MPI_Barrier, 1000, 3000, FC_PEER_NONE, 0, 0, 0, 0);
        add(&rk[r], FC_EV_MPI_Finalize, 3000, 3000, FC_PEER_NONE, 0, 0, 0, 0);
    }
    fc__replay *rp = build(rk, 4);
    assert_int_equal(rp->colls, 4);
    assert_int_equal(rp->nmsgs, 8);
    uint32_t pl[4] = {0, 1, 2, 3};
    fc__replay_result r = run(rp, pl, 4, FC_MODEL_LINEAR);
    assert_true(fabs(r.time - (0.001 + 2 * L)) < EPS);
    fc__replay_result_clear(&r);
    fc__replay_free(rp);
}

/* ---- collective expansion ---------------------------------------------------------------------- */

typedef struct rec {
    int send;
    uint32_t peer;
    uint64_t bytes;
} rec;

typedef struct recorder {
    rec v[256];
    size_t n, waits;
} recorder;

static int rec_post(void *ctx, int send, uint32_t peer, uint64_t bytes)
{
    recorder *r = ctx;
    assert_true(r->n < 256);
    r->v[r->n++] = (rec){send, peer, bytes};
    return 0;
}

static int rec_wait(void *ctx)
{
    ((recorder *)ctx)->waits++;
    return 0;
}

static void expand(unsigned kind, uint32_t p, uint32_t root, uint64_t n, recorder *out)
{
    for (uint32_t me = 0; me < p; me++) {
        memset(&out[me], 0, sizeof out[me]);
        fc__coll_sink s = {.post = rec_post, .wait = rec_wait, .ctx = &out[me]};
        assert_int_equal(fc__coll_expand(kind, fc__coll_select(kind, p, n, NULL), p, me, root, n, n, &s), 0);
    }
}

/* MPICH's binomial tree for 8 ranks (short message): 0>4, 0>2, 4>6, 0>1, 2>3, 4>5, 6>7, each
 * rank receiving once from its parent first. */
static void test_bcast_binomial(void **state)
{
    (void)state;
    recorder r[8];
    static const uint32_t parent[8] = {0, 0, 0, 2, 0, 4, 4, 6};
    static const uint32_t children[8][3] = {{4, 2, 1}, {0}, {3}, {0}, {6, 5}, {0}, {7}, {0}};
    static const size_t nchildren[8] = {3, 0, 1, 0, 2, 0, 1, 0};
    expand(FC_EV_MPI_Bcast, 8, 0, 1000, r);
    for (uint32_t me = 0; me < 8; me++) {
        size_t k = 0;
        if (me != 0) {
            assert_int_equal(r[me].v[0].send, 0);
            assert_int_equal(r[me].v[0].peer, parent[me]);
            k = 1;
        }
        assert_int_equal(r[me].n, k + nchildren[me]);
        for (size_t c = 0; c < nchildren[me]; c++) {
            assert_int_equal(r[me].v[k + c].send, 1);
            assert_int_equal(r[me].v[k + c].peer, children[me][c]);
            assert_int_equal(r[me].v[k + c].bytes, 1000);
        }
    }
}

/* Every expansion is consistent: what a sends to b, b receives from a, in the same number; and
 * the barrier of 5 ranks sends to me+1, me+2, me+4. */
static void test_coll_consistent(void **state)
{
    (void)state;
    static const unsigned kinds[] = {FC_EV_MPI_Barrier, FC_EV_MPI_Bcast, FC_EV_MPI_Allreduce, FC_EV_MPI_Reduce,
                                     FC_EV_MPI_Allgather, FC_EV_MPI_Gather, FC_EV_MPI_Scatter, FC_EV_MPI_Alltoall,
                                     FC_EV_MPI_Reduce_scatter, FC_EV_MPI_Scan, FC_EV_MPI_Gatherv};
    static const uint64_t sizes[] = {8, 4096, 100000, 4000000};
    recorder *r = calloc(12, sizeof *r);
    assert_non_null(r);
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (uint32_t p = 2; p <= 12; p++)
            for (size_t z = 0; z < 4; z++)
                for (uint32_t root = 0; root < p; root += p - 1) {
                    expand(kinds[k], p, root, sizes[z], r);
                    for (uint32_t a = 0; a < p; a++)
                        for (uint32_t b = 0; b < p; b++) {
                            size_t sent = 0, got = 0;
                            for (size_t i = 0; i < r[a].n; i++)
                                sent += r[a].v[i].send && r[a].v[i].peer == b;
                            for (size_t i = 0; i < r[b].n; i++)
                                got += !r[b].v[i].send && r[b].v[i].peer == a;
                            if (sent != got)
                                fail_msg("kind %u p %u n %llu root %u: %u sends %zu to %u, which receives %zu",
                                         kinds[k], p, (unsigned long long)sizes[z], root, a, sent, b, got);
                        }
                    if (root == p - 1)
                        break;
                }
    expand(FC_EV_MPI_Barrier, 5, 0, 0, r);
    for (uint32_t me = 0; me < 5; me++) {
        assert_int_equal(r[me].n, 6);
        assert_int_equal(r[me].waits, 3);
        assert_int_equal(r[me].v[0].peer, (me + 1) % 5);
        assert_int_equal(r[me].v[2].peer, (me + 2) % 5);
        assert_int_equal(r[me].v[4].peer, (me + 4) % 5);
    }
    free(r);
}

/* ---- messages replayed with their observed times (fc__rmsg.fixed) ------------------------------ */

/* An eager message of 1 KiB, its receiver late: the bytes leave at the send (0.001) and are there
 * at 0.001 + L + 2^-16 s, long before the receiver enters MPI_Recv at 0.005; as a fixed message
 * of fixed_s = 3 ms it arrives 3 ms after both its bytes and its receiver are there: 0.008, then
 * the receiver's 1 ms of tail. */
static void test_fixed_eager(void **state)
{
    (void)state;
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Send, 1000, 1001, 1, 0, 1024, 0, 0);
    add(&rk[0], FC_EV_MPI_Finalize, 1001, 1001, FC_PEER_NONE, 0, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv, 5000, 5002, 0, 0, 1024, 0, 0);
    add(&rk[1], FC_EV_MPI_Finalize, 6002, 6002, FC_PEER_NONE, 0, 0, 0, 0);
    fc__replay *rp = build(rk, 2);
    assert_int_equal(rp->nmsgs, 1);
    rp->msgs[0].fixed = 1;
    rp->msgs[0].fixed_s = 0.003;
    uint32_t pl[2] = {0, 1};
    fc__replay_result r = run(rp, pl, 2, FC_MODEL_FAIRSHARE);
    assert_true(fabs(r.time - 0.009) < EPS);
    assert_true(fabs(r.comm - 0.003) < EPS); /* rank 1 in MPI from 0.005 to 0.008 */
    fc__replay_result_clear(&r);
    /* Its bytes arrive after the receiver is there when the receiver is early: posted at 0.005,
     * a send at 0.0049999 (rank 0 computes 4.9999 ms) gives bytes at 0.0049999 + L + 2^-16, then
     * 3 ms more. */
    rp->prog[0].ops[0].compute = 0.0049999;
    r = run(rp, pl, 2, FC_MODEL_FAIRSHARE);
    double bytes = 0.0049999 + L + 1024.0 / 67108864;
    assert_true(fabs(r.time - (bytes + 0.003 + 0.001)) < EPS);
    fc__replay_result_clear(&r);

    /* The split of an observed time of 3 ms: under the observed timeline the bytes were there
     * before the receiver, so the network explains none of it. */
    rp->prog[0].ops[0].compute = 0.001;
    rp->msgs[0].fixed_obs = 0.003;
    fc__profile *p = platform();
    fc__replay_opts o = {.profile = p, .model = FC_MODEL_FAIRSHARE, .eager = 262144};
    assert_int_equal(fc__replay_split(rp, &o), 0);
    assert_true(fabs(rp->msgs[0].fixed_s - 0.003) < EPS);
    fc__profile_free(p);
    fc__replay_free(rp);
}

/* A rendezvous message of 1 MiB whose sender computes until 0.010 before its MPI_Wait: its bytes
 * move from both posts (0.001) on and take L + W; as a fixed message of fixed_s = 12 ms it
 * arrives 12 ms after them, at 0.001 + L + W + 0.012, after the sender entered its Wait; the
 * receiver ends 2 ms later. On one node the same with the intra-node figures. */
static void test_fixed_rendezvous(void **state)
{
    (void)state;
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Isend, 1000, 1000, 1, 0, MIB, 0x20, 0);
    add(&rk[0], FC_EV_MPI_Wait, 10000, 30000, FC_PEER_NONE, 0, 0, 0, 0);
    add(&rk[0], FC_EV_COMPLETE, 30000, 30000, FC_PEER_NONE, 0, 0, 0x20, 0);
    add(&rk[0], FC_EV_MPI_Finalize, 31000, 31000, FC_PEER_NONE, 0, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Irecv, 500, 500, 0, 0, MIB, 0x10, 0);
    add(&rk[1], FC_EV_MPI_Wait, 2000, 30000, FC_PEER_NONE, 0, 0, 0, 0);
    add(&rk[1], FC_EV_COMPLETE, 30000, 30000, 0, 0, MIB, 0x10, FC_EVF_STATUS);
    add(&rk[1], FC_EV_MPI_Finalize, 32000, 32000, FC_PEER_NONE, 0, 0, 0, 0);
    fc__replay *rp = build(rk, 2);
    assert_int_equal(rp->nmsgs, 1);
    uint32_t apart[2] = {0, 1}, together[2] = {0, 0};
    fc__replay_result r = run(rp, apart, 2, FC_MODEL_FAIRSHARE);
    assert_true(fabs(r.time - (0.001 + L + W + 0.002)) < EPS); /* rank 1's 2 ms of tail */
    fc__replay_result_clear(&r);

    rp->msgs[0].fixed = 1;
    rp->msgs[0].fixed_s = 0.012;
    r = run(rp, apart, 2, FC_MODEL_FAIRSHARE);
    assert_true(fabs(r.time - (0.001 + L + W + 0.012 + 0.002)) < EPS);
    fc__replay_result_clear(&r);
    r = run(rp, together, 2, FC_MODEL_FAIRSHARE);
    assert_true(fabs(r.time - (0.001 + LI + 1.0 / 1024 + 0.012 + 0.002)) < EPS);
    fc__replay_result_clear(&r);

    /* The split of an observed 20 ms: L + W of it is the network's under the observed
     * placement, the rest stays. */
    rp->msgs[0].fixed_obs = 0.020;
    fc__profile *p = platform();
    fc__replay_opts o = {.profile = p, .model = FC_MODEL_FAIRSHARE, .eager = 262144};
    assert_int_equal(fc__replay_split(rp, &o), 0);
    assert_true(fabs(rp->msgs[0].fixed_s - (0.020 - L - W)) < EPS);
    /* Observed faster than the network: nothing left to add. */
    rp->msgs[0].fixed_obs = 0.010;
    assert_int_equal(fc__replay_split(rp, &o), 0);
    assert_true(rp->msgs[0].fixed_s == 0);
    fc__profile_free(p);
    fc__replay_free(rp);
}

/* Two fixed messages out of one node into another still share its NIC (fair share: 2 W each),
 * and their fixed part follows: the network part of their time is the placement's. */
static void test_fixed_contention(void **state)
{
    (void)state;
    fc__replay *rp = two_flows();
    assert_int_equal(rp->nmsgs, 2);
    for (int i = 0; i < 2; i++) {
        rp->msgs[i].fixed = 1;
        rp->msgs[i].fixed_s = 0.001;
    }
    uint32_t observed[4] = {0, 0, 1, 1}, spread[4] = {0, 1, 2, 3};
    fc__replay_result r = run(rp, observed, 2, FC_MODEL_FAIRSHARE);
    assert_true(fabs(r.time - (0.001 + L + 2 * W + 0.001)) < EPS);
    fc__replay_result_clear(&r);
    r = run(rp, spread, 4, FC_MODEL_FAIRSHARE);
    assert_true(fabs(r.time - (0.001 + L + W + 0.001)) < EPS);
    fc__replay_result_clear(&r);
    fc__replay_free(rp);
}

/* fc__replay_fix on a trace: an eager message whose receiver came 4 ms late (late-peer: its
 * observed 4.002 ms are 4 ms of waiting) keeps the 2 us after the receiver came; a rendezvous one
 * of 1 MiB that took 17 ms with both ends in MPI throughout (L + W = 16.6 ms on the wire: network)
 * stays simulated. Ranks without affinity lists: nothing oversubscribed. */
static void test_fix_classes(void **state)
{
    (void)state;
    trank rk[2] = {{.node = "a"}, {.node = "b"}};
    add(&rk[0], FC_EV_MPI_Send, 1000, 1001, 1, 1, 1024, 0, 0);
    add(&rk[0], FC_EV_MPI_Send, 6000, 23000, 1, 2, MIB, 0, 0);
    add(&rk[0], FC_EV_MPI_Finalize, 24000, 24000, FC_PEER_NONE, 0, 0, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv, 5000, 5002, 0, 1, 1024, 0, 0);
    add(&rk[1], FC_EV_MPI_Recv, 6000, 23000, 0, 2, MIB, 0, 0);
    add(&rk[1], FC_EV_MPI_Finalize, 24000, 24000, FC_PEER_NONE, 0, 0, 0, 0);
    char dir[4096];
    make_scratch(dir, sizeof dir);
    write_world(dir, rk, 2, 0);
    fc_trace *t;
    fc__replay *rp;
    fc__match *m;
    fc__colls *colls = NULL;
    fc__observation *ob;
    fc__profile *p = platform();
    assert_int_equal(fc_trace_open(dir, &t), 0);
    assert_int_equal(fc__replay_build(t, &rp), 0);
    assert_int_equal(fc__match_trace(t, 262144, &m), 0);
    assert_int_equal(fc__colls_add(t, m, &colls), 0);
    assert_int_equal(fc__observe_new(t, m, 0, &ob), 0);
    fc__observe_classify(ob, m, p);
    assert_int_equal(fc__replay_fix(rp, m, ob), 0);
    assert_int_equal(rp->inter_flows, 2);
    assert_int_equal(rp->mapped_flows, 2);
    assert_int_equal(rp->fixed_flows, 1);
    assert_int_equal(rp->nmsgs, 2);
    for (size_t i = 0; i < 2; i++) {
        const fc__rmsg *g = &rp->msgs[i];
        if (g->bytes == 1024) {
            assert_int_equal(g->fixed, 1);
            assert_true(fabs(g->fixed_obs - 2e-6) < EPS);
        } else {
            assert_int_equal(g->fixed, 0);
        }
    }
    fc__observation_free(ob);
    fc__colls_free(colls);
    fc__match_free(m);
    fc__replay_free(rp);
    fc__profile_free(p);
    fc_trace_close(t);
    rm_scratch(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rendezvous),     cmocka_unit_test(test_eager_late_receiver),
        cmocka_unit_test(test_contention),     cmocka_unit_test(test_waitall_exchange),
        cmocka_unit_test(test_barrier),        cmocka_unit_test(test_bcast_binomial),
        cmocka_unit_test(test_coll_consistent), cmocka_unit_test(test_fixed_eager),
        cmocka_unit_test(test_fixed_rendezvous), cmocka_unit_test(test_fixed_contention),
        cmocka_unit_test(test_fix_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
