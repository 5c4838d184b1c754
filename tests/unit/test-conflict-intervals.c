/* tests/unit/test-conflict-intervals.c: synchronous homogeneous intervals and conflict labels,
 * checked against the report's decompositions worked out by hand, and a random set checked
 * against a from-scratch labelling at the midpoint of every interval. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <flowcut/error.h>
#include "util/internal.h" /* libtrace has an internal.h too, earlier in the path */
#include "conflict/intervals.h"
#include "conflict/sweep.h"

enum {
    NONE = FC_CONFLICT_NONE,
    OUT = FC_CONFLICT_OUTGOING,
    IN = FC_CONFLICT_INCOMING,
    MIN = FC_CONFLICT_MIXED_IN,
    MOUT = FC_CONFLICT_MIXED_OUT
};

/* A flow of one byte: a flow of none takes no bandwidth and is never active (test_zero_bytes). */
static fc__flow mk(uint64_t id, uint32_t src, uint32_t dst, double start, double end)
{
    return (fc__flow){.id = id, .src_node = src, .dst_node = dst, .start = start, .end = end, .bytes = 1};
}

/* Expected label of one flow: kind, node, k. */
typedef struct want {
    uint64_t id;
    uint32_t kind, node, k;
} want;

static void check_labels(const fc__interval *in, const want *w, size_t n)
{
    assert_int_equal(in->nflows, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(in->flows[i], w[i].id);
        assert_int_equal(in->labels[i].kind, w[i].kind);
        assert_int_equal(in->labels[i].k, w[i].k);
        if (w[i].kind != NONE)
            assert_int_equal(in->labels[i].node, w[i].node);
    }
}

/* One synchronous pattern on [0, 1): a single interval with these labels. */
static fc__intervals *sync_case(const fc__flow *f, size_t nf, const want *w)
{
    fc__intervals *iv;
    assert_int_equal(fc__intervals_build(f, nf, &iv), 0);
    assert_int_equal(fc__intervals_count(iv), 1);
    const fc__interval *in = fc__intervals_get(iv, 0);
    assert_true(in->start == 0 && in->end == 1);
    check_labels(in, w, nf);
    return iv;
}

static void check_conf(const fc__conflict *c, uint32_t kind, uint32_t node, uint32_t k,
                       const uint64_t *flows)
{
    assert_int_equal(c->kind, kind);
    assert_int_equal(c->node, node);
    assert_int_equal(c->k, k);
    for (uint32_t i = 0; i < k; i++)
        assert_int_equal(c->flows[i], flows[i]);
}

static void test_elementary(void **state)
{
    (void)state;
    const fc__conflict *c;
    /* 0>1: alone. */
    fc__flow a[] = {mk(0, 0, 1, 0, 1)};
    fc__intervals *iv = sync_case(a, 1, (want[]){{0, NONE, 0, 1}});
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 0);
    fc__intervals_free(iv);
    /* 0>1<2: incoming at 1. */
    fc__flow b[] = {mk(0, 0, 1, 0, 1), mk(1, 2, 1, 0, 1)};
    iv = sync_case(b, 2, (want[]){{0, IN, 1, 2}, {1, IN, 1, 2}});
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 1);
    check_conf(&c[0], IN, 1, 2, (uint64_t[]){0, 1});
    fc__intervals_free(iv);
    /* 1<0>2: outgoing at 0. */
    fc__flow d[] = {mk(0, 0, 1, 0, 1), mk(1, 0, 2, 0, 1)};
    iv = sync_case(d, 2, (want[]){{0, OUT, 0, 2}, {1, OUT, 0, 2}});
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 1);
    check_conf(&c[0], OUT, 0, 2, (uint64_t[]){0, 1});
    fc__intervals_free(iv);
    /* 0>1>2: mixed at 1, 0>1 enters it, 1>2 leaves it (and is the one the cut (0, 3) delays). */
    fc__flow e[] = {mk(0, 0, 1, 0, 1), mk(1, 1, 2, 0, 1)};
    iv = sync_case(e, 2, (want[]){{0, MIN, 1, 2}, {1, MOUT, 1, 2}});
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 1);
    check_conf(&c[0], MIN, 1, 2, (uint64_t[]){0, 1});
    fc__intervals_free(iv);
    /* 0<1<2: flows 1>0 (id 0) and 2>1 (id 1), mixed at 1: 2>1 enters, 1>0 leaves. */
    fc__flow g[] = {mk(0, 1, 0, 0, 1), mk(1, 2, 1, 0, 1)};
    iv = sync_case(g, 2, (want[]){{0, MOUT, 1, 2}, {1, MIN, 1, 2}});
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 1);
    check_conf(&c[0], MIN, 1, 2, (uint64_t[]){1, 0});
    fc__intervals_free(iv);
    /* Three flows out of node 0. */
    fc__flow h[] = {mk(0, 0, 1, 0, 1), mk(1, 0, 2, 0, 1), mk(2, 0, 3, 0, 1)};
    iv = sync_case(h, 3, (want[]){{0, OUT, 0, 3}, {1, OUT, 0, 3}, {2, OUT, 0, 3}});
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 1);
    check_conf(&c[0], OUT, 0, 3, (uint64_t[]){0, 1, 2});
    assert_int_equal(fc__intervals_max_k(iv), 3);
    assert_true(fc__intervals_time(iv, OUT, 3) == 3.0);
    fc__intervals_free(iv);
}

