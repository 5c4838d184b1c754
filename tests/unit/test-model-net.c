/* tests/unit/test-model-net.c: the fluid simulation under each contention model, against times
 * worked out by hand (interval by interval) or from Gropp's closed form. Most figures are powers
 * of two so that every event time is exact in binary and ties are real ties. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <flowcut/error.h>
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

enum { OUT = FC_CONFLICT_OUTGOING, IN = FC_CONFLICT_INCOMING, MIN = FC_CONFLICT_MIXED_IN,
       MOUT = FC_CONFLICT_MIXED_OUT };

#define MIB (1u << 20)
/* 2^-20 s per byte: a message of w MiB moves its data in w seconds when alone. */
#define PB (1.0 / MIB)

/* A profile with one inter-node segment (latency lat, PB per byte) and, for the flowcut model,
 * outgoing k=2 cuts (1, 3), incoming k=2 cuts (1, 1) and the mixed (0, 3) of Table 2. */
static fc__profile *mkprof(double lat)
{
    fc__profile *p = fc__profile_new();
    assert_non_null(p);
    assert_int_equal(fc__profile_add_segment(p, 0, 0, UINT64_MAX, lat, PB, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, OUT, 2, (double[]){1, 3}, 2, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, IN, 2, (double[]){1, 1}, 2, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, MIN, 2, (double[]){0}, 1, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, MOUT, 2, (double[]){3}, 1, 0), 0);
    return p;
}

static void expect_pop(fc__net *n, uint64_t key, double t)
{
    double got;
    uint64_t k;
    assert_int_equal(fc__net_pop(n, &got, &k), 1);
    assert_int_equal(k, key);
    assert_near(got, t, 1e-12 * (1 + fabs(t)));
}

/* linear: every message takes exactly the profile's time, whatever else is in flight. */
static void test_linear_is_profile(void **state)
{
    (void)state;
    fc__profile *p = fc__profile_new();
    assert_non_null(p);
    /* Two inter-node segments and one intra-node one. */
    assert_int_equal(fc__profile_add_segment(p, 0, 0, 1024, 1e-5, 1e-9, 0), 0);
    assert_int_equal(fc__profile_add_segment(p, 0, 1024, UINT64_MAX, 2e-5, 5e-10, 0), 0);
    assert_int_equal(fc__profile_add_segment(p, 1, 0, UINT64_MAX, 1e-6, 1e-10, 0), 0);
    fc__net *n;
    assert_int_equal(fc__net_create(p, FC_MODEL_LINEAR, &n), 0);
    /* Three messages out of node 0 and one inside node 2, all at 0:
     * 100 B:  1e-5 + 100 * 1e-9    = 1.01e-5 s
     * 4096 B: 2e-5 + 4096 * 5e-10  = 2.2048e-5 s
     * 2000 B: 2e-5 + 2000 * 5e-10  = 2.1e-5 s
     * intra 1000 B: 1e-6 + 1000 * 1e-10 = 1.1e-6 s */
    assert_int_equal(fc__net_start(n, 0, 0, 1, 100, 0), 0);
    assert_int_equal(fc__net_start(n, 0, 0, 2, 4096, 1), 0);
    assert_int_equal(fc__net_start(n, 0, 0, 3, 2000, 2), 0);
    assert_int_equal(fc__net_start(n, 0, 2, 2, 1000, 3), 0);
    assert_near(fc__net_next(n), 1.1e-6, 1e-18);
    expect_pop(n, 3, 1.1e-6);
    expect_pop(n, 0, 1.01e-5);
    expect_pop(n, 2, 2.1e-5);
    expect_pop(n, 1, 2.2048e-5);
    double t;
    uint64_t k;
    assert_int_equal(fc__net_pop(n, &t, &k), 0);
    assert_true(isinf(fc__net_next(n)));
    fc__net_free(n);
    fc__profile_free(p);
}

/* 0>1>2 synchronous, equal: flow A enters node 1 (mixed-in, alpha 0), B leaves it (mixed-out,
 * alpha 3, speed 1/4). A: T. B: T/4 done by T, 3T/4 left alone: 1.75 T. With a latency L, the
 * latency is not cut: L + T and L + 1.75 T. */
static void test_mixed_pair(void **state)
{
    (void)state;
    for (int withlat = 0; withlat < 2; withlat++) {
        double L = withlat ? 1.0 / 1024 : 0;
        fc__profile *p = mkprof(L);
        fc__net *n;
        assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
        assert_int_equal(fc__net_start(n, 0, 0, 1, MIB, 0), 0);
        assert_int_equal(fc__net_start(n, 0, 1, 2, MIB, 1), 0);
        expect_pop(n, 0, L + 1.0);
        expect_pop(n, 1, L + 1.75);
        fc__net_free(n);
        fc__profile_free(p);
    }
}

