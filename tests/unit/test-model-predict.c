/* tests/unit/test-model-predict.c: the section 5.3 prediction of a trace's flows (fc__predict),
 * Table 3's error statistics (fc__errors_compute) and the model names, against hand
 * calculations. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <flowcut/error.h>
#include <flowcut/format.h>
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

#define MIB (1u << 20)

static fc__profile *mkprof(void)
{
    fc__profile *p = fc__profile_new();
    assert_non_null(p);
    /* 2^-20 s per byte, no latency: w MiB take w seconds alone. */
    assert_int_equal(fc__profile_add_segment(p, 0, 0, UINT64_MAX, 0, 1.0 / MIB, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, FC_CONFLICT_OUTGOING, 2, (double[]){1, 3}, 2, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, FC_CONFLICT_INCOMING, 2, (double[]){1, 1}, 2, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, FC_CONFLICT_MIXED_IN, 2, (double[]){0}, 1, 0), 0);
    assert_int_equal(fc__profile_add_cut(p, FC_CONFLICT_MIXED_OUT, 2, (double[]){3}, 1, 0), 0);
    return p;
}

/* A match result holding only inter-node flows, listed in order of start as matching does. */
static void mkflow(fc__flow *f, uint64_t id, uint32_t src, uint32_t dst, double start, double mib)
{
    memset(f, 0, sizeof *f);
    f->id = id;
    f->src_node = src;
    f->dst_node = dst;
    f->start = start;
    f->bytes = (uint64_t)(mib * MIB);
}

/* The staggered example of test-model-net.c (test_async_flowcut), now as a trace's flows:
 *   f0 0>1 at 0, 4 MiB;  f1 0>2 at 1, 2 MiB;  f2 3>0 at 2, 1 MiB;  f3 5>6 at 4;  f4 6>7 at 4.5.
 * Interval by interval (see there): ends f0 7, f1 7.5, f2 3, f3 5, f4 5.875, so the predicted
 * durations are 7, 6.5, 1, 1, 1.375. Under linear they are the sizes: 4, 2, 1, 1, 1. Under
 * fairshare: [1,2) f0, f1 share node 0's output, 1/2 each (2.5, 1.5 left at 2); f2 enters 0, alone
 * in its direction, full speed until 3 (f0 2.0, f1 1.0 left); f1 ends at 3 + 2 = 5, f0 has 1.0
 * left then, alone: ends at 6. f3 5>6 and f4 6>7 share no NIC direction (one enters node 6, the
 * other leaves it): both at full speed. Durations: 6, 4, 1, 1, 1. */
static void test_predict_async(void **state)
{
    (void)state;
    fc__profile *p = mkprof();
    fc__flow f[5];
    mkflow(&f[0], 0, 0, 1, 0, 4);
    mkflow(&f[1], 1, 0, 2, 1, 2);
    mkflow(&f[2], 2, 3, 0, 2, 1);
    mkflow(&f[3], 3, 5, 6, 4, 1);
    mkflow(&f[4], 4, 6, 7, 4.5, 1);
    fc__match m = {.nflows = 5, .ninter = 5, .flows = f};
    static const double want[FC_NMODELS][5] = {
        [FC_MODEL_FLOWCUT] = {7, 6.5, 1, 1, 1.375},
        [FC_MODEL_LINEAR] = {4, 2, 1, 1, 1},
        [FC_MODEL_FAIRSHARE] = {6, 4, 1, 1, 1},
    };
    double pred[5];
    assert_int_equal(fc__predict(&m, p, FC_MODEL_FLOWCUT, pred), 0);
    for (int i = 0; i < 5; i++)
        assert_near(pred[i], want[FC_MODEL_FLOWCUT][i], 1e-12);
    assert_int_equal(fc__predict(&m, p, FC_MODEL_LINEAR, pred), 0);
    for (int i = 0; i < 5; i++)
        assert_near(pred[i], want[FC_MODEL_LINEAR][i], 1e-12);
    assert_int_equal(fc__predict(&m, p, FC_MODEL_FAIRSHARE, pred), 0);
    for (int i = 0; i < 5; i++)
        assert_near(pred[i], want[FC_MODEL_FAIRSHARE][i], 1e-12);
    /* Starts before the origin are shifted, durations unchanged. */
    for (int i = 0; i < 5; i++)
        f[i].start -= 10;
    assert_int_equal(fc__predict(&m, p, FC_MODEL_FLOWCUT, pred), 0);
    for (int i = 0; i < 5; i++)
        assert_near(pred[i], want[FC_MODEL_FLOWCUT][i], 1e-12);
    /* maxrate without its parameters is refused. */
    assert_int_equal(fc__predict(&m, p, FC_MODEL_MAXRATE, pred), FC_EINVAL);
    /* No flows: nothing to do. */
    fc__match empty = {0};
    assert_int_equal(fc__predict(&empty, p, FC_MODEL_FLOWCUT, NULL), 0);
    fc__profile_free(p);
}