/* The examples of section 5.2. */
static void test_decompositions(void **state)
{
    (void)state;
    const fc__conflict *c;
    /* 0>1>2>3 = 0>1>2 & 2>3. */
    fc__flow a[] = {mk(0, 0, 1, 0, 1), mk(1, 1, 2, 0, 1), mk(2, 2, 3, 0, 1)};
    fc__intervals *iv = sync_case(a, 3, (want[]){{0, MIN, 1, 2}, {1, MOUT, 1, 2}, {2, NONE, 0, 1}});
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 1);
    check_conf(&c[0], MIN, 1, 2, (uint64_t[]){0, 1});
    fc__intervals_free(iv);
    /* 0<1<2<3 = 0<1 & 1<2<3: flows 1>0, 2>1, 3>2 (ids 0, 1, 2); the path starts at 3>2. */
    fc__flow b[] = {mk(0, 1, 0, 0, 1), mk(1, 2, 1, 0, 1), mk(2, 3, 2, 0, 1)};
    iv = sync_case(b, 3, (want[]){{0, NONE, 0, 1}, {1, MOUT, 2, 2}, {2, MIN, 2, 2}});
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 1);
    check_conf(&c[0], MIN, 2, 2, (uint64_t[]){2, 1});
    fc__intervals_free(iv);
    /* 0>1>2<3<4<5 = 0>1 & 1>2<3 & 3<4<5: ids 0:0>1 1:1>2 2:3>2 3:4>3 4:5>4. */
    fc__flow d[] = {mk(0, 0, 1, 0, 1), mk(1, 1, 2, 0, 1), mk(2, 3, 2, 0, 1), mk(3, 4, 3, 0, 1),
                   mk(4, 5, 4, 0, 1)};
    iv = sync_case(
        d, 5,
        (want[]){{0, NONE, 0, 1}, {1, IN, 2, 2}, {2, IN, 2, 2}, {3, MOUT, 4, 2}, {4, MIN, 4, 2}});
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 2);
    check_conf(&c[0], IN, 2, 2, (uint64_t[]){1, 2});
    check_conf(&c[1], MIN, 4, 2, (uint64_t[]){4, 3});
    fc__intervals_free(iv);
}

/* A flow in an outgoing and an incoming conflict takes the larger k, and OUTGOING on a tie. */
static void test_tie_and_degree(void **state)
{
    (void)state;
    const fc__conflict *c;
    /* 0>1 (id 0) is in outgoing k=2 at 0 (with 0>2) and incoming k=2 at 1 (with 3>1): tie. */
    fc__flow a[] = {mk(0, 0, 1, 0, 1), mk(1, 0, 2, 0, 1), mk(2, 3, 1, 0, 1)};
    fc__intervals *iv = sync_case(a, 3, (want[]){{0, OUT, 0, 2}, {1, OUT, 0, 2}, {2, IN, 1, 2}});
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 2);
    check_conf(&c[0], OUT, 0, 2, (uint64_t[]){0, 1});
    check_conf(&c[1], IN, 1, 2, (uint64_t[]){0, 2});
    fc__intervals_free(iv);
    /* Add 4>1: incoming k=3 at 1 beats outgoing k=2 at 0 for 0>1. */
    fc__flow b[] = {mk(0, 0, 1, 0, 1), mk(1, 0, 2, 0, 1), mk(2, 3, 1, 0, 1), mk(3, 4, 1, 0, 1)};
    iv = sync_case(b, 4, (want[]){{0, IN, 1, 3}, {1, OUT, 0, 2}, {2, IN, 1, 3}, {3, IN, 1, 3}});
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 2);
    check_conf(&c[0], OUT, 0, 2, (uint64_t[]){0, 1});
    check_conf(&c[1], IN, 1, 3, (uint64_t[]){0, 2, 3});
    fc__intervals_free(iv);
}

static void test_cycles(void **state)
{
    (void)state;
    /* 0>1>2>0: from id 0, (0>1, 1>2) mixed at 1, 2>0 alone. */
    fc__flow a[] = {mk(0, 0, 1, 0, 1), mk(1, 1, 2, 0, 1), mk(2, 2, 0, 0, 1)};
    fc__intervals_free(sync_case(a, 3, (want[]){{0, MIN, 1, 2}, {1, MOUT, 1, 2}, {2, NONE, 0, 1}}));
    /* A 4-cycle 0>1>2>3>0 whose smallest id (3) is 1>2: (1>2, 2>3) at 2, (3>0, 0>1) at 0. */
    fc__flow b[] = {mk(5, 0, 1, 0, 1), mk(3, 1, 2, 0, 1), mk(4, 2, 3, 0, 1), mk(7, 3, 0, 0, 1)};
    fc__intervals_free(sync_case(
        b, 4, (want[]){{3, MIN, 2, 2}, {4, MOUT, 2, 2}, {5, MOUT, 0, 2}, {7, MIN, 0, 2}}));
    /* 0>1>0: a 2-cycle, from id 0: 0>1 enters 1, 1>0 leaves it. */
    fc__flow d[] = {mk(0, 0, 1, 0, 1), mk(1, 1, 0, 0, 1)};
    fc__intervals_free(sync_case(d, 2, (want[]){{0, MIN, 1, 2}, {1, MOUT, 1, 2}}));
}

/* Figure 6 style: (ids) 0: 0>2 [0,3), 1: 1>2 [1,5), 2: 2>3 [2,4), 3: 4>5 [3.5,6). */
/* What test_asynchronous's flows give, worked out by hand, besides each interval's labels: flow
 * 1's history and the flow-seconds by label, which a full and a lean build keep alike. */
