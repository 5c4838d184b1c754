/* tests/unit/test-model-bcast.c: Table 4 of Martinasso & Mehaut (2006), the binomial broadcast of
 * 10 MB on four dual nodes under mappings A and B, replayed step by step through the fluid
 * simulation and checked against the table's predictions to its rounding (three decimals).
 *
 * The figures the report gives and the ones it implies:
 *   T(f|NC) = T_B_indep / 3 = 0.267 / 3 = 0.089 s for 10^7 bytes between nodes (GigaEth rows;
 *   0.136 / 3 s on Myrinet), with Table 1's latency (4.7 us LAM, 5.8 us Mpich, 3.5 us Myrinet),
 *   so per_byte = (T(f|NC) - L) / 10^7;
 *   T_intra = T_A - 2 T(f|NC): 0.197 - 0.178 = 0.019 s (LAM), 0.200 - 0.178 = 0.022 s (Mpich),
 *   0.104 - 0.272 / 3 = 0.013333 s (Myrinet), taken as an intra-node segment without latency;
 *   the mixed conflict C->X-> of Table 2: (0, 3) on GigaEth, (0, 0) on Myrinet, and its
 *   same-direction cuts, which this broadcast never uses.
 *
 * The tree (examples/bcast.c): step 1 0->4; step 2 0->2, 4->6; step 3 0->1, 2->3, 4->5, 6->7. A
 * rank sends once it holds the data and its previous send has completed. Mapping A (ranks 2j,
 * 2j+1 on node j) keeps step 3 inside nodes: T_A = 2 T(NC) + T_intra. Mapping B (node of rank r:
 * 0 3 1 0 2 1 3 2) makes step 3 a cycle node0 -> node3 -> node2 -> node1 -> node0: every node
 * sends one message and receives one, the rules pair them into two mixed conflicts, the entering
 * flows move at full speed and the leaving ones at 1/4 until those end (after T), then alone:
 * T(f|C) = L + 1.75 (T - L), so T_B = 2 T + 1.75 T - 0.75 L = 3.75 * 0.089 - 0.75 * 4.7e-6
 * = 0.33375 - 0.0000035 = 0.3337465 s, Table 4's 0.334. With no contention (linear):
 * T_B_indep = 3 T = 0.267 s. Myrinet's (0, 0) gives T_B = T_B_indep = 0.136 s. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "model/model.h"

/* cmocka 1.1 has no assert_double_equal: |a - b| <= tol, with both values shown on failure. */
#define assert_near(a, b, tol) near_((a), (b), (tol), __FILE__, __LINE__)
static void near_(double a, double b, double tol, const char *file, int line)
{
    if (!(fabs(a - b) <= tol)) {
        print_error("%.17g is not %.17g within %g\n", a, b, tol);
        _fail(file, line);
    }
}

#define BYTES 10000000u

static const uint32_t map_a[8] = {0, 0, 1, 1, 2, 2, 3, 3};
static const uint32_t map_b[8] = {0, 3, 1, 0, 2, 1, 3, 2};

typedef struct row {
    const char *name;
    double lat, t_nc, t_intra;
    double mixed_in, mixed_out, same[2];
    double t_a, t_b, t_b_indep; /* Table 4's predictions */
} row;

static const row rows[] = {
    {"GigaEth/Lam-MPI", 4.7e-6, 0.267 / 3, 0.197 - 2 * 0.267 / 3, 0, 3, {0.5, 2}, 0.197, 0.334,
     0.267},
    {"GigaEth/Mpich", 5.8e-6, 0.267 / 3, 0.200 - 2 * 0.267 / 3, 0, 3, {0.75, 4.0 / 3}, 0.200, 0.334,
     0.267},
    {"Myrinet/Mpich-MX", 3.5e-6, 0.136 / 3, 0.104 - 2 * 0.136 / 3, 0, 0, {1, 1}, 0.104, 0.136,
     0.136},
};

static fc__profile *mkprof(const row *r)
{
    fc__profile *p = fc__profile_new();
    assert_non_null(p);
    assert_int_equal(fc__profile_add_segment(p, 0, 0, UINT64_MAX, r->lat,
                                             (r->t_nc - r->lat) / BYTES, 0),
                     0);
    assert_int_equal(fc__profile_add_segment(p, 1, 0, UINT64_MAX, 0, r->t_intra / BYTES, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, FC_CONFLICT_OUTGOING, 2, r->same, 2, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, FC_CONFLICT_INCOMING, 2, r->same, 2, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, FC_CONFLICT_MIXED_IN, 2, &r->mixed_in, 1, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, FC_CONFLICT_MIXED_OUT, 2, &r->mixed_out, 1, 0), 0);
    return p;
}