/* The opposite direction's delay (profile opposite entries k = 1: D_IN 0.5 s, D_OUT 0.25 s; k = 2:
 * D_IN 1 s, D_OUT 0.5 s), flowcut model, fair same-direction cuts, no mixed cuts (full duplex), no
 * late joiner. Worked by hand (1 MiB moves in 1 s alone):
 * - A (1->2, 2 MiB) at 0, then B (0->1, 1 MiB) at 0: A alone fills node 1's output, so B, entering
 *   node 1, waits D_IN(1) = 0.5 and ends at 1.5; A, decided alone, waits nothing and ends at 2.
 *   (D_OUT in its place would end B at 1.25; without the entries B ends at 1.)
 * - A (1->2) and C (3->2), 2 MiB each, at 0, then B (0->1, 1 MiB) at 0.25: A moves at 1/2, held
 *   back by node 2's input, and node 1's output is not full: B waits nothing and ends at 1.25; A
 *   and C end at 4.
 * - A1 (1->2) and A2 (1->3), 4 MiB each, at 0, then B (0->1, 1 MiB) at 0.5: node 1's output is
 *   full with 2 messages, B waits D_IN(2) = 1 and ends at 2.5; A1 and A2 move at 1/2 and end at 8.
 * - B (0->2, 1 MiB) at 0.5 after A (1->0, 2 MiB) at 0: node 0's input is full with A, so B,
 *   leaving node 0, waits D_OUT(1) = 0.25 and ends at 1.75.
 * - On a half-duplex NIC (mixed cuts 1, 1) the first case has no delay: A and B share node 1's one
 *   resource, B ends at 2 and A at 3. And fairshare ignores the entries: B ends at 1. */
static void test_opposite_delay(void **state)
{
    (void)state;
    fc__profile *p = fc__profile_new();
    assert_non_null(p);
    assert_int_equal(fc__profile_add_segment(p, 0, 0, UINT64_MAX, 0, PB, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, OUT, 2, (double[]){1, 1}, 2, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, IN, 2, (double[]){1, 1}, 2, 0), 0);
    assert_int_equal(fc__profile_add_opposite(p, 1, 0.5, 0.25, 0), 0);
    assert_int_equal(fc__profile_add_opposite(p, 2, 1, 0.5, 0), 0);
    fc__net *n;
    assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
    assert_int_equal(fc__net_start(n, 0, 1, 2, 2 * MIB, 0), 0);
    assert_int_equal(fc__net_start(n, 0, 0, 1, MIB, 1), 0);
    expect_pop(n, 1, 1.5);
    expect_pop(n, 0, 2.0);
    fc__net_free(n);

    assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
    assert_int_equal(fc__net_start(n, 0, 1, 2, 2 * MIB, 0), 0);
    assert_int_equal(fc__net_start(n, 0, 3, 2, 2 * MIB, 1), 0);
    assert_int_equal(fc__net_start(n, 0.25, 0, 1, MIB, 2), 0);
    expect_pop(n, 2, 1.25);
    expect_pop(n, 0, 4.0);
    expect_pop(n, 1, 4.0);
    fc__net_free(n);

    assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
    assert_int_equal(fc__net_start(n, 0, 1, 2, 4 * MIB, 0), 0);
    assert_int_equal(fc__net_start(n, 0, 1, 3, 4 * MIB, 1), 0);
    assert_int_equal(fc__net_start(n, 0.5, 0, 1, MIB, 2), 0);
    expect_pop(n, 2, 2.5);
    expect_pop(n, 0, 8.0);
    expect_pop(n, 1, 8.0);
    fc__net_free(n);

    assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
    assert_int_equal(fc__net_start(n, 0, 1, 0, 2 * MIB, 0), 0);
    assert_int_equal(fc__net_start(n, 0.5, 0, 2, MIB, 1), 0);
    expect_pop(n, 1, 1.75);
    expect_pop(n, 0, 2.0);
    fc__net_free(n);

    assert_int_equal(fc__net_create(p, FC_MODEL_FAIRSHARE, &n), 0);
    assert_int_equal(fc__net_start(n, 0, 1, 2, 2 * MIB, 0), 0);
    assert_int_equal(fc__net_start(n, 0, 0, 1, MIB, 1), 0);
    expect_pop(n, 1, 1.0);
    expect_pop(n, 0, 2.0);
    fc__net_free(n);

    assert_int_equal(fc__profile_add_cut(p, MIN, 2, (double[]){1}, 1, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, MOUT, 2, (double[]){1}, 1, 0), 0);
    assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
    assert_int_equal(fc__net_start(n, 0, 1, 2, 2 * MIB, 0), 0);
    assert_int_equal(fc__net_start(n, 0, 0, 1, MIB, 1), 0);
    expect_pop(n, 1, 2.0);
    expect_pop(n, 0, 3.0);
    fc__net_free(n);
    fc__profile_free(p);
}