static void check_async_sums(const fc__intervals *iv)
{
    /* Flow 1: incoming over [1,3), mixed-in over [3,4) (untouched when 4>5 starts), alone after. */
    const fc__label_run *r;
    size_t nr;
    assert_int_equal(fc__intervals_history(iv, 1, &r, &nr), 0);
    assert_int_equal(nr, 3);
    assert_true(r[0].first == 1 && r[0].count == 2 && r[0].start == 1 && r[0].end == 3);
    assert_true(r[0].label.kind == IN && r[0].label.k == 2 && r[0].label.node == 2);
    assert_true(r[1].first == 3 && r[1].count == 2 && r[1].start == 3 && r[1].end == 4);
    assert_true(r[1].label.kind == MIN && r[1].label.node == 2);
    assert_true(r[2].first == 5 && r[2].count == 1 && r[2].start == 4 && r[2].end == 5);
    assert_true(r[2].label.kind == NONE);
    /* Flow-seconds by hand: none 1 + 1 + 0.5 + 2 + 1, incoming 2 + 2, mixed 0.5 + 0.5 each. */
    assert_true(fc__intervals_time(iv, NONE, 1) == 5.5);
    assert_true(fc__intervals_time(iv, IN, 2) == 4);
    assert_true(fc__intervals_time(iv, MIN, 2) == 1);
    assert_true(fc__intervals_time(iv, MOUT, 2) == 1);
    assert_true(fc__intervals_time(iv, OUT, 2) == 0);
    assert_int_equal(fc__intervals_max_k(iv), 2);
    assert_int_equal(fc__intervals_history(iv, 99, &r, &nr), FC_EINVAL);
}

static void test_asynchronous(void **state)
{
    (void)state;
    fc__flow f[] = {mk(0, 0, 2, 0, 3), mk(1, 1, 2, 1, 5), mk(2, 2, 3, 2, 4), mk(3, 4, 5, 3.5, 6)};
    fc__intervals *iv;
    assert_int_equal(fc__intervals_build(f, 4, &iv), 0);
    assert_int_equal(fc__intervals_count(iv), 7);
    static const double bounds[8] = {0, 1, 2, 3, 3.5, 4, 5, 6};
    for (size_t i = 0; i < 7; i++) {
        assert_true(fc__intervals_get(iv, i)->start == bounds[i]);
        assert_true(fc__intervals_get(iv, i)->end == bounds[i + 1]);
    }
    check_labels(fc__intervals_get(iv, 0), (want[]){{0, NONE, 0, 1}}, 1);
    check_labels(fc__intervals_get(iv, 1), (want[]){{0, IN, 2, 2}, {1, IN, 2, 2}}, 2);
    /* 2>3 starts: 0>2 and 1>2 stay incoming, 2>3 is left alone (R3). */
    check_labels(fc__intervals_get(iv, 2), (want[]){{0, IN, 2, 2}, {1, IN, 2, 2}, {2, NONE, 0, 1}},
                 3);
    /* 0>2 ends: 1>2>3 is a mixed conflict at 2. */
    check_labels(fc__intervals_get(iv, 3), (want[]){{1, MIN, 2, 2}, {2, MOUT, 2, 2}}, 2);
    check_labels(fc__intervals_get(iv, 4),
                 (want[]){{1, MIN, 2, 2}, {2, MOUT, 2, 2}, {3, NONE, 0, 1}}, 3);
    check_labels(fc__intervals_get(iv, 5), (want[]){{1, NONE, 0, 1}, {3, NONE, 0, 1}}, 2);
    check_labels(fc__intervals_get(iv, 6), (want[]){{3, NONE, 0, 1}}, 1);
    check_async_sums(iv);
    assert_non_null(fc__interval_label(fc__intervals_get(iv, 3), 2));
    assert_null(fc__interval_label(fc__intervals_get(iv, 3), 0));
    fc__intervals_free(iv);
}

/* test_asynchronous's flows, built lean: the same spans, histories and flow-seconds, worked out
 * by hand as there, with no interval's flows, labels or conflicts kept. */
static void test_lean(void **state)
{
    (void)state;
    fc__flow f[] = {mk(0, 0, 2, 0, 3), mk(1, 1, 2, 1, 5), mk(2, 2, 3, 2, 4), mk(3, 4, 5, 3.5, 6)};
    fc__intervals *iv;
    assert_int_equal(fc__intervals_build_lean(f, 4, &iv), 0);
    assert_int_equal(fc__intervals_count(iv), 7);
    static const double bounds[8] = {0, 1, 2, 3, 3.5, 4, 5, 6};
    static const size_t nflows[7] = {1, 2, 3, 2, 3, 2, 1};
    for (size_t i = 0; i < 7; i++) {
        const fc__interval *in = fc__intervals_get(iv, i);
        const fc__conflict *c;
        assert_true(in->start == bounds[i] && in->end == bounds[i + 1]);
        assert_int_equal(in->nflows, nflows[i]);
        assert_null(in->flows);
        assert_null(in->labels);
        assert_int_equal(fc__intervals_conflicts(iv, i, &c), 0);
    }
    assert_null(fc__intervals_get(iv, 7));
    check_async_sums(iv);
    fc__intervals_free(iv);
}

