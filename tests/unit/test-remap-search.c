/* tests/unit/test-remap-search.c: the placement search of `flowcut remap`: the number of
 * placements counted by hand, and an exhaustive search on four ranks whose best placement, and
 * the order of all three, follow by hand from the platform's figures. */
#include <math.h>
#include "scratch-trace.h"
#include "model/model.h"
#include "model/profile.h"
#include "remap/remap.h"

#define US 1000ull
#define EPS 1e-9
#define L (1.0 / 1024)   /* inter-node latency */
#define W (1.0 / 64)     /* 1 MiB at 2^-26 s per byte */
#define LI (1.0 / 16384) /* intra-node latency; 1 MiB inside a node takes 2^-10 s */
#define MIB 1048576u

/* Placements up to renaming of nodes: pairings of 4 ranks = 3; 8 ranks in pairs = 8!/(2^4 4!) =
 * 105; 6 in pairs = 15; 12 in pairs = 11!! = 10395; 3 ranks on two nodes of two slots = 3 (who is
 * alone); one slot each = 1. */
static void test_count(void **state)
{
    (void)state;
    assert_int_equal(fc__remap_count(4, 2, 2, 1000000), 3);
    assert_int_equal(fc__remap_count(8, 4, 2, 1000000), 105);
    assert_int_equal(fc__remap_count(6, 3, 2, 1000000), 15);
    assert_int_equal(fc__remap_count(12, 6, 2, 1000000), 10395);
    assert_int_equal(fc__remap_count(3, 2, 2, 1000000), 3);
    assert_int_equal(fc__remap_count(5, 5, 1, 1000000), 1);
    assert_int_equal(fc__remap_count(12, 6, 2, 100), 100);
}

/* Rank 0 sends 1 MiB to rank 1 and rank 2 to rank 3, both at 1 ms, traced with {0,2} on node a and
 * {1,3} on node b. By hand (fair share): observed {0,2}{1,3}: both flows leave a and enter b,
 * 0.001 + L + 2W; {0,3}{1,2}: the flows go opposite ways, 0.001 + L + W; {0,1}{2,3}: both inside
 * a node, 0.001 + LI + 2^-10, the best, with ranks 1 and 2 moved. */
static void test_exhaustive(void **state)
{
    (void)state;
    char dir[4096];
    const char *node[4] = {"a", "b", "a", "b"};
    trank rk[4];
    memset(rk, 0, sizeof rk);
    for (uint32_t i = 0; i < 4; i++) {
        rk[i].node = node[i];
        rk[i].ev[0] = ev_make(i % 2 ? FC_EV_MPI_Recv : FC_EV_MPI_Send, (i % 2 ? 500 : 1000) * US, 40000 * US,
                              i % 2 ? i - 1 : i + 1, 0, 0, MIB, 0);
        rk[i].ev[1] = ev_make(FC_EV_MPI_Finalize, 40000 * US, 40000 * US, FC_PEER_NONE, 0, 0, 0, 0);
        rk[i].n = 2;
    }
    make_scratch(dir, sizeof dir);
    write_world(dir, rk, 4, 0);
    fc_trace *t;
    fc__replay *rp;
    assert_int_equal(fc_trace_open(dir, &t), 0);
    assert_int_equal(fc__replay_build(t, &rp), 0);
    fc_trace_close(t);
    rm_scratch(dir);

    fc__profile *p = fc__profile_new();
    assert_non_null(p);
    assert_int_equal(fc__profile_add_segment(p, 0, 0, UINT64_MAX, L, 1.0 / 67108864, 0), 0);
    assert_int_equal(fc__profile_add_segment(p, 1, 0, UINT64_MAX, LI, 1.0 / 1073741824, 0), 0);
    fc__remap_opts o = {.replay = {.profile = p, .model = FC_MODEL_FAIRSHARE, .eager = 262144},
                        .exhaustive = -1, .top = 5};
    fc__remap *rm;
    assert_int_equal(fc__remap_search(rp, &o, &rm), 0);
    assert_int_equal(rm->exhaustive, 1);
    assert_int_equal(rm->evaluated, 3);
    assert_int_equal(rm->nodes, 2);
    assert_int_equal(rm->slots, 2);
    assert_int_equal(rm->ncands, 3);
    assert_true(fabs(rm->current.time - (0.001 + L + 2 * W)) < EPS);
    assert_true(fabs(rm->observed_s - 0.040) < EPS);
    /* Both flows are in an outgoing and an incoming conflict of 2 (a tie goes to outgoing) for the
     * whole of their life, latency included: 2 flows x (L + 2W). */
    assert_true(fabs(rm->current.conflict_s[FC_CONFLICT_OUTGOING][2] - 2 * (L + 2 * W)) < EPS);

    const fc__remap_cand *best = &rm->cands[0];
    assert_true(fabs(best->time - (0.001 + LI + 1.0 / 1024)) < EPS);
    assert_int_equal(best->moved, 2);
    /* Renamed to move the fewest ranks: 0 stays on a (node 0), 3 on b (node 1). */
    assert_int_equal(best->rank_node[0], 0);
    assert_int_equal(best->rank_node[1], 0);
    assert_int_equal(best->rank_node[2], 1);
    assert_int_equal(best->rank_node[3], 1);
    assert_true(fabs(best->gain_pct - 100 * (rm->current.time - best->time) / rm->current.time) < 1e-9);
    for (int k = 1; k < 5; k++)
        for (int j = 2; j <= FC_REMAP_MAXK; j++)
            assert_true(best->conflict_s[k][j] == 0);
    assert_true(fabs(rm->cands[1].time - (0.001 + L + W)) < EPS);
    assert_true(fabs(rm->cands[2].time - rm->current.time) < EPS);
    assert_int_equal(rm->cands[2].moved, 0);
    fc__remap_free(rm);

    /* Three nodes of two slots: the local search finds the same best placement. */
    o.exhaustive = 0;
    o.nodes = 3;
    o.slots = 2;
    assert_int_equal(fc__remap_search(rp, &o, &rm), 0);
    assert_int_equal(rm->exhaustive, 0);
    assert_true(fabs(rm->cands[0].time - (0.001 + LI + 1.0 / 1024)) < EPS);
    fc__remap_free(rm);

    /* Too few slots is an error. */
    o.nodes = 1;
    assert_int_equal(fc__remap_search(rp, &o, &rm), FC_EINVAL);
    fc__remap_free(NULL);
    fc__profile_free(p);
    fc__replay_free(rp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_count), cmocka_unit_test(test_exhaustive)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
