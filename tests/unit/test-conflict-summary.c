/* tests/unit/test-conflict-summary.c: the text report's summary (summary.h), gathered from the
 * sweep as it goes, checked against the same figures computed in the plain way from a complete
 * fc__intervals_build (which test-conflict-intervals checks against a from-scratch labelling):
 * the flow-seconds by label, the largest k, the worst intervals with their conflicts, the worst
 * flows with their histories, and the conflict time by node and by call site. Also the sweep's
 * contract on flows that start before the time already swept. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <flowcut/error.h>
#include "conflict/intervals.h"
#include "conflict/summary.h"
#include "conflict/sweep.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b));
}

/* The worst-interval order of the report, from a stored interval. */
typedef struct ivkey {
    size_t index;
    uint32_t maxk;
    size_t nflows;
    double len;
} ivkey;

static int cmp_ivkey(const void *x, const void *y)
{
    const ivkey *a = x, *b = y;
    if (a->maxk != b->maxk)
        return a->maxk > b->maxk ? -1 : 1;
    if (a->nflows != b->nflows)
        return a->nflows > b->nflows ? -1 : 1;
    if (a->len != b->len)
        return a->len > b->len ? -1 : 1;
    return a->index < b->index ? -1 : 1;
}

static int cmp_worst_flow(const void *x, const void *y)
{
    const fc__flow *a = x, *b = y;
    double ra = a->observed / (double)(a->bytes ? a->bytes : 1), rb = b->observed / (double)(b->bytes ? b->bytes : 1);
    if (ra != rb)
        return ra > rb ? -1 : 1;
    return a->id < b->id ? -1 : 1;
}

/* Conflict time of (rank, site, side) rows, found by linear search: plain on purpose. */
typedef struct srow {
    uint32_t rank;
    uint64_t site;
    int send;
    uint64_t flows;
    double total;
} srow;

static srow *srow_of(srow *v, size_t *n, uint32_t rank, uint64_t site, int send)
{
    for (size_t i = 0; i < *n; i++)
        if (v[i].rank == rank && v[i].site == site && v[i].send == send)
            return &v[i];
    v[*n] = (srow){rank, site, send, 0, 0};
    return &v[(*n)++];
}