/* Zero-length spans and flows, flows ending where others start, gaps, intra flows, bad input. */
static void test_edges(void **state)
{
    (void)state;
    fc__intervals *iv;
    /* Identical bounds make one interval; a zero-length flow and an intra flow split nothing. */
    fc__flow a[] = {mk(0, 0, 1, 0, 2), mk(1, 2, 1, 0, 2), mk(2, 0, 3, 1, 1), mk(3, 5, 5, 0.5, 3),
                   mk(4, 0, 6, 1.5, 4)};
    a[4].intra = 1;
    assert_int_equal(fc__intervals_build(a, 5, &iv), 0);
    assert_int_equal(fc__intervals_count(iv), 1);
    assert_true(fc__intervals_get(iv, 0)->start == 0 && fc__intervals_get(iv, 0)->end == 2);
    check_labels(fc__intervals_get(iv, 0), (want[]){{0, IN, 1, 2}, {1, IN, 1, 2}}, 2);
    const fc__label_run *r;
    size_t nr = 9;
    assert_int_equal(fc__intervals_history(iv, 4, &r, &nr), 0);
    assert_int_equal(nr, 0);
    fc__intervals_free(iv);
    /* Back to back: [0,1) then [1,2), no empty span between; a gap [2,3) is no interval. */
    fc__flow b[] = {mk(0, 0, 1, 0, 1), mk(1, 0, 1, 1, 2), mk(2, 1, 0, 3, 4)};
    assert_int_equal(fc__intervals_build(b, 3, &iv), 0);
    assert_int_equal(fc__intervals_count(iv), 3);
    assert_true(fc__intervals_get(iv, 0)->end == 1 && fc__intervals_get(iv, 1)->start == 1);
    assert_true(fc__intervals_get(iv, 1)->end == 2 && fc__intervals_get(iv, 2)->start == 3);
    check_labels(fc__intervals_get(iv, 1), (want[]){{1, NONE, 0, 1}}, 1);
    fc__intervals_free(iv);
    /* The same flows given with their ids out of order (build sorts them only then): the same
     * intervals, and each id finds its own history. */
    fc__flow b2[] = {b[2], b[0], b[1]};
    assert_int_equal(fc__intervals_build(b2, 3, &iv), 0);
    assert_int_equal(fc__intervals_count(iv), 3);
    check_labels(fc__intervals_get(iv, 1), (want[]){{1, NONE, 0, 1}}, 1);
    for (uint64_t id = 0; id < 3; id++) {
        assert_int_equal(fc__intervals_history(iv, id, &r, &nr), 0);
        assert_int_equal(nr, 1);
        assert_true(r[0].start == b[id].start && r[0].end == b[id].end);
    }
    fc__intervals_free(iv);
    /* Nothing at all. */
    assert_int_equal(fc__intervals_build(NULL, 0, &iv), 0);
    assert_int_equal(fc__intervals_count(iv), 0);
    assert_int_equal(fc__intervals_max_k(iv), 0);
    fc__intervals_free(iv);
    fc__intervals_free(NULL);
    /* Bad input. */
    fc__flow c[] = {mk(0, 0, 1, 0, 1), mk(0, 1, 2, 0, 1)};
    assert_int_equal(fc__intervals_build(c, 2, &iv), FC_EINVAL);
    assert_null(iv);
    /* A flow that ends before it starts (a clock violation) is never active, not an error. */
    fc__flow d[] = {mk(0, 0, 1, 2, 1), mk(1, 0, 2, 0, 1)};
    assert_int_equal(fc__intervals_build(d, 2, &iv), 0);
    assert_int_equal(fc__intervals_count(iv), 1);
    check_labels(fc__intervals_get(iv, 0), (want[]){{1, NONE, 0, 1}}, 1);
    fc__intervals_free(iv);
    fc__flow e[] = {mk(0, 0, 1, 0, NAN)};
    assert_int_equal(fc__intervals_build(e, 1, &iv), FC_EINVAL);
}

/* The random check: a second labelling, from scratch for each interval at its midpoint, that
 * finds each unconsumed flow's position on its path or cycle by walking back (quadratic, plain). */
typedef struct rset {
    fc__flow *f; /* sorted by id */
    size_t n;
} rset;

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static int live(const fc__flow *f)
{
    return !f->intra && f->src_node != f->dst_node && f->end > f->start;
}

#define NO SIZE_MAX

static size_t b_next(fc__flow **a, const int *rem, size_t m, size_t i)
{
    for (size_t j = 0; j < m; j++)
        if (rem[j] && a[j]->src_node == a[i]->dst_node)
            return j;
    return NO;
}

static size_t b_prev(fc__flow **a, const int *rem, size_t m, size_t i)
{
    for (size_t j = 0; j < m; j++)
        if (rem[j] && a[j]->dst_node == a[i]->src_node)
            return j;
    return NO;
}

static void brute_labels(fc__flow **a, size_t m, fc__label *lab, int *rem)
{
    for (size_t i = 0; i < m; i++) {
        uint32_t od = 0, id = 0;
        for (size_t j = 0; j < m; j++) {
            od += a[j]->src_node == a[i]->src_node;
            id += a[j]->dst_node == a[i]->dst_node;
        }
        rem[i] = od == 1 && id == 1;
        if (od >= 2 && od >= id)
            lab[i] = (fc__label){OUT, a[i]->src_node, od};
        else if (id >= 2)
            lab[i] = (fc__label){IN, a[i]->dst_node, id};
        else
            lab[i] = (fc__label){NONE, 0, 1};
    }
    for (size_t i = 0; i < m; i++) {
        if (!rem[i])
            continue;
        size_t g = i, p = 0, len = 0, h;
        int cyc = 0;
        while ((h = b_prev(a, rem, m, g)) != NO) {
            if (h == i) {
                cyc = 1;
                break;
            }
            g = h;
            p++;
        }
        if (cyc) {
            /* On a cycle of length p + 1: count from its smallest id going forward. */
            len = p + 1;
            size_t mn = i, d = 0, dmn = 0;
            for (g = b_next(a, rem, m, i), d = 1; g != i; g = b_next(a, rem, m, g), d++)
                if (a[g]->id < a[mn]->id)
                    mn = g, dmn = d;
            p = (len - dmn) % len;
        }
        int has_next = b_next(a, rem, m, i) != NO && (!cyc || p + 1 < len);
        if (p % 2 == 0 && has_next)
            lab[i] = (fc__label){MIN, a[i]->dst_node, 2};
        else if (p % 2 == 1)
            lab[i] = (fc__label){MOUT, a[i]->src_node, 2};
    }
}