/* The flowcut model with a late-joiner record (g = 1) in the profile of mkprof (outgoing cuts
 * (1, 1) here: a fair pair). Worked by hand:
 * - A (0->1, 2 MiB) at 0, B (0->2, 1 MiB) at 0.5: A alone until 0.5 (1.5 s of work left). B joins
 *   one older flow on node 0's output: weight 1 / (1 + 1) = 1/2 against A's 1, so A moves at 2/3
 *   and B at 1/3. A's 1.5 s take 2.25 s: A ends at 2.75, B has done 0.75 and ends alone at 3.0.
 *   Without the record the pair splits evenly: B ends at 2.5, A at 3.0.
 * - Two flows of 1 MiB starting together out of node 0 weigh the same: both end at 2.0, as the
 *   cuts (1, 1) give.
 * - A mixed pair keeps its cut: A (0->1) at 0, B (1->2) at 0.5, 1 MiB each: B joins no flow on its
 *   NIC directions (weight 1) but is mixed-out (alpha 3, speed 1/4): A ends at 1.0; B has done
 *   0.125 by then and ends alone at 1.875. */
static void test_latejoin_flowcut(void **state)
{
    (void)state;
    for (int with = 0; with < 2; with++) {
        fc__profile *p = mkprof(0);
        assert_int_equal(fc__profile_add_cut(p, OUT, 3, (double[]){2, 2, 2}, 3, 0), 0);
        /* outgoing k = 2 as a fair pair for this test: replace mkprof's (1, 3) */
        for (size_t i = 0; i < p->ncuts; i++)
            if (p->cuts[i].kind == OUT && p->cuts[i].k == 2)
                p->cuts[i].alpha[1] = 1;
        p->has_latejoin = with;
        p->latejoin_g = 1;
        p->latejoin_kmax = 8;
        fc__net *n;
        assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
        assert_int_equal(fc__net_start(n, 0, 0, 1, 2 * MIB, 0), 0);
        assert_int_equal(fc__net_start(n, 0.5, 0, 2, MIB, 1), 0);
        if (with) {
            expect_pop(n, 0, 2.75);
            expect_pop(n, 1, 3.0);
        } else {
            expect_pop(n, 1, 2.5);
            expect_pop(n, 0, 3.0);
        }
        fc__net_free(n);
        assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
        assert_int_equal(fc__net_start(n, 0, 0, 1, MIB, 0), 0);
        assert_int_equal(fc__net_start(n, 0, 0, 2, MIB, 1), 0);
        expect_pop(n, 0, 2.0);
        expect_pop(n, 1, 2.0);
        fc__net_free(n);
        assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
        assert_int_equal(fc__net_start(n, 0, 0, 1, MIB, 0), 0);
        assert_int_equal(fc__net_start(n, 0.5, 1, 2, MIB, 1), 0);
        expect_pop(n, 0, 1.0);
        expect_pop(n, 1, 1.875);
        fc__net_free(n);
        fc__profile_free(p);
    }
}

/* A half-duplex NIC (both mixed cuts 1, as a calibration on one measures them) is one resource
 * for the late joiner's share: A (0->1, 2 MiB) at 0, B (1->2, 1 MiB) at 0.5 share node 1's NIC,
 * B joining one older flow there (g = 1: weight 1/2). Worked as in test_latejoin_flowcut: A
 * moves at 2/3 and B at 1/3 from 0.5, A ends at 2.75 and B alone at 3.0. With the mixed cuts
 * (0, 3) of mkprof, the full-duplex reading, B is not a late joiner (no older flow on node 1's
 * output) and keeps its cut: A ends at 2.0, B (1/4 until 2.0: 0.375 done) at 2.625. */
static void test_latejoin_half_duplex(void **state)
{
    (void)state;
    for (int half = 0; half < 2; half++) {
        fc__profile *p = mkprof(0);
        if (half)
            for (size_t i = 0; i < p->ncuts; i++)
                if (p->cuts[i].kind == MIN || p->cuts[i].kind == MOUT)
                    p->cuts[i].alpha[0] = 1;
        p->has_latejoin = 1;
        p->latejoin_g = 1;
        fc__net *n;
        assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
        assert_int_equal(fc__net_start(n, 0, 0, 1, 2 * MIB, 0), 0);
        assert_int_equal(fc__net_start(n, 0.5, 1, 2, MIB, 1), 0);
        if (half) {
            expect_pop(n, 0, 2.75);
            expect_pop(n, 1, 3.0);
        } else {
            expect_pop(n, 0, 2.0);
            expect_pop(n, 1, 2.625);
        }
        fc__net_free(n);
        fc__profile_free(p);
    }
}

/* A serial connection (the profile's connection record): A (0->1, 2 MiB) and B (0->1, 1 MiB) of one
 * connection and C (0->2, 1 MiB) of another, all at 0. Worked by hand:
 * - fairshare, serial: B waits for A; A and C share node 0's output at 1/2 each: C ends at 2.0,
 *   A (1 MiB left) alone at 3.0, then B alone at 4.0;
 * - fairshare, parallel or no record: the three share node 0's output at 1/3: B and C end at 3.0,
 *   A (1 MiB left) alone at 4.0;
 * - flowcut, serial: A and C are the outgoing k=2 conflict of mkprof, cuts (1, 3): A at 1/2 and
 *   C at 1/4, both done at 4.0; then B alone at 5.0;
 * - linear, serial: nothing waits: B and C at 1.0, A at 2.0. */