static void random_case(size_t n, uint32_t span, uint32_t maxdur, size_t top)
{
    fc__flow *f = calloc(n, sizeof *f);
    for (size_t i = 0; i < n; i++) {
        uint32_t s = rnd(12), d = rnd(12), t = rnd(span), len = 1 + rnd(maxdur);
        if (rnd(40) == 0)
            len = 0;
        f[i] = (fc__flow){.id = i * 7 % n, .src_node = s, .dst_node = d, .src_rank = 2 * s + rnd(2),
                         .dst_rank = 2 * d + rnd(2), .bytes = 1 + rnd(5) * 1000, .start = t, .end = t + len,
                         .observed = len, .send_site = 1 + rnd(3), .recv_site = 1 + rnd(3)};
        f[i].intra = s == d && rnd(3) != 0;
    }
    fc__intervals *iv;
    fc__summary *sum;
    assert_int_equal(fc__intervals_build(f, n, &iv), 0);
    assert_int_equal(fc__summary_build(f, n, top, &sum), 0);
    size_t niv = fc__intervals_count(iv);
    assert_int_equal(sum->nintervals, niv);
    assert_int_equal(sum->nflows, n);
    assert_int_equal(sum->max_k, fc__intervals_max_k(iv));
    for (uint32_t kind = FC_CONFLICT_NONE; kind <= FC_CONFLICT_MIXED_OUT; kind++)
        for (uint32_t k = 0; k <= n + 1; k++)
            assert_true(near(fc__summary_time(sum, kind, k), fc__intervals_time(iv, kind, k)));

    /* Worst intervals: the whole list sorted, then cut. */
    ivkey *key = malloc((niv + 1) * sizeof *key);
    double *node_t = calloc(12, sizeof *node_t);
    for (size_t i = 0; i < niv; i++) {
        const fc__interval *in = fc__intervals_get(iv, i);
        key[i] = (ivkey){i, 0, in->nflows, in->end - in->start};
        for (size_t j = 0; j < in->nflows; j++) {
            if (in->labels[j].k > key[i].maxk)
                key[i].maxk = in->labels[j].k;
            if (in->labels[j].kind != FC_CONFLICT_NONE)
                node_t[in->labels[j].node] += in->end - in->start;
        }
    }
    qsort(key, niv, sizeof *key, cmp_ivkey);
    size_t want = top && top < niv ? top : niv;
    assert_int_equal(sum->nworst, want);
    for (size_t q = 0; q < want; q++) {
        const fc__sum_interval *w = &sum->worst[q];
        const fc__conflict *c;
        assert_int_equal(w->index, key[q].index);
        assert_int_equal(w->max_k, key[q].maxk);
        size_t nc = fc__intervals_conflicts(iv, key[q].index, &c);
        assert_int_equal(w->nconf, nc);
        for (size_t j = 0; j < nc; j++) {
            assert_int_equal(w->conf[j].kind, c[j].kind);
            assert_int_equal(w->conf[j].node, c[j].node);
            assert_int_equal(w->conf[j].k, c[j].k);
            assert_memory_equal(w->conf[j].flows, c[j].flows, c[j].k * sizeof *c[j].flows);
        }
    }

    /* Hot nodes: by node, from every interval's labels. */
    size_t nhot = 0;
    for (size_t x = 0; x < 12; x++)
        nhot += node_t[x] > 0;
    assert_int_equal(sum->nnodes, nhot);
    for (size_t q = 0; q < sum->nnodes; q++) {
        assert_true(near(sum->nodes[q].total, node_t[sum->nodes[q].node]));
        assert_true(near(sum->nodes[q].total, sum->nodes[q].out + sum->nodes[q].in + sum->nodes[q].mixed));
        if (q > 0)
            assert_true(sum->nodes[q - 1].total >= sum->nodes[q].total);
    }

    /* Worst flows and call sites, from the stored histories. */
    fc__flow *sorted = malloc(n * sizeof *sorted);
    memcpy(sorted, f, n * sizeof *f);
    qsort(sorted, n, sizeof *sorted, cmp_worst_flow);
    srow *rows = calloc(2 * n + 1, sizeof *rows);
    size_t nrows = 0;
    for (size_t i = 0; i < n; i++) {
        const fc__label_run *runs;
        size_t nr;
        double cs = 0;
        assert_int_equal(fc__intervals_history(iv, f[i].id, &runs, &nr), 0);
        for (size_t r = 0; r < nr; r++)
            if (runs[r].label.kind != FC_CONFLICT_NONE)
                cs += runs[r].end - runs[r].start;
        if (cs > 0) {
            srow *a = srow_of(rows, &nrows, f[i].src_rank, f[i].send_site, 1);
            a->flows++, a->total += cs;
            a = srow_of(rows, &nrows, f[i].dst_rank, f[i].recv_site, 0);
            a->flows++, a->total += cs;
        }
    }
    want = top && top < n ? top : n;
    assert_int_equal(sum->nwflows, want);
    for (size_t q = 0; q < want; q++) {
        const fc__sum_flow *w = &sum->wflows[q];
        const fc__label_run *runs;
        size_t nr;
        double cs = 0;
        assert_int_equal(w->flow.id, sorted[q].id);
        assert_int_equal(fc__intervals_history(iv, w->flow.id, &runs, &nr), 0);
        assert_int_equal(w->nruns, nr);
        for (size_t r = 0; r < nr; r++) {
            assert_memory_equal(&w->runs[r].label, &runs[r].label, sizeof runs[r].label);
            assert_int_equal(w->runs[r].first, runs[r].first);
            assert_int_equal(w->runs[r].count, runs[r].count);
            if (runs[r].label.kind != FC_CONFLICT_NONE)
                cs += runs[r].end - runs[r].start;
        }
        assert_true(near(w->conflict_s, cs));
    }
    assert_int_equal(sum->nsites, nrows);
    for (size_t q = 0; q < sum->nsites; q++) {
        const fc__sum_row *s = &sum->sites[q];
        srow *r = srow_of(rows, &nrows, s->rank, s->site, s->send);
        assert_int_equal(nrows, sum->nsites); /* found, not added */
        assert_int_equal(s->flows, r->flows);
        assert_true(near(s->total, r->total));
        if (q > 0)
            assert_true(sum->sites[q - 1].total >= s->total);
    }
    free(rows);
    free(sorted);
    free(node_t);
    free(key);
    fc__summary_free(sum);
    fc__intervals_free(iv);
    free(f);
}