/* The messages of one pair of ranks under a profile whose connection record says serial:
 *   f0 rank 2 -> 5 (node 0 -> 1) at 0, 2 MiB;  f1 rank 2 -> 5 at 0.5, 1 MiB;  f2 rank 3 -> 6 (node 0 -> 2)
 *   at 0, 1 MiB.
 * fairshare, serial: f0 and f2 share node 0's output at 1/2; f1 waits behind f0. f2 ends at 2; f0
 * (1 MiB left) alone at 3; then f1 alone at 4. Durations 3, 3.5, 2.
 * fairshare, no record: f0 and f2 have moved 0.25 MiB each by 0.5, then the three share node 0's
 * output at 1/3: f2 ends at 2.75; f1 (0.75 MiB done) then shares with f0 at 1/2 and ends at 3.25;
 * f0 (1 MiB left at 2.75, 0.25 done by 3.25) ends alone at 4. Durations 4, 2.75, 2.75. */
static void test_predict_connection(void **state)
{
    (void)state;
    fc__profile *p = mkprof();
    fc__flow f[3];
    mkflow(&f[0], 0, 0, 1, 0, 2);
    mkflow(&f[1], 1, 0, 1, 0.5, 1);
    mkflow(&f[2], 2, 0, 2, 0, 1);
    f[0].src_rank = f[1].src_rank = 2;
    f[0].dst_rank = f[1].dst_rank = 5;
    f[2].src_rank = 3;
    f[2].dst_rank = 6;
    /* Matching numbers flows in order of start: f2 before f1. */
    fc__flow tmp = f[1];
    f[1] = f[2];
    f[2] = tmp;
    f[1].id = 1;
    f[2].id = 2;
    fc__match m = {.nflows = 3, .ninter = 3, .flows = f};
    double pred[3];
    p->has_conn = 1;
    p->conn_serial = 1;
    assert_int_equal(fc__predict(&m, p, FC_MODEL_FAIRSHARE, pred), 0);
    assert_near(pred[0], 3, 1e-12);
    assert_near(pred[2], 3.5, 1e-12);
    assert_near(pred[1], 2, 1e-12);
    p->has_conn = 0;
    assert_int_equal(fc__predict(&m, p, FC_MODEL_FAIRSHARE, pred), 0);
    assert_near(pred[0], 4, 1e-12);
    assert_near(pred[2], 2.75, 1e-12);
    assert_near(pred[1], 2.75, 1e-12);
    fc__profile_free(p);
}

/* A collective's step leaves the simulation at its end, finished or not: the trace shows its bytes
 * crossing inside the call, and a model that cannot move them there must not push them onto the
 * flows after it.
 *   f0 a step of an MPI_Alltoall, node 0 -> 1 at 0, 10 MiB, its step ending at 1 (10 s alone);
 *   f1 point to point 0 -> 2 at 0, 1 MiB;  f2 point to point 0 -> 1 at 5, 1 MiB (after the call).
 * Over [0, 1) f0 and f1 share node 0's output (outgoing k = 2, cuts 1 and 3: under flowcut f0,
 * first in key order, moves at 1/2 and f1 at 1/4). fairshare: 1/2 each, f1 has 0.5 MiB left at 1, f0 leaves, f1 ends alone at 1.5;
 * f2 alone: 1. flowcut: f1 at 1/4 has 0.75 MiB left at 1 and ends at 1.75; f2: 1. f0's prediction
 * is its window, 1. Left in (a step of no collective): fairshare, f0 and f1 at 1/2 until f1 ends at 2,
 * f0 (9 MiB left) alone until f2 joins at 5 (6 MiB left), then 1/2 each: f2 ends at 7 (2 s), f0
 * (5 MiB left) at 12. Under linear every flow takes its size: 10, 1, 1, but f0 is cut at 1. */
