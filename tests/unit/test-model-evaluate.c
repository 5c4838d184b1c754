/* tests/unit/test-model-evaluate.c: self-calibration and the predicted-versus-observed run of an
 * analysis, on hand-made flows whose latency, bandwidth and flow cuts are known in advance, so
 * that what the fit recovers and what the models predict can be computed by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <flowcut/error.h>
#include "model/evaluate.h"

#define LAT 100e-6     /* seconds */
#define PB (8.0 / 200e6) /* seconds per byte: 200 Mbit/s */

/* A match over nodes 0..3 holding the flows f[0..n) (ids must be 0..n-1, inter-node first). */
static fc__match *mk_match(fc__flow *f, size_t n, size_t ninter)
{
    fc__match *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->flows = f;
    m->nflows = n;
    m->ninter = ninter;
    m->eager_threshold = 1u << 30; /* every message eager: one segment each side */
    return m;
}

static fc__flow flow(uint64_t id, uint32_t s, uint32_t d, uint64_t bytes, double start, double observed)
{
    return (fc__flow){.id = id, .src_node = s, .dst_node = d, .bytes = bytes, .start = start,
                     .end = start + observed, .observed = observed, .intra = s == d};
}

/* Uncontended flows of several sizes, one after the other, then three repetitions of two flows
 * leaving node 0 together (an outgoing conflict, k = 2) that took twice the data time: the fit
 * must find LAT and PB, and alpha = 1 for (outgoing, 2); a mixed conflict seen once gets the
 * assumed cut 0, and incoming, never seen, the assumed fair share 1. */
static void selfcal_recovers_known_figures(void **state)
{
    (void)state;
    fc__flow f[16];
    size_t n = 0;
    double t = 0;
    const uint64_t sizes[] = {1000, 100000, 1000000, 4000000};
    for (size_t i = 0; i < 4; i++) {
        double obs = LAT + sizes[i] * PB;
        f[n] = flow(n, 1, 2, sizes[i], t, obs);
        n++;
        t += obs + 1;
    }
    for (int rep = 0; rep < 3; rep++) {
        double obs = LAT + 2 * 1000000 * PB; /* alpha = 1: twice the data time */
        f[n] = flow(n, 0, 1, 1000000, t, obs);
        n++;
        f[n] = flow(n, 0, 2, 1000000, t, obs);
        n++;
        t += obs + 1;
    }
    /* One mixed pair at node 1: 0>1 and 1>3, too few to fit. */
    f[n] = flow(n, 0, 1, 1000000, t, LAT + 1000000 * PB);
    n++;
    f[n] = flow(n, 1, 3, 1000000, t, LAT + 1000000 * PB);
    n++;
    fc__match *m = mk_match(f, n, n);
    fc__intervals *iv;
    assert_int_equal(fc__intervals_build(f, n, &iv), 0);
    fc__profile *p;
    char note[512];
    assert_int_equal(fc__selfcal(m, iv, &p, note, sizeof note), 0);
    assert_non_null(strstr(note, "from 4 uncontended flows"));
    assert_true(fabs(fc__profile_time(p, 0, 0) - LAT) < 1e-9);
    assert_true(fabs(fc__profile_time(p, 0, 3000000) - (LAT + 3000000 * PB)) < 1e-9);
    assert_true(fabs(fc__profile_alpha(p, FC_CONFLICT_OUTGOING, 2, 0) - 1.0) < 1e-9);
    assert_true(fabs(fc__profile_alpha(p, FC_CONFLICT_OUTGOING, 2, 1) - 1.0) < 1e-9);
    assert_true(fabs(fc__profile_alpha(p, FC_CONFLICT_MIXED_OUT, 2, 0)) < 1e-12);
    /* Mixed-in and mixed-out seen once, incoming never: assumed; k = 2 of every kind is there. */
    assert_non_null(strstr(note, "fitted for 1 (kind, k), assumed for 3"));
    assert_true(fabs(fc__profile_alpha(p, FC_CONFLICT_INCOMING, 2, 0) - 1.0) < 1e-12);
    fc__profile_free(p);
    fc__intervals_free(iv);
    free(m);
}

/* A profile of one inter-node segment, LAT + bytes * PB, and nothing else (owned by the caller). */
static fc__profile *line_profile(void)
{
    fc__profile *p = fc__profile_new();
    assert_non_null(p);
    p->inter = malloc(sizeof *p->inter);
    assert_non_null(p->inter);
    p->inter[0] = (fc__segment){0, UINT64_MAX, LAT, PB, 0};
    p->ninter = 1;
    return p;
}