static void test_random(void **state)
{
    (void)state;
    random_case(1500, 3000, 40, 10); /* about 20 active flows */
    random_case(1500, 800, 40, 7);   /* about 75 active: k up to about 12 */
    random_case(400, 4000, 10, 0);   /* sparse, with idle gaps; every row kept */
    random_case(3, 10, 5, 10);       /* fewer rows than the top */
}

/* A flow that starts before the time already swept is refused, and nothing is lost before it. */
static int count_iv(void *arg, const fc__sweep *s, size_t index, double start, double end)
{
    (void)s, (void)index, (void)start, (void)end;
    ++*(size_t *)arg;
    return 0;
}

static void test_order(void **state)
{
    (void)state;
    size_t count = 0;
    fc__sweep_ops ops = {.arg = &count, .interval = count_iv};
    fc__sweep *s;
    fc__flow a = {.id = 0, .src_node = 0, .dst_node = 1, .start = 1, .end = 3, .bytes = 1};
    fc__flow b = {.id = 1, .src_node = 2, .dst_node = 1, .start = 2, .end = 4, .bytes = 1};
    fc__flow late = {.id = 2, .src_node = 2, .dst_node = 3, .start = 1.5, .end = 5, .bytes = 1};
    assert_int_equal(fc__sweep_new(&ops, &s), 0);
    assert_int_equal(fc__sweep_add(s, &a), 0);
    assert_int_equal(fc__sweep_advance(s, 2), 0);
    assert_int_equal(fc__sweep_add(s, &late), FC_EINVAL);
    assert_int_equal(fc__sweep_add(s, &b), 0);
    assert_int_equal(fc__sweep_finish(s), 0);
    assert_int_equal(count, 3); /* [1,2) a alone, [2,3) a and b incoming, [3,4) b alone */
    fc__sweep_free(s);
}

/* Flows may be given in any order when nothing has been swept yet: started out of order, they wait
 * in the heap instead of the queue, and the intervals are the same as in order. */
static void test_any_order(void **state)
{
    (void)state;
    size_t n = 600;
    fc__flow *f = calloc(n, sizeof *f);
    for (size_t i = 0; i < n; i++) {
        uint32_t a = rnd(8), b = rnd(8), t = rnd(1000), len = 1 + rnd(30);
        f[i] = (fc__flow){.id = i, .src_node = a, .dst_node = b, .src_rank = a, .dst_rank = b, .bytes = 1000,
                         .start = t, .end = t + len, .observed = len};
    }
    fc__summary *in_order, *any;
    assert_int_equal(fc__summary_build(f, n, 5, &in_order), 0);
    assert_int_equal(fc__summary_new(5, &any), 0);
    fc__sweep_ops ops = fc__summary_ops(any);
    fc__sweep *s;
    assert_int_equal(fc__sweep_new(&ops, &s), 0);
    for (size_t i = 0; i < n; i++) /* a stride prime to n visits every flow once, out of order */
        assert_int_equal(fc__sweep_add(s, &f[(i * 7) % n]), 0);
    assert_int_equal(fc__sweep_finish(s), 0);
    fc__sweep_free(s);
    assert_int_equal(fc__summary_finish(any), 0);
    assert_int_equal(any->nintervals, in_order->nintervals);
    assert_true(any->nintervals > 100);
    for (uint32_t kind = FC_CONFLICT_NONE; kind <= FC_CONFLICT_MIXED_OUT; kind++)
        for (uint32_t k = 0; k < 10; k++)
            assert_true(near(fc__summary_time(any, kind, k), fc__summary_time(in_order, kind, k)));
    assert_int_equal(any->nworst, in_order->nworst);
    for (size_t q = 0; q < any->nworst; q++)
        assert_int_equal(any->worst[q].index, in_order->worst[q].index);
    fc__summary_free(any);
    fc__summary_free(in_order);
    free(f);
}

static int stop_at_5(void *arg, const fc__sweep *s, size_t i, double start, double end)
{
    (void)s, (void)start, (void)end;
    ++*(size_t *)arg;
    return i == 5 ? FC_ENOMEM : 0;
}

/* One sweep for the lean build and the summary (fc__intervals_build_lean_also) gives what the two
 * give apart, exactly: the summary's own filter on k and flows is applied by the build's sweep as
 * it would by its own. And a consumer that fails stops the build, which returns its error. */