static void test_predict_collective_window(void **state)
{
    (void)state;
    fc__profile *p = mkprof();
    fc__flow f[3];
    mkflow(&f[0], 0, 0, 1, 0, 10);
    mkflow(&f[1], 1, 0, 2, 0, 1);
    mkflow(&f[2], 2, 0, 1, 5, 1);
    f[0].end = 1;
    f[1].end = 1.5;
    f[2].end = 6;
    f[0].coll = FC_EV_MPI_Alltoall;
    f[0].src_rank = 0, f[0].dst_rank = 2;
    f[1].src_rank = 1, f[1].dst_rank = 4;
    f[2].src_rank = 0, f[2].dst_rank = 2;
    fc__match m = {.nflows = 3, .ninter = 3, .flows = f};
    double pred[3];
    assert_int_equal(fc__predict(&m, p, FC_MODEL_FAIRSHARE, pred), 0);
    assert_near(pred[0], 1, 1e-12);
    assert_near(pred[1], 1.5, 1e-12);
    assert_near(pred[2], 1, 1e-12);
    assert_int_equal(fc__predict(&m, p, FC_MODEL_FLOWCUT, pred), 0);
    assert_near(pred[0], 1, 1e-12);
    assert_near(pred[1], 1.75, 1e-12);
    assert_near(pred[2], 1, 1e-12);
    assert_int_equal(fc__predict(&m, p, FC_MODEL_LINEAR, pred), 0);
    assert_near(pred[0], 1, 1e-12);
    assert_near(pred[1], 1, 1e-12);
    assert_near(pred[2], 1, 1e-12);
    /* A step that ends in its window keeps its prediction: 10 MiB alone end at 10. */
    f[0].end = 10;
    f[1].start = f[2].start = 20;
    assert_int_equal(fc__predict(&m, p, FC_MODEL_FAIRSHARE, pred), 0);
    assert_near(pred[0], 10, 1e-12);
    assert_near(pred[1], 2, 1e-12);
    f[0].end = 1;
    f[1].start = 0;
    f[2].start = 5;
    /* The same flows as point-to-point ones are simulated to their ends. */
    f[0].coll = 0;
    assert_int_equal(fc__predict(&m, p, FC_MODEL_FAIRSHARE, pred), 0);
    assert_near(pred[0], 12, 1e-12);
    assert_near(pred[1], 2, 1e-12);
    assert_near(pred[2], 2, 1e-12);
    fc__profile_free(p);
}

/* obs 1, 2, 4, 0 (left out), 5 against pred 1.1, 1.5, 4, 3, 5.5, ids 10..14:
 * errors 10 %, 25 %, 0 %, -, 10 %: n 4, mean 45 / 4 = 11.25 %, global |12.1 - 12| / 12 = 0.8333 %,
 * p95 the ceil(0.95 * 4) = 4th smallest = 25 %, max 25 % (id 11), best 0 % (id 12). */
static void test_errors(void **state)
{
    (void)state;
    const double obs[] = {1, 2, 4, 0, 5}, pred[] = {1.1, 1.5, 4, 3, 5.5};
    const uint64_t ids[] = {10, 11, 12, 13, 14};
    fc__errors e;
    fc__errors_compute(obs, pred, ids, 5, &e);
    assert_int_equal(e.n, 4);
    assert_near(e.mean_abs_pct, 11.25, 1e-9);
    assert_near(e.global_pct, 0.1 / 12 * 100, 1e-9);
    assert_near(e.p95_abs_pct, 25, 1e-9);
    assert_near(e.max_abs_pct, 25, 1e-9);
    assert_int_equal(e.worst, 11);
    assert_int_equal(e.best, 12);
    assert_near(e.best_abs_pct, 0, 1e-12);
    /* Without ids, flows are named by index. */
    fc__errors_compute(obs, pred, NULL, 5, &e);
    assert_int_equal(e.worst, 1);
    assert_int_equal(e.best, 2);
    /* Errors 1 %, 2 %, ..., 20 % (obs 100, pred 100 + i): p95 is the 19th smallest, 19 %; mean
     * 10.5 %; global 210 / 2000 = 10.5 %. */
    double o[20], pr[20];
    for (int i = 0; i < 20; i++) {
        o[i] = 100;
        pr[i] = 100 + (20 - i); /* descending, so that the percentile needs the sort */
    }
    fc__errors_compute(o, pr, NULL, 20, &e);
    assert_int_equal(e.n, 20);
    assert_near(e.p95_abs_pct, 19, 1e-9);
    assert_near(e.mean_abs_pct, 10.5, 1e-9);
    assert_near(e.global_pct, 10.5, 1e-9);
    assert_int_equal(e.worst, 0);
    assert_int_equal(e.best, 19);
    /* Nothing comparable: all zero. */
    fc__errors_compute(obs + 3, pred + 3, NULL, 1, &e);
    assert_int_equal(e.n, 0);
    assert_true(e.mean_abs_pct == 0 && e.p95_abs_pct == 0);
}