/* Checks interval in's flows, labels and conflicts against the brute force at its midpoint, and
 * adds its flow-seconds to time. */
static void brute_interval(const rset *rs, const fc__intervals *iv, size_t k, double *time,
                           size_t kslots)
{
    const fc__interval *in = fc__intervals_get(iv, k);
    double mid = (in->start + in->end) / 2;
    fc__flow **a = malloc(rs->n * sizeof *a);
    fc__label *lab = malloc(rs->n * sizeof *lab);
    int *rem = malloc(rs->n * sizeof *rem);
    size_t m = 0;
    for (size_t i = 0; i < rs->n; i++)
        if (live(&rs->f[i]) && rs->f[i].start <= mid && mid < rs->f[i].end)
            a[m++] = &rs->f[i];
    brute_labels(a, m, lab, rem);
    assert_int_equal(in->nflows, m);
    for (size_t i = 0; i < m; i++) {
        assert_int_equal(in->flows[i], a[i]->id);
        assert_int_equal(in->labels[i].kind, lab[i].kind);
        assert_int_equal(in->labels[i].k, lab[i].k);
        if (lab[i].kind != NONE)
            assert_int_equal(in->labels[i].node, lab[i].node);
        time[lab[i].kind * kslots + lab[i].k] += in->end - in->start;
    }
    const fc__conflict *c;
    size_t nc = fc__intervals_conflicts(iv, k, &c), ci = 0;
    for (uint32_t x = 0; x < 16; x++) {
        uint64_t o[64], e[64];
        uint32_t no = 0, ne = 0;
        for (size_t i = 0; i < m; i++) {
            assert_true(no < 64 && ne < 64);
            if (a[i]->src_node == x)
                o[no++] = a[i]->id;
            if (a[i]->dst_node == x)
                e[ne++] = a[i]->id;
        }
        if (no >= 2) {
            assert_true(ci < nc);
            check_conf(&c[ci++], OUT, x, no, o);
        }
        if (ne >= 2) {
            assert_true(ci < nc);
            check_conf(&c[ci++], IN, x, ne, e);
        }
        for (size_t i = 0; i < m; i++)
            if (lab[i].kind == MIN && a[i]->dst_node == x) {
                uint64_t pr[2] = {a[i]->id, a[b_next(a, rem, m, i)]->id};
                assert_true(ci < nc);
                check_conf(&c[ci++], MIN, x, 2, pr);
            }
    }
    assert_int_equal(ci, nc);
    free(a);
    free(lab);
    free(rem);
}

/* Each run covers consecutive intervals that all carry its label, and the runs of a flow cover
 * exactly the intervals whose midpoint it is active at. */
static void check_history(const rset *rs, const fc__intervals *iv, const fc__flow *f)
{
    const fc__label_run *r;
    size_t nr, covered = 0, active = 0, nint = fc__intervals_count(iv);
    assert_int_equal(fc__intervals_history(iv, f->id, &r, &nr), 0);
    for (size_t i = 0; i < nint; i++) {
        const fc__interval *in = fc__intervals_get(iv, i);
        double mid = (in->start + in->end) / 2;
        active += live(f) && f->start <= mid && mid < f->end;
    }
    for (size_t j = 0; j < nr; j++) {
        assert_true(r[j].count > 0);
        if (j > 0) {
            assert_int_equal(r[j].first, r[j - 1].first + r[j - 1].count);
            assert_memory_not_equal(&r[j].label, &r[j - 1].label, sizeof r[j].label);
        }
        assert_true(r[j].start == fc__intervals_get(iv, r[j].first)->start);
        assert_true(r[j].end == fc__intervals_get(iv, r[j].first + r[j].count - 1)->end);
        for (size_t i = r[j].first; i < r[j].first + r[j].count; i++) {
            const fc__label *l = fc__interval_label(fc__intervals_get(iv, i), f->id);
            assert_non_null(l);
            assert_memory_equal(l, &r[j].label, sizeof *l);
        }
        covered += r[j].count;
    }
    assert_int_equal(covered, active);
    (void)rs;
}

static int cmp_flow_id(const void *x, const void *y)
{
    uint64_t a = ((const fc__flow *)x)->id, b = ((const fc__flow *)y)->id;
    return (a > b) - (a < b);
}

/* n flows on 16 nodes, starts in [0, span), durations up to maxdur, integer times so that many
 * boundaries coincide; a few zero-length, intra and self flows. With ring > 0, the flows go
 * around a ring of that many nodes (a few backwards), which makes long paths and cycles. */