static void test_build_also(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        size_t n = 400 + 300 * (size_t)round, top = round == 2 ? 0 : 4;
        fc__flow *f = calloc(n, sizeof *f);
        for (size_t i = 0; i < n; i++) {
            uint32_t a = rnd(10), b = rnd(10), t = rnd(2000), len = 1 + rnd(60);
            f[i] = (fc__flow){.id = i, .src_node = a, .dst_node = b, .src_rank = 2 * a + rnd(2),
                             .dst_rank = 2 * b + rnd(2), .bytes = 1 + rnd(5) * 1000, .start = t, .end = t + len,
                             .observed = len, .send_site = 1 + rnd(3), .recv_site = 1 + rnd(3)};
        }
        fc__intervals *iv1, *iv2;
        fc__summary *s1, *s2;
        assert_int_equal(fc__summary_build(f, n, top, &s1), 0);
        assert_int_equal(fc__intervals_build_lean(f, n, &iv1), 0);
        assert_int_equal(fc__summary_new(top, &s2), 0);
        fc__sweep_ops ops = fc__summary_ops(s2);
        assert_int_equal(fc__intervals_build_lean_also(f, n, &ops, &iv2), 0);
        assert_int_equal(fc__summary_finish(s2), 0);
        assert_int_equal(s2->nintervals, s1->nintervals);
        assert_int_equal(s2->nflows, s1->nflows);
        assert_int_equal(s2->max_k, s1->max_k);
        for (uint32_t kind = FC_CONFLICT_NONE; kind <= FC_CONFLICT_MIXED_OUT; kind++)
            for (uint32_t k = 0; k < 12; k++) {
                assert_true(fc__summary_time(s2, kind, k) == fc__summary_time(s1, kind, k));
                assert_true(fc__intervals_time(iv2, kind, k) == fc__intervals_time(iv1, kind, k));
            }
        assert_int_equal(s2->nworst, s1->nworst);
        assert_true(s1->nworst > 0);
        for (size_t q = 0; q < s1->nworst; q++) {
            assert_int_equal(s2->worst[q].index, s1->worst[q].index);
            assert_int_equal(s2->worst[q].nconf, s1->worst[q].nconf);
        }
        assert_int_equal(s2->nwflows, s1->nwflows);
        for (size_t q = 0; q < s1->nwflows; q++)
            assert_int_equal(s2->wflows[q].flow.id, s1->wflows[q].flow.id);
        assert_int_equal(fc__intervals_count(iv2), fc__intervals_count(iv1));
        for (size_t i = 0; i < fc__intervals_count(iv1); i++) {
            const fc__interval *a = fc__intervals_get(iv1, i), *b = fc__intervals_get(iv2, i);
            assert_true(a->start == b->start && a->end == b->end && a->nflows == b->nflows);
        }
        for (uint64_t id = 0; id < n; id++) {
            const fc__label_run *r1, *r2;
            size_t n1, n2;
            assert_int_equal(fc__intervals_history(iv1, id, &r1, &n1), 0);
            assert_int_equal(fc__intervals_history(iv2, id, &r2, &n2), 0);
            assert_int_equal(n2, n1);
            for (size_t j = 0; j < n1; j++)
                assert_true(r1[j].first == r2[j].first && r1[j].count == r2[j].count && r1[j].start == r2[j].start &&
                            r1[j].end == r2[j].end && r1[j].label.kind == r2[j].label.kind &&
                            r1[j].label.node == r2[j].label.node && r1[j].label.k == r2[j].label.k);
        }
        fc__intervals_free(iv1);
        fc__intervals_free(iv2);
        fc__summary_free(s1);
        fc__summary_free(s2);
        /* A consumer that fails at its sixth interval. */
        size_t seen = 0;
        fc__sweep_ops bad = {.arg = &seen, .interval = stop_at_5};
        fc__intervals *iv3 = (fc__intervals *)f;
        assert_int_equal(fc__intervals_build_lean_also(f, n, &bad, &iv3), FC_ENOMEM);
        assert_null(iv3);
        assert_int_equal(seen, 6);
        free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_random), cmocka_unit_test(test_order),
                                       cmocka_unit_test(test_any_order), cmocka_unit_test(test_build_also)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