static void test_connection_serial(void **state)
{
    (void)state;
    struct {
        unsigned model;
        int has, serial;
        uint64_t first, second, third;
        double t1, t2, t3;
    } c[] = {
        {FC_MODEL_FAIRSHARE, 1, 1, 2, 0, 1, 2.0, 3.0, 4.0},
        {FC_MODEL_FAIRSHARE, 1, 0, 1, 2, 0, 3.0, 3.0, 4.0},
        {FC_MODEL_FAIRSHARE, 0, 1, 1, 2, 0, 3.0, 3.0, 4.0},
        {FC_MODEL_FLOWCUT, 1, 1, 0, 2, 1, 4.0, 4.0, 5.0},
        {FC_MODEL_LINEAR, 1, 1, 1, 2, 0, 1.0, 1.0, 2.0},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        fc__profile *p = mkprof(0);
        p->has_conn = c[i].has;
        p->conn_serial = c[i].serial;
        fc__net *n;
        assert_int_equal(fc__net_create(p, c[i].model, &n), 0);
        assert_int_equal(fc__net_start_conn(n, 0, 0, 1, 7, 2 * MIB, 0), 0);
        assert_int_equal(fc__net_start_conn(n, 0, 0, 1, 7, MIB, 1), 0);
        assert_int_equal(fc__net_start_conn(n, 0, 0, 2, 9, MIB, 2), 0);
        expect_pop(n, c[i].first, c[i].t1);
        expect_pop(n, c[i].second, c[i].t2);
        expect_pop(n, c[i].third, c[i].t3);
        fc__net_free(n);
        fc__profile_free(p);
    }
}

/* A connection whose messages move side by side but end in order (connection serial with
 * connection-ends 1/2 or more): A (0->1, 2 MiB) and B (0->1, 1 MiB) of one connection and C (0->2,
 * 1/2 MiB) of another, all at 0, under fairshare; D (0->3, 1/4 MiB) joins at 3.0. Worked by hand:
 * the three share node 0's output at 1/3: C ends at 1.5 (A and B 1/2 MiB moved); A and B at 1/2:
 * B's data is through at 2.5, A has 1 MiB left; B waits for A, and A moves alone: 1/2 MiB left
 * at 3.0, when D joins; A and D at 1/2: D ends at 3.5, A (1/4 MiB left) alone at 3.75, and B with
 * it. With connection-ends below 1/2 (or none) the record is the serial connection's: B waits for A
 * before moving: A and C at 1/2 until 1.0 (C done, A 3/2 MiB left), A alone until 2.5, then B
 * alone: at 3.0 it has 1/2 MiB left and shares with D: D ends at 3.5, B (1/4 MiB left) at 3.75. The start at 3.0 comes after B's data is through (2.5)
 * and before A ends: the end of a held message's data is not a completion, so the start is
 * taken. */
static void test_connection_ordered(void **state)
{
    (void)state;
    struct {
        int ends;
        double share;
        uint64_t first, second, third, fourth;
        double t1, t2, t3, t4;
    } c[] = {
        {1, 1.0, 2, 3, 0, 1, 1.5, 3.5, 3.75, 3.75},
        {1, 0.5, 2, 3, 0, 1, 1.5, 3.5, 3.75, 3.75},
        {1, 0.4, 2, 0, 3, 1, 1.0, 2.5, 3.5, 3.75},
        {0, 0.0, 2, 0, 3, 1, 1.0, 2.5, 3.5, 3.75},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        fc__profile *p = mkprof(0);
        p->has_conn = 1;
        p->conn_serial = 1;
        p->has_conn_ends = c[i].ends;
        p->conn_ends = c[i].share;
        fc__net *n;
        assert_int_equal(fc__net_create(p, FC_MODEL_FAIRSHARE, &n), 0);
        assert_int_equal(fc__net_start_conn(n, 0, 0, 1, 7, 2 * MIB, 0), 0);
        assert_int_equal(fc__net_start_conn(n, 0, 0, 1, 7, MIB, 1), 0);
        assert_int_equal(fc__net_start_conn(n, 0, 0, 2, 9, MIB / 2, 2), 0);
        expect_pop(n, c[i].first, c[i].t1);
        if (c[i].t2 < 3.0) /* serial: A ends before D joins */
            expect_pop(n, c[i].second, c[i].t2);
        assert_int_equal(fc__net_start_conn(n, 3.0, 0, 3, 11, MIB / 4, 3), 0);
        if (c[i].t2 >= 3.0)
            expect_pop(n, c[i].second, c[i].t2);
        expect_pop(n, c[i].third, c[i].t3);
        expect_pop(n, c[i].fourth, c[i].t4);
        fc__net_free(n);
        fc__profile_free(p);
    }
}

/* Runs NF drawn messages (one every ms, 8 nodes) under fairshare, message i of connection
 * conn(i), and stores the pops in order of completion. */