static void random_case(size_t n, uint32_t span, uint32_t maxdur, uint32_t ring)
{
    rset rs = {malloc(n * sizeof(fc__flow)), n};
    for (size_t i = 0; i < n; i++) {
        uint32_t s = rnd(16), d = rnd(16), t = rnd(span), len = 1 + rnd(maxdur);
        if (ring > 0) {
            s = rnd(ring);
            d = rnd(8) == 0 ? (s + ring - 1) % ring : (s + 1) % ring;
        }
        if (rnd(33) == 0)
            len = 0;
        rs.f[i] = mk(i * 7 % n, s, d, t, t + len); /* ids permuted: 7 is prime to n */
        rs.f[i].intra = s == d && rnd(4) != 0;
    }
    fc__intervals *iv;
    assert_int_equal(fc__intervals_build(rs.f, n, &iv), 0);
    qsort(rs.f, n, sizeof *rs.f, cmp_flow_id);
    /* Bounds: every distinct boundary of a live flow, minus spans with nothing active. */
    double *b = malloc(2 * n * sizeof *b);
    size_t nb = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        if (live(&rs.f[i])) {
            b[nb++] = rs.f[i].start;
            b[nb++] = rs.f[i].end;
        }
    for (size_t i = 1; i < nb; i++) /* insertion sort: a second method, not qsort */
        for (size_t j = i; j > 0 && b[j - 1] > b[j]; j--) {
            double t = b[j];
            b[j] = b[j - 1];
            b[j - 1] = t;
        }
    size_t kslots = n + 2;
    double *time = calloc(5 * kslots, sizeof *time);
    for (size_t i = 0; i + 1 < nb; i++) {
        if (b[i] == b[i + 1])
            continue;
        double mid = (b[i] + b[i + 1]) / 2;
        int any = 0;
        for (size_t j = 0; j < n && !any; j++)
            any = live(&rs.f[j]) && rs.f[j].start <= mid && mid < rs.f[j].end;
        if (!any)
            continue;
        assert_true(k < fc__intervals_count(iv));
        assert_true(fc__intervals_get(iv, k)->start == b[i]);
        assert_true(fc__intervals_get(iv, k)->end == b[i + 1]);
        brute_interval(&rs, iv, k++, time, kslots);
    }
    assert_int_equal(k, fc__intervals_count(iv));
    uint32_t maxk = 0;
    for (uint32_t kind = NONE; kind <= MOUT; kind++)
        for (size_t d = 0; d < kslots; d++) {
            double expect = time[kind * kslots + d];
            assert_true(fabs(fc__intervals_time(iv, kind, (uint32_t)d) - expect) <=
                        1e-9 * (1 + expect));
            if (expect > 0 && d > maxk)
                maxk = (uint32_t)d;
        }
    assert_int_equal(fc__intervals_max_k(iv), maxk);
    for (size_t i = 0; i < n; i++)
        check_history(&rs, iv, &rs.f[i]);
    /* A lean build of the same flows keeps what was just checked, the spans, flow-seconds,
     * largest k and histories, as they are: compared with the full build's. */
    fc__intervals *lean;
    assert_int_equal(fc__intervals_build_lean(rs.f, n, &lean), 0);
    assert_int_equal(fc__intervals_count(lean), k);
    for (size_t i = 0; i < k; i++) {
        const fc__interval *a = fc__intervals_get(iv, i), *l = fc__intervals_get(lean, i);
        assert_true(a->start == l->start && a->end == l->end);
        assert_int_equal(a->nflows, l->nflows);
        assert_null(l->flows);
    }
    for (uint32_t kind = NONE; kind <= MOUT; kind++)
        for (size_t d = 0; d < kslots; d++)
            assert_true(fc__intervals_time(lean, kind, (uint32_t)d) == fc__intervals_time(iv, kind, (uint32_t)d));
    assert_int_equal(fc__intervals_max_k(lean), maxk);
    for (size_t i = 0; i < n; i++) {
        const fc__label_run *ra, *rl;
        size_t na, nl;
        assert_int_equal(fc__intervals_history(iv, rs.f[i].id, &ra, &na), 0);
        assert_int_equal(fc__intervals_history(lean, rs.f[i].id, &rl, &nl), 0);
        assert_int_equal(na, nl);
        for (size_t j = 0; j < na; j++) { /* field by field: a run has padding */
            assert_true(ra[j].first == rl[j].first && ra[j].count == rl[j].count);
            assert_true(ra[j].start == rl[j].start && ra[j].end == rl[j].end);
            assert_memory_equal(&ra[j].label, &rl[j].label, sizeof ra[j].label);
        }
    }
    fc__intervals_free(lean);
    fc__intervals_free(iv);
    free(time);
    free(b);
    free(rs.f);
}

/* fc__intervals_label_set labels without a sweep: it must agree with the labels a build gives
 * the same flows all active on [0, 1), for random sets (paths, cycles, ties, self-loops). */
/* Zero-byte messages (a barrier's, whose times are inferred) take no bandwidth: a data flow 0>1 on
 * [0, 1) beside a zero-byte flow 0>2 on [0.2, 0.8) and a zero-byte flow 3>1 on [0.5, 0.9) stays
 * alone in one interval, where with one byte each the same flows form three intervals, the middle
 * ones with an outgoing conflict at 0 and an incoming one at 1. */
static void test_zero_bytes(void **state)
{
    (void)state;
    fc__flow f[] = {mk(0, 0, 1, 0, 1), mk(1, 0, 2, 0.2, 0.8), mk(2, 3, 1, 0.5, 0.9)};
    f[1].bytes = f[2].bytes = 0;
    fc__intervals *iv;
    assert_int_equal(fc__intervals_build(f, 3, &iv), 0);
    assert_int_equal(fc__intervals_count(iv), 1);
    const fc__interval *in = fc__intervals_get(iv, 0);
    assert_true(in->start == 0 && in->end == 1);
    check_labels(in, (want[]){{0, NONE, 0, 1}}, 1);
    const fc__conflict *c;
    assert_int_equal(fc__intervals_conflicts(iv, 0, &c), 0);
    fc__intervals_free(iv);
    /* The same flows carrying a byte: [0, .2) [.2, .5) [.5, .8) [.8, .9) [.9, 1). */
    f[1].bytes = f[2].bytes = 1;
    assert_int_equal(fc__intervals_build(f, 3, &iv), 0);
    assert_int_equal(fc__intervals_count(iv), 5);
    assert_true(fc__intervals_conflicts(iv, 1, &c) > 0);
    fc__intervals_free(iv);
}