/* With a profile that is exactly right, every model predicts an uncontended flow exactly, and for
 * the outgoing pair (alpha = 1; each flow alone at 1/PB on a NIC of 1/PB) flowcut and fairshare
 * predict LAT + 2 * bytes * PB while linear predicts LAT + bytes * PB (an error of ~50 %). */
static void prediction_errors_by_hand(void **state)
{
    (void)state;
    fc__flow f[3];
    f[0] = flow(0, 1, 2, 2000000, 0, LAT + 2000000 * PB);
    f[1] = flow(1, 0, 1, 1000000, 10, LAT + 2 * 1000000 * PB);
    f[2] = flow(2, 0, 2, 1000000, 10, LAT + 2 * 1000000 * PB);
    fc__match *m = mk_match(f, 3, 3);
    fc__intervals *iv;
    assert_int_equal(fc__intervals_build(f, 3, &iv), 0);
    fc__profile *p = line_profile();
    p->cuts = malloc(sizeof *p->cuts);
    assert_non_null(p->cuts);
    double *al = malloc(2 * sizeof *al);
    assert_non_null(al);
    al[0] = al[1] = 1.0;
    p->cuts[0] = (fc__cut){FC_CONFLICT_OUTGOING, 2, 2, al, 0};
    p->ncuts = 1;
    const unsigned models[] = {FC_MODEL_LINEAR, FC_MODEL_FLOWCUT, FC_MODEL_FAIRSHARE, FC_MODEL_MAXRATE};
    fc__prediction *pr;
    /* maxrate without its parameters: left out under "all", named in skipped. */
    assert_int_equal(fc__prediction_run(m, iv, p, models, 4, 1, &pr), 0);
    assert_int_equal(pr->nmodels, 3);
    assert_non_null(strstr(pr->skipped, "maxrate"));
    double obs_pair = LAT + 2e6 * PB, lin_pair = LAT + 1e6 * PB;
    for (unsigned j = 0; j < pr->nmodels; j++) {
        assert_true(fabs(pr->pred[j][0] - f[0].observed) < 1e-9);
        double want = pr->model[j] == FC_MODEL_LINEAR ? lin_pair : obs_pair;
        assert_true(fabs(pr->pred[j][1] - want) < 1e-9);
        assert_true(fabs(pr->pred[j][2] - want) < 1e-9);
        if (pr->model[j] == FC_MODEL_LINEAR) {
            /* Two flows off by (obs - lin) / obs each, one exact: the mean of the three. */
            double e = (obs_pair - lin_pair) / obs_pair * 100;
            assert_true(fabs(pr->err[j].mean_abs_pct - 2 * e / 3) < 1e-6);
            assert_true(fabs(pr->err[j].max_abs_pct - e) < 1e-6);
            assert_int_equal(pr->err[j].best, 0);
            /* The interval holding the pair: both flows off by e. */
            size_t last = fc__intervals_count(iv) - 1;
            assert_true(fabs(pr->iv_err[j][last] - e) < 1e-6);
        } else {
            assert_true(pr->err[j].mean_abs_pct < 1e-6);
        }
    }
    fc__prediction_free(pr);
    /* The same with intervals built lean, which keep no interval's flows: the interval errors are
     * the same, worked out by hand for both intervals (flow 0 alone on [0, obs), then the pair). */
    fc__intervals *lean;
    assert_int_equal(fc__intervals_build_lean(f, 3, &lean), 0);
    assert_int_equal(fc__intervals_count(lean), 2);
    assert_int_equal(fc__prediction_run(m, lean, line_profile(), models, 1, 0, &pr), 0);
    assert_int_equal(pr->nmodels, 1);
    assert_true(fabs(pr->iv_err[0][0]) < 1e-6);
    assert_true(fabs(pr->iv_err[0][1] - (obs_pair - lin_pair) / obs_pair * 100) < 1e-6);
    fc__prediction_free(pr);
    fc__intervals_free(lean);
    /* Asked for by name, a model the profile cannot serve is an error. */
    fc__profile *p2 = fc__profile_new();
    assert_non_null(p2);
    const unsigned mr[] = {FC_MODEL_MAXRATE};
    assert_int_equal(fc__prediction_run(m, iv, p2, mr, 1, 0, &pr), FC_EINVAL);
    assert_null(pr);
    fc__intervals_free(iv);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(selfcal_recovers_known_figures),
        cmocka_unit_test(prediction_errors_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