static void run_conns(const fc__profile *p, size_t nf, uint64_t (*conn)(uint64_t), uint64_t *order,
                      double *when)
{
    fc__net *n;
    assert_int_equal(fc__net_create(p, FC_MODEL_FAIRSHARE, &n), 0);
    uint32_t x = 777;
    size_t got = 0;
    double te;
    uint64_t k;
    for (uint64_t i = 0; i < nf; i++) {
        double t = (double)i * 1e-3;
        while (fc__net_next(n) <= t) {
            assert_int_equal(fc__net_pop(n, &te, &k), 1);
            order[got] = k;
            when[got++] = te;
        }
        x = x * 1103515245u + 12345u;
        uint32_t src = (x >> 8) % 8, dst = (src + 1 + (x >> 16) % 7) % 8;
        assert_int_equal(fc__net_start_conn(n, t, src, dst, conn(i), 1000 + (x >> 20) % 50000, i), 0);
    }
    int rc;
    while ((rc = fc__net_pop(n, &te, &k)) > 0) {
        order[got] = k;
        when[got++] = te;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(got, nf);
    fc__net_free(n);
}

static uint64_t conn_own(uint64_t i) { return 0x9e3779b97f4a7c15ull * (i + 1); }
static uint64_t conn_none(uint64_t i) { (void)i; return 0; }

/* Connections ending in order, each with one message, many in flight at once (their numbers
 * spread over the whole set that marks them): no message has an earlier one of its connection,
 * so none is ever held, and the run is the one without connections, pop for pop. A connection
 * left marked in that set after a message ended would hold a later message of another one. */
static void test_connection_ordered_many(void **state)
{
    (void)state;
    enum { NF = 2000 };
    fc__profile *p = mkprof(1e-5);
    p->has_conn = p->conn_serial = p->has_conn_ends = 1;
    p->conn_ends = 1;
    uint64_t *o1 = malloc(NF * sizeof *o1), *o2 = malloc(NF * sizeof *o2);
    double *w1 = malloc(NF * sizeof *w1), *w2 = malloc(NF * sizeof *w2);
    assert_true(o1 && o2 && w1 && w2);
    run_conns(p, NF, conn_own, o1, w1);
    run_conns(p, NF, conn_none, o2, w2);
    for (size_t i = 0; i < NF; i++) {
        assert_int_equal(o1[i], o2[i]);
        assert_true(w1[i] == w2[i]);
    }
    free(o1);
    free(o2);
    free(w1);
    free(w2);
    fc__profile_free(p);
}

/* k synchronous equal flows leaving one node under fairshare: each gets 1/k of the NIC, so all
 * end together at k T; started in reverse key order, they still pop in ascending key order. */
static void test_fairshare_outgoing(void **state)
{
    (void)state;
    fc__profile *p = mkprof(0);
    for (uint32_t k = 1; k <= 5; k++) {
        fc__net *n;
        assert_int_equal(fc__net_create(p, FC_MODEL_FAIRSHARE, &n), 0);
        for (uint32_t i = k; i-- > 0;)
            assert_int_equal(fc__net_start(n, 0, 0, 1 + i, MIB, i), 0);
        for (uint32_t i = 0; i < k; i++)
            expect_pop(n, i, (double)k);
        fc__net_free(n);
    }
    fc__profile_free(p);
}

/* Max-min, not equal split: a 0>1, b 0>2, c 3>2, d 4>2, equal T = 1. Node 2's input holds b, c,
 * d: 1/3 each; node 0's output then leaves a 1 - 1/3 = 2/3. a ends at 1 / (2/3) = 1.5; b, c, d
 * keep 1/3 (node 2 is still their bottleneck) and end at 3. */
static void test_fairshare_maxmin(void **state)
{
    (void)state;
    fc__profile *p = mkprof(0);
    fc__net *n;
    assert_int_equal(fc__net_create(p, FC_MODEL_FAIRSHARE, &n), 0);
    assert_int_equal(fc__net_start(n, 0, 0, 1, MIB, 0), 0);
    assert_int_equal(fc__net_start(n, 0, 0, 2, MIB, 1), 0);
    assert_int_equal(fc__net_start(n, 0, 3, 2, MIB, 2), 0);
    assert_int_equal(fc__net_start(n, 0, 4, 2, MIB, 3), 0);
    expect_pop(n, 0, 1.5);
    expect_pop(n, 1, 3);
    expect_pop(n, 2, 3);
    expect_pop(n, 3, 3);
    fc__net_free(n);
    fc__profile_free(p);
}

/* Gropp's closed form, Blue Waters figures (s = 3.26 us for a ping-pong: 1.63 us one way,
 * R_NIC = 5.7 GB/s, R_CoreBase = 2.9 GB/s, R_CoreIncr = 1 GB/s), k processes of node 0 sending
 * n = 1 MB each to k processes of node 1: T = s + k n / min(R_NIC, R_CoreBase + (k-1) R_CoreIncr):
 * k=1: 1.63e-6 + 1e6/2.9e9 = 3.464576e-4 s;  k=2: 1.63e-6 + 2e6/3.9e9 = 5.144505e-4 s;
 * k=3: 1.63e-6 + 3e6/4.9e9 = 6.138749e-4 s;  k=4: 1.63e-6 + 4e6/5.7e9 = 7.033844e-4 s (NIC-bound);
 * k=6: 1.63e-6 + 6e6/5.7e9 = 1.0542616e-3 s. The same k flows entering one node from k nodes
 * share the same way. */
static void test_maxrate_gropp(void **state)
{
    (void)state;
    static const struct {
        uint32_t k;
        double t;
    } want[] = {{1, 3.464576e-4}, {2, 5.144505e-4}, {3, 6.138749e-4}, {4, 7.033844e-4},
                {6, 1.0542616e-3}};
    fc__profile *p = mkprof(0);
    p->has_maxrate = 1;
    p->maxrate = (fc__maxrate){.s = 1.63e-6, .r_nic = 5.7e9, .r_core_base = 2.9e9,
                               .r_core_incr = 1e9};
    for (size_t c = 0; c < sizeof want / sizeof want[0]; c++) {
        for (int incoming = 0; incoming < 2; incoming++) {
            fc__net *n;
            assert_int_equal(fc__net_create(p, FC_MODEL_MAXRATE, &n), 0);
            for (uint32_t i = 0; i < want[c].k; i++)
                assert_int_equal(fc__net_start(n, 0, incoming ? 10 + i : 0, incoming ? 0 : 1,
                                               1000000, i),
                                 0);
            for (uint32_t i = 0; i < want[c].k; i++) {
                double t;
                uint64_t key;
                assert_int_equal(fc__net_pop(n, &t, &key), 1);
                assert_int_equal(key, i);
                /* The hand figures have 7 digits. */
                assert_near(t, want[c].t, 1e-6 * want[c].t);
            }
            fc__net_free(n);
        }
    }
    /* Without max-rate parameters the model is refused, with a reason. */
    p->has_maxrate = 0;
    fc__net *n = NULL;
    assert_int_equal(fc__net_create(p, FC_MODEL_MAXRATE, &n), FC_EINVAL);
    assert_null(n);
    assert_non_null(strstr(fc_errmsg(), "maxrate"));
    fc__profile_free(p);
}

/* The report's Figure 6 in spirit: staggered starts, different sizes (in seconds of uncontended
 * work), flowcut with the cuts of mkprof, no latency. Keys 0..4:
 *   f0 0>1 at 0, 4 s;  f1 0>2 at 1, 2 s;  f2 3>0 at 2, 1 s;  f3 5>6 at 4, 1 s;  f4 6>7 at 4.5, 1 s.
 * [0,1)   f0 alone, speed 1: 3 left.
 * [1,2)   f0, f1 outgoing at 0: f0 index 0 alpha 1 (1/2), f1 index 1 alpha 3 (1/4): 2.5, 1.75.
 * [2,3)   f2 enters 0 alone in its direction, in no pair: none, speed 1, ends at 3. f0 2.0 left,
 *         f1 1.5.
 * [3,4)   f0 1/2, f1 1/4: 1.5 and 1.25 left at 4.
 * [4,4.5) f3 alone: 0.5 left.
 * [4.5,5) f3 enters 6 (mixed-in, alpha 0), f4 leaves it (mixed-out, alpha 3, 1/4): f3 ends at 5,
 *         f4 has 1 - 0.125 = 0.875 left, alone: ends at 5.875.
 * f0 (1/2 from 3 with 2.0 left) ends at 7; f1 has 1.5 - 4 * 1/4 = 0.5 left, alone: ends at 7.5. */
static void test_async_flowcut(void **state)
{
    (void)state;
    fc__profile *p = mkprof(0);
    fc__net *n;
    assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
    assert_int_equal(fc__net_start(n, 0, 0, 1, 4 * MIB, 0), 0);
    assert_true(fc__net_next(n) == 4);
    assert_int_equal(fc__net_start(n, 1, 0, 2, 2 * MIB, 1), 0);
    assert_int_equal(fc__net_start(n, 2, 3, 0, 1 * MIB, 2), 0);
    /* A start past the next completion is refused, and changes nothing: the caller must pop
     * first. Tried before and after the look-ahead of fc__net_next, which take two paths. */
    assert_int_equal(fc__net_start(n, 3.5, 9, 8, MIB, 9), FC_EINVAL);
    assert_non_null(strstr(fc_errmsg(), "after the next completion"));
    assert_true(fc__net_now(n) == 2);
    assert_true(fc__net_next(n) == 3);
    assert_int_equal(fc__net_start(n, 3.5, 9, 8, MIB, 9), FC_EINVAL);
    expect_pop(n, 2, 3);
    assert_int_equal(fc__net_start(n, 4, 5, 6, MIB, 3), 0);
    assert_int_equal(fc__net_start(n, 4.5, 6, 7, MIB, 4), 0);
    assert_true(fc__net_now(n) == 4.5);
    expect_pop(n, 3, 5);
    expect_pop(n, 4, 5.875);
    expect_pop(n, 0, 7);
    expect_pop(n, 1, 7.5);
    /* A start before the simulation's time is refused. */
    assert_int_equal(fc__net_start(n, 1, 0, 1, MIB, 7), FC_EINVAL);
    fc__net_free(n);
    fc__profile_free(p);
}

/* The latency phase uses no bandwidth: with L = 0.5, f0 0>1 at 0 and f1 0>2 at 0.25, both 1 s
 * of data. f0 moves data from 0.5, alone until 0.75 (0.75 left); from 0.75 both are outgoing at
 * 0: f0 1/2, f1 1/4. f0 ends at 0.75 + 1.5 = 2.25, f1 has 1 - 1.5/4 = 0.625 left, ends at 2.875. */
static void test_latency_phase(void **state)
{
    (void)state;
    fc__profile *p = mkprof(0.5);
    fc__net *n;
    assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
    assert_int_equal(fc__net_start(n, 0, 0, 1, MIB, 0), 0);
    assert_int_equal(fc__net_start(n, 0.25, 0, 2, MIB, 1), 0);
    expect_pop(n, 0, 2.25);
    expect_pop(n, 1, 2.875);
    fc__net_free(n);
    fc__profile_free(p);
}

/* Equal synchronous pair in an incoming conflict (alphas 1, 1): 2 T each, tied; a zero-byte
 * message with no latency completes at its start. */
static void test_ties_and_empty(void **state)
{
    (void)state;
    fc__profile *p = mkprof(0);
    fc__net *n;
    assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
    assert_int_equal(fc__net_start(n, 0, 2, 0, MIB, 7), 0);
    assert_int_equal(fc__net_start(n, 0, 1, 0, MIB, 3), 0);
    assert_int_equal(fc__net_start(n, 0, 4, 5, 0, 9), 0);
    assert_true(fc__net_next(n) == 0);
    expect_pop(n, 9, 0);
    expect_pop(n, 3, 2);
    assert_true(fc__net_next(n) == 2);
    expect_pop(n, 7, 2);
    fc__net_free(n);
    fc__profile_free(p);
}

static void expect_advance(fc__net *n, double until, uint64_t key, double t)
{
    double got;
    uint64_t k;
    assert_int_equal(fc__net_advance(n, until, &got, &k), 1);
    assert_int_equal(k, key);
    assert_near(got, t, 1e-12 * (1 + fabs(t)));
}

/* test_async_flowcut's messages driven by fc__net_advance, with the times worked out there: a
 * completion no later than the next start comes back first, one at or before until at all, and
 * the simulation then stands at until, where the next message may start. */
static void test_advance(void **state)
{
    (void)state;
    fc__profile *p = mkprof(0);
    fc__net *n;
    double t;
    uint64_t k;
    assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
    assert_int_equal(fc__net_advance(n, 0, &t, &k), 0); /* nothing in flight */
    assert_int_equal(fc__net_start(n, 0, 0, 1, 4 * MIB, 0), 0);
    assert_int_equal(fc__net_advance(n, 1, &t, &k), 0);
    assert_true(fc__net_now(n) == 1);
    assert_int_equal(fc__net_start(n, 1, 0, 2, 2 * MIB, 1), 0);
    assert_int_equal(fc__net_advance(n, 2, &t, &k), 0);
    assert_int_equal(fc__net_start(n, 2, 3, 0, 1 * MIB, 2), 0);
    expect_advance(n, 4, 2, 3);
    assert_true(fc__net_now(n) == 3);
    assert_int_equal(fc__net_advance(n, 4, &t, &k), 0);
    assert_true(fc__net_now(n) == 4);
    assert_int_equal(fc__net_advance(n, 3.5, &t, &k), FC_EINVAL); /* behind the simulation */
    assert_int_equal(fc__net_start(n, 4, 5, 6, MIB, 3), 0);
    assert_int_equal(fc__net_advance(n, 4.5, &t, &k), 0);
    assert_int_equal(fc__net_start(n, 4.5, 6, 7, MIB, 4), 0);
    expect_advance(n, 5, 3, 5); /* at until itself */
    expect_advance(n, INFINITY, 4, 5.875);
    expect_advance(n, INFINITY, 0, 7);
    expect_advance(n, INFINITY, 1, 7.5);
    assert_int_equal(fc__net_advance(n, INFINITY, &t, &k), 0);
    fc__net_free(n);
    fc__profile_free(p);
}

/* A completion at the very time of the caller's event comes after it. f0 (0>1, 1 MiB, no
 * latency) ends at exactly 1: settling to 1 returns nothing and f1 starts at 1 (2>3, 1 MiB);
 * f0 comes back at the next settle, to 2, and f1, ending at exactly 2, only once past it. A
 * settle before the clock runs nothing. */
static void test_settle_ties(void **state)
{
    (void)state;
    fc__profile *p = mkprof(0);
    fc__net *n;
    double t;
    uint64_t k;
    assert_int_equal(fc__net_create(p, FC_MODEL_FLOWCUT, &n), 0);
    assert_int_equal(fc__net_start(n, 0, 0, 1, MIB, 0), 0);
    assert_int_equal(fc__net_settle(n, 1, &t, &k), 0);
    assert_true(fc__net_now(n) == 1);
    assert_int_equal(fc__net_start(n, 1, 2, 3, MIB, 1), 0);
    assert_int_equal(fc__net_settle(n, 0.5, &t, &k), 0);
    assert_int_equal(fc__net_settle(n, 2, &t, &k), 1);
    assert_true(k == 0 && t == 1);
    assert_int_equal(fc__net_settle(n, 2, &t, &k), 0);
    assert_int_equal(fc__net_settle(n, INFINITY, &t, &k), 1);
    assert_true(k == 1 && t == 2);
    assert_int_equal(fc__net_settle(n, INFINITY, &t, &k), 0);
    assert_int_equal(fc__net_settle(n, NAN, &t, &k), FC_EINVAL);
    fc__net_free(n);
    fc__profile_free(p);
}

/* Starts message key at t, its nodes and size drawn from *x: the same messages in every run. */
static void start_drawn(fc__net *n, uint32_t *x, double t, uint64_t key)
{
    *x = *x * 1103515245u + 12345u;
    uint32_t src = (*x >> 8) % 8, dst = (*x >> 16) % 8;
    assert_int_equal(fc__net_start(n, t, src, dst, 1000 + (*x >> 20) % 50000, key), 0);
}

/* test_many's nf messages again, under model, driven by fc__net_advance (settle 0) or by
 * fc__net_settle as a replay drives it, with an event of the caller's between two starts that
 * starts nothing: the completions must be order[] at when[], to the last bit (the same events and
 * re-solves, run once; those at a start's very time come after it). Settling must not move the
 * clock to the caller's events, or the work left would round differently. */
static void drive_again(const fc__profile *p, unsigned model, int settle, const uint64_t *order,
                        const double *when, size_t nf)
{
    fc__net *n;
    assert_int_equal(fc__net_create(p, model, &n), 0);
    uint32_t x = 12345;
    size_t again = 0, steps = settle ? 2 * nf : nf;
    double step = settle ? 0.5e-3 : 1e-3, te;
    uint64_t k;
    int rc;
    for (size_t i = 0; i <= steps; i++) {
        double t = i < steps ? (double)i * step : INFINITY;
        while ((rc = settle ? fc__net_settle(n, t, &te, &k) : fc__net_advance(n, t, &te, &k)) > 0) {
            assert_true(again < nf && k == order[again] && te == when[again]);
            again++;
        }
        assert_int_equal(rc, 0);
        if (i == steps)
            break;
        if (!settle || i % 2 == 0)
            start_drawn(n, &x, t, settle ? i / 2 : i);
    }
    assert_int_equal(again, nf);
    fc__net_free(n);
}

/* Many flows: every model finishes and every message comes back exactly once, in time order; and
 * the same completions come back when fc__net_advance or fc__net_settle drives the simulation. */
static void test_many(void **state)
{
    (void)state;
    fc__profile *p = mkprof(1e-5);
    p->has_maxrate = 1;
    p->maxrate = (fc__maxrate){.s = 1e-5, .r_nic = 1.5 * MIB, .r_core_base = MIB,
                               .r_core_incr = 0.25 * MIB};
    enum { NF = 3000 };
    uint64_t *order = malloc(NF * sizeof *order); /* the completions of the run by fc__net_pop */
    double *when = malloc(NF * sizeof *when);
    assert_true(order != NULL && when != NULL);
    for (unsigned model = 0; model < FC_NMODELS; model++) {
        fc__net *n;
        assert_int_equal(fc__net_create(p, model, &n), 0);
        unsigned char *seen = calloc(NF, 1);
        uint32_t x = 12345;
        double last = 0;
        size_t got = 0;
        for (uint64_t i = 0; i < NF; i++) {
            double t = (double)i * 1e-3;
            while (fc__net_next(n) <= t) {
                double te;
                uint64_t k;
                assert_int_equal(fc__net_pop(n, &te, &k), 1);
                assert_true(te >= last && k < NF && !seen[k]);
                seen[k] = 1;
                last = te;
                order[got] = k;
                when[got++] = te;
            }
            start_drawn(n, &x, t, i);
        }
        double te;
        uint64_t k;
        int rc;
        while ((rc = fc__net_pop(n, &te, &k)) > 0) {
            assert_true(te >= last && k < NF && !seen[k]);
            seen[k] = 1;
            last = te;
            order[got] = k;
            when[got++] = te;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(got, NF);
        free(seen);
        fc__net_free(n);
        drive_again(p, model, 0, order, when, NF);
        drive_again(p, model, 1, order, when, NF);
    }
    free(order);
    free(when);
    fc__profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_is_profile), cmocka_unit_test(test_mixed_pair),
        cmocka_unit_test(test_fairshare_outgoing), cmocka_unit_test(test_fairshare_maxmin),
        cmocka_unit_test(test_maxrate_gropp),     cmocka_unit_test(test_async_flowcut),
        cmocka_unit_test(test_latency_phase),     cmocka_unit_test(test_ties_and_empty),
        cmocka_unit_test(test_many),              cmocka_unit_test(test_advance),
        cmocka_unit_test(test_settle_ties),       cmocka_unit_test(test_latejoin_flowcut),
        cmocka_unit_test(test_latejoin_half_duplex), cmocka_unit_test(test_connection_serial),
        cmocka_unit_test(test_opposite_delay),    cmocka_unit_test(test_connection_ordered),
        cmocka_unit_test(test_connection_ordered_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