static void test_label_set(void **state)
{
    (void)state;
    unsigned seed = 12345;
    /* One scratch for every round, whose sets grow and shrink: a reused buffer holds the last
     * round's counts and flags, which must not leak into the next. */
    fc__label_scratch sc = {0};
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + (size_t)(round % 23);
        uint32_t nnodes = 2 + (uint32_t)(round % 7);
        uint32_t src[32], dst[32];
        fc__flow f[32];
        fc__label got[32];
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            src[i] = 10 * ((seed >> 8) % nnodes);
            seed = seed * 1103515245u + 12345u;
            dst[i] = 10 * ((seed >> 8) % nnodes);
            f[i] = (fc__flow){.id = i, .src_node = src[i], .dst_node = dst[i], .end = 1, .bytes = 1,
                             .intra = src[i] == dst[i]};
        }
        assert_int_equal(fc__intervals_label_set(src, dst, n, got), 0);
        fc__label got2[32];
        assert_int_equal(fc__intervals_label_set_with(src, dst, n, got2, &sc), 0);
        fc__intervals *iv;
        assert_int_equal(fc__intervals_build(f, n, &iv), 0);
        const fc__interval *in = fc__intervals_count(iv) ? fc__intervals_get(iv, 0) : NULL;
        for (size_t i = 0; i < n; i++) {
            const fc__label *w = in ? fc__interval_label(in, i) : NULL;
            fc__label ref = w ? *w : (fc__label){NONE, 0, 1};
            assert_int_equal(got[i].kind, ref.kind);
            assert_int_equal(got[i].k, ref.k);
            if (ref.kind != NONE)
                assert_int_equal(got[i].node, ref.node);
            assert_int_equal(got2[i].kind, ref.kind);
            assert_int_equal(got2[i].k, ref.k);
            if (ref.kind != NONE)
                assert_int_equal(got2[i].node, ref.node);
        }
        fc__intervals_free(iv);
    }
    fc__label_scratch_free(&sc);
    assert_null(sc.p);
}

static int cmp_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* fc__sort_ids against qsort, on the sizes where its ways part: insertion alone (up to 32),
 * insertion runs and merges in a buffer on the stack (up to 1024) or on the heap (above), with
 * distinct ids (an interval's) and with repeats, already sorted or reversed. */
static void test_sort_ids(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 16, 17, 31, 32, 33, 48, 100, 1023, 1024, 1025, 5000};
    unsigned seed = 777;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        uint64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
        assert_non_null(a);
        assert_non_null(b);
        for (int shape = 0; shape < 4; shape++) {
            for (size_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                a[i] = shape == 0 ? (uint64_t)seed << 20 | i /* distinct */
                       : shape == 1 ? seed % 7 /* repeats */
                       : shape == 2 ? i : n - i;
            }
            memcpy(b, a, n * sizeof *a);
            fc__sort_ids(a, n);
            if (n > 0)
                qsort(b, n, sizeof *b, cmp_id);
            for (size_t i = 0; i < n; i++)
                assert_true(a[i] == b[i]);
        }
        free(a);
        free(b);
    }
}

static void test_random(void **state)
{
    (void)state;
    random_case(2000, 4000, 60, 0); /* about 15 active flows, mixed conflicts among the rest */
    random_case(2000, 1000, 40, 0); /* about 40 active: mostly same-direction conflicts */
    random_case(300, 3000, 20, 0);  /* sparse, with idle gaps */
    random_case(2000, 8000, 20, 6); /* paths and cycles around a ring of 6 nodes */
    random_case(2000, 4000, 12, 5);
}

/* fc__sweep_lend_all, which the streamed analysis feeds, against fc__intervals_build (a sweep fed
 * one flow at a time, in order of start): random flows lent in batches of 1 to 9, each batch after
 * an advance to its earliest start, with some pairs swapped inside a batch (starts out of order,
 * which wait in the heap) and zero-length and intra flows (never queued), so that the queue of
 * starts is compacted before batches that append nothing to it. Each interval delivered must be
 * the build's: same bounds, same active flows, same labels. */
typedef struct lend_check {
    const fc__intervals *iv;
    size_t seen;
} lend_check;

static int lend_interval(void *arg, const fc__sweep *s, size_t index, double start, double end)
{
    lend_check *lc = arg;
    assert_int_equal(index, lc->seen);
    assert_true(index < fc__intervals_count(lc->iv));
    const fc__interval *in = fc__intervals_get(lc->iv, index);
    assert_true(in->start == start && in->end == end);
    assert_int_equal(fc__sweep_nactive(s), in->nflows);
    /* The ids all at once, in the order of the accessors. */
    size_t n = fc__sweep_nactive(s);
    uint64_t *ids = malloc((n + 1) * sizeof *ids);
    assert_non_null(ids);
    fc__sweep_active_ids(s, ids);
    for (size_t j = 0; j < n; j++) {
        const fc__label *w = fc__interval_label(in, fc__sweep_flow(s, j)->id), *got = fc__sweep_label(s, j);
        assert_non_null(w);
        assert_int_equal(got->kind, w->kind);
        assert_int_equal(got->k, w->k);
        if (w->kind != NONE)
            assert_int_equal(got->node, w->node);
        assert_true(ids[j] == fc__sweep_flow(s, j)->id);
    }
    free(ids);
    lc->seen++;
    return 0;
}