/* The 95th percentile of many errors, with runs of equal values, in every arrangement the
 * selection has to cope with. Errors 0, 1 ... 999 % (pred 100 + v against obs 100), each 7 times:
 * the nearest rank needs ceil(0.95 * 7000) = 6650 flows at or below it, which 0 .. 949 fill
 * exactly, so 949 %, in ascending order, descending and shuffled. In an organ pipe (up, then
 * down) the values are uneven, and the answer is counted: the smallest value with 6650 flows at
 * or below it. */
static void test_p95_many(void **state)
{
    (void)state;
    enum { M = 1000, R = 7, N = M * R };
    double *o = malloc(N * sizeof *o), *pr = malloc(N * sizeof *pr);
    assert_true(o != NULL && pr != NULL);
    uint32_t x = 7;
    for (int layout = 0; layout < 4; layout++) {
        for (size_t i = 0; i < N; i++) {
            size_t v = layout == 1 ? (N - 1 - i) / R : i / R;
            if (layout == 2)
                v = (i < N / 2 ? i : N - 1 - i) * M / (N / 2 + 1);
            o[i] = 100;
            pr[i] = 100 + (double)v;
        }
        for (size_t i = N - 1; layout == 3 && i > 0; i--) { /* Fisher-Yates */
            x = x * 1103515245u + 12345u;
            size_t j = (x >> 8) % (i + 1);
            double t = pr[i];
            pr[i] = pr[j];
            pr[j] = t;
        }
        double expect = 949;
        if (layout == 2) {
            size_t need = (95 * (size_t)N + 99) / 100, at_or_below = 0;
            for (expect = -1; at_or_below < need;) {
                expect++;
                at_or_below = 0;
                for (size_t i = 0; i < N; i++)
                    at_or_below += pr[i] - 100 <= expect;
            }
        }
        fc__errors e;
        fc__errors_compute(o, pr, NULL, N, &e);
        assert_int_equal(e.n, N);
        assert_near(e.p95_abs_pct, expect, 1e-9);
    }
    free(o);
    free(pr);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(fc__model_name(FC_MODEL_LINEAR), "linear");
    assert_string_equal(fc__model_name(FC_MODEL_FLOWCUT), "flowcut");
    assert_string_equal(fc__model_name(FC_MODEL_MAXRATE), "maxrate");
    assert_string_equal(fc__model_name(FC_MODEL_FAIRSHARE), "fairshare");
    assert_string_equal(fc__model_name(99), "unknown");
    assert_int_equal(fc__model_parse("fairshare"), FC_MODEL_FAIRSHARE);
    assert_int_equal(fc__model_parse("flowcut"), FC_MODEL_FLOWCUT);
    assert_int_equal(fc__model_parse("Flowcut"), -1);
    assert_int_equal(fc__model_parse(NULL), -1);
    fc__profile *p = fc__profile_new();
    assert_non_null(p);
    /* No segments: no model. */
    assert_int_equal(fc__model_usable(p, FC_MODEL_LINEAR), 0);
    assert_int_equal(fc__profile_add_segment(p, 0, 0, UINT64_MAX, 1e-5, 1e-9, 0), 0);
    assert_int_equal(fc__model_usable(p, FC_MODEL_LINEAR), 1);
    assert_int_equal(fc__model_usable(p, FC_MODEL_FAIRSHARE), 1);
    assert_int_equal(fc__model_usable(p, FC_MODEL_FLOWCUT), 0);
    assert_int_equal(fc__model_usable(p, FC_MODEL_MAXRATE), 0);
    assert_int_equal(fc__model_usable(p, FC_NMODELS), 0);
    p->has_maxrate = 1;
    p->maxrate = (fc__maxrate){.s = 1e-6, .r_nic = 1e9, .r_core_base = 5e8, .r_core_incr = 1e8};
    assert_int_equal(fc__model_usable(p, FC_MODEL_MAXRATE), 1);
    p->maxrate.r_nic = 0;
    assert_int_equal(fc__model_usable(p, FC_MODEL_MAXRATE), 0);
    fc__profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predict_async),
        cmocka_unit_test(test_predict_connection),
        cmocka_unit_test(test_predict_collective_window),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_p95_many),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