static unsigned lowbit(unsigned r)
{
    return r & -r;
}

/* The next child rank r sends to after child c (c = 0: the first), or 0 when none: children are
 * r + m for m = lowbit(r)/2, ..., 1 (m = 4, 2, 1 for the root), those below 8. */
static unsigned next_child(unsigned r, unsigned c)
{
    unsigned m = c ? (c - r) / 2 : (r ? lowbit(r) / 2 : 4);
    for (; m > 0; m /= 2)
        if (r + m < 8)
            return r + m;
    return 0;
}

/* Replays the broadcast; the message to rank c has key c. Returns the time the last rank holds
 * the data. */
static double bcast(const fc__profile *p, unsigned model, const uint32_t *node)
{
    fc__net *n;
    assert_int_equal(fc__net_create(p, model, &n), 0);
    unsigned sent[8] = {0}; /* the last child each rank sent to (0: none yet) */
    /* The root holds the data at 0 and sends its first message. */
    unsigned c = next_child(0, 0);
    assert_int_equal(fc__net_start(n, 0, node[0], node[c], BYTES, c), 0);
    sent[0] = c;
    double t, last = 0;
    uint64_t key;
    int got = 0;
    while (fc__net_pop(n, &t, &key) == 1) {
        unsigned to = (unsigned)key, from = to - lowbit(to);
        got++;
        last = t;
        /* The sender goes on with its next child; the receiver starts with its first. */
        unsigned nx = next_child(from, sent[from]);
        if (nx) {
            assert_int_equal(fc__net_start(n, t, node[from], node[nx], BYTES, nx), 0);
            sent[from] = nx;
        }
        nx = next_child(to, 0);
        if (nx) {
            assert_int_equal(fc__net_start(n, t, node[to], node[nx], BYTES, nx), 0);
            sent[to] = nx;
        }
    }
    assert_int_equal(got, 7);
    fc__net_free(n);
    return last;
}

static void test_table4(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *r = &rows[i];
        fc__profile *p = mkprof(r);
        print_message("%s: A %.4f B %.4f B_indep %.4f\n", r->name,
                      bcast(p, FC_MODEL_FLOWCUT, map_a), bcast(p, FC_MODEL_FLOWCUT, map_b),
                      bcast(p, FC_MODEL_LINEAR, map_b));
        /* Table 4 prints three decimals: within half a unit of the last. */
        assert_near(bcast(p, FC_MODEL_FLOWCUT, map_a), r->t_a, 0.0005);
        assert_near(bcast(p, FC_MODEL_FLOWCUT, map_b), r->t_b, 0.0005);
        assert_near(bcast(p, FC_MODEL_LINEAR, map_b), r->t_b_indep, 0.0005);
        /* Linear does not see the conflict in A either, which has none. */
        assert_near(bcast(p, FC_MODEL_LINEAR, map_a), r->t_a, 0.0005);
        fc__profile_free(p);
    }
}

/* The exact figure behind the LAM row's rounding, from the hand derivation above. */
static void test_table4_exact(void **state)
{
    (void)state;
    fc__profile *p = mkprof(&rows[0]);
    assert_near(bcast(p, FC_MODEL_FLOWCUT, map_b), 3.75 * 0.089 - 0.75 * 4.7e-6, 1e-12);
    assert_near(bcast(p, FC_MODEL_LINEAR, map_b), 3 * 0.089, 1e-12);
    assert_near(bcast(p, FC_MODEL_FLOWCUT, map_a), 0.197, 1e-12);
    fc__profile_free(p);
}

/* The children rule itself (examples/bcast.c): 0 -> 4, 2, 1; 2 -> 3; 4 -> 6, 5; 6 -> 7. */
static void test_tree(void **state)
{
    (void)state;
    assert_int_equal(next_child(0, 0), 4);
    assert_int_equal(next_child(0, 4), 2);
    assert_int_equal(next_child(0, 2), 1);
    assert_int_equal(next_child(0, 1), 0);
    assert_int_equal(next_child(2, 0), 3);
    assert_int_equal(next_child(2, 3), 0);
    assert_int_equal(next_child(4, 0), 6);
    assert_int_equal(next_child(4, 6), 5);
    assert_int_equal(next_child(6, 0), 7);
    assert_int_equal(next_child(1, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_table4),
        cmocka_unit_test(test_table4_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