static int cmp_start_id(const void *x, const void *y)
{
    const fc__flow *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static void lend_case(size_t n, uint32_t span, uint32_t maxdur)
{
    fc__flow *f = malloc(n * sizeof *f);
    for (size_t i = 0; i < n; i++) {
        uint32_t a = rnd(8), b = rnd(8), t = rnd(span), len = rnd(6) == 0 ? 0 : 1 + rnd(maxdur);
        f[i] = mk(i, a, b, t, t + len);
        f[i].intra = rnd(9) == 0;
    }
    qsort(f, n, sizeof *f, cmp_start_id);
    fc__intervals *iv;
    assert_int_equal(fc__intervals_build(f, n, &iv), 0);
    lend_check lc = {iv, 0};
    fc__sweep_ops ops = {.arg = &lc, .interval = lend_interval};
    fc__sweep *s;
    assert_int_equal(fc__sweep_new(&ops, &s), 0);
    fc__sweep_back back = {malloc(n * sizeof(fc__flow *)), 0};
    fc__sweep_lender(s, &back);
    fc__sweep_loan v[9];
    for (size_t i = 0; i < n;) {
        size_t m = 1 + rnd(9);
        if (m > n - i)
            m = n - i;
        assert_int_equal(fc__sweep_advance(s, f[i].start), 0);
        for (size_t j = 0; j < m; j++)
            v[j] = (fc__sweep_loan){f[i + j].start, &f[i + j]};
        for (size_t j = 0; j + 1 < m; j += 2)
            if (rnd(3) == 0) {
                fc__sweep_loan t = v[j];
                v[j] = v[j + 1];
                v[j + 1] = t;
            }
        assert_int_equal(fc__sweep_lend_all(s, v, m), 0);
        i += m;
    }
    assert_int_equal(fc__sweep_finish(s), 0);
    assert_int_equal(lc.seen, fc__intervals_count(iv));
    assert_int_equal(back.n, n); /* every flow given back */
    fc__sweep_free(s);
    fc__intervals_free(iv);
    free(back.v);
    free(f);
}

static void test_lend_all(void **state)
{
    (void)state;
    for (int r = 0; r < 20; r++)
        lend_case(3000, 6000, 8 + 4 * (uint32_t)r);
}

/* The sweep's visit stamps are 32 bits and every mark is cleared when they wrap; a stale mark
 * equal to a fresh stamp would skip a flow that needs relabelling or a conflict to report. With
 * the stamps wrapping every second step (1, 2, 1, ...), the random cases (thousands of steps, a
 * conflicts pass per interval) must still agree with the brute force. */
static void test_stamp_wrap(void **state)
{
    (void)state;
    fc__sweep_stamp_wrap = 3;
    random_case(2000, 4000, 60, 0);
    random_case(2000, 8000, 20, 6);
    fc__sweep_stamp_wrap = 0;
}

/* The growth of the arrays the sweep and the builds keep (fc__reserve, fc__reserve_lines): to a
 * doubling of 16 that holds what is asked, new entries zeroed, old ones kept, lines aligned; and
 * a size that cannot be counted in bytes refused, the array left as it was. */
static void test_reserve(void **state)
{
    (void)state;
    uint64_t *v = NULL, *w = NULL;
    size_t cap = 0, wcap = 0;
    assert_int_equal(fc__reserve(&v, &cap, 5, sizeof *v), 0);
    assert_int_equal(cap, 16);
    v[3] = 7;
    assert_int_equal(fc__reserve(&v, &cap, 100, sizeof *v), 0);
    assert_int_equal(cap, 128);
    assert_true(v[3] == 7 && v[16] == 0 && v[127] == 0);
    assert_int_equal(fc__reserve(&v, &cap, SIZE_MAX / sizeof *v + 1, sizeof *v), FC_ENOMEM);
    assert_int_equal(fc__reserve(&v, &cap, SIZE_MAX, sizeof *v), FC_ENOMEM);
    assert_true(cap == 128 && v[3] == 7);
    assert_int_equal(fc__reserve_lines(&w, &wcap, 40, sizeof *w), 0);
    assert_int_equal(wcap, 64);
    assert_true((uintptr_t)w % 64 == 0 && w[39] == 0);
    w[1] = 9;
    assert_int_equal(fc__reserve_lines(&w, &wcap, SIZE_MAX / sizeof *w, sizeof *w), FC_ENOMEM);
    assert_true(wcap == 64 && w[1] == 9);
    assert_int_equal(fc__reserve_lines(&w, &wcap, 65, sizeof *w), 0);
    assert_true(wcap == 128 && w[1] == 9 && w[64] == 0 && (uintptr_t)w % 64 == 0);
    free(v);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementary),     cmocka_unit_test(test_decompositions),
        cmocka_unit_test(test_tie_and_degree), cmocka_unit_test(test_cycles),
        cmocka_unit_test(test_asynchronous),   cmocka_unit_test(test_edges),
        cmocka_unit_test(test_random),         cmocka_unit_test(test_label_set),
        cmocka_unit_test(test_stamp_wrap),     cmocka_unit_test(test_lend_all),
        cmocka_unit_test(test_lean),           cmocka_unit_test(test_sort_ids),
        cmocka_unit_test(test_reserve),        cmocka_unit_test(test_zero_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
