/* analyzer/model/evaluate.c: the predicted-versus-observed part of an analysis: self-calibration of a
 * profile from the trace's own flows, and the run of each model over the inter-node flows with
 * its errors per flow, per interval and in Table 3's statistics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "model/fit.h"
#include "util/internal.h"
#include "model/evaluate.h"
#include "conflict/sweep.h"

/* Least squares of t = lat + b * per_byte over n points (fc__fit_line); when the points hold a
 * single size, or the fitted latency is negative (noise on a narrow size range), the line goes
 * through fixed_lat instead, with the mean slope above it: a flat line would make bytes free and
 * leave the contention models nothing to share. Returns 0, or -1 with no points. */
static int fit_line(const double *b, const double *t, size_t n, double fixed_lat, double *lat, double *pb)
{
    if (n == 0)
        return -1;
    if (fc__fit_line(b, t, NULL, n, lat, pb) == 0 && *lat >= 0 && *pb > 0)
        return 0;
    *lat = fixed_lat;
    double num = 0, d = 0;
    for (size_t i = 0; i < n; i++) {
        num += b[i] * (t[i] - fixed_lat);
        d += b[i] * b[i];
    }
    *pb = d > 0 ? num / d : 0;
    if (*pb <= 0)
        *pb = 1e-12;
    return 0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Fits up to two segments (below and above threshold) from flows of one side (intra or not)
 * whose ids pass keep[] (NULL: all), each flow's time divided by div[i] (NULL: by 1), into *seg /
 * *nseg. Returns the number of flows used. */
static size_t fit_side(const fc_match *m, size_t lo, size_t hi, const uint8_t *keep, const double *div,
                       uint64_t threshold, double *bb, double *tt, fc__segment *seg, size_t *nseg)
{
    size_t used = 0;
    double lat_small = 0;
    *nseg = 0;
    for (int big = 0; big < 2; big++) {
        size_t n = 0;
        for (size_t i = lo; i < hi; i++) {
            const fc_flow *f = &m->flows[i];
            if ((keep && !keep[i]) || !(f->observed > 0) || (f->bytes >= threshold) != big)
                continue;
            bb[n] = (double)f->bytes;
            tt[n++] = div ? f->observed / div[i] : f->observed;
        }
        double lat, pb;
        if (fit_line(bb, tt, n, lat_small, &lat, &pb) < 0)
            continue;
        if (!big)
            lat_small = lat;
        seg[(*nseg)++] = (fc__segment){big ? threshold : 0, big ? UINT64_MAX : threshold, lat, pb, 0};
        used += n;
    }
    /* The segments must cover every size: one side alone stretches over both. */
    if (*nseg == 1) {
        seg[0].lo = 0;
        seg[0].hi = UINT64_MAX;
    }
    return used;
}

static int add_cut(fc__profile *p, uint32_t kind, uint32_t k, double alpha)
{
    fc__cut *c = realloc(p->cuts, (p->ncuts + 1) * sizeof *c);
    if (c == NULL)
        return FC_ENOMEM;
    p->cuts = c;
    size_t na = (kind == FC_CONFLICT_MIXED_IN || kind == FC_CONFLICT_MIXED_OUT) ? 1 : k;
    double *al = malloc(na * sizeof *al);
    if (al == NULL)
        return FC_ENOMEM;
    for (size_t i = 0; i < na; i++)
        al[i] = alpha;
    c[p->ncuts++] = (fc__cut){kind, k, na, al, 0};
    return 0;
}

/* The flow cuts: fitted where enough flows lived under one label, assumed elsewhere. */
static int fit_cuts(const fc_match *m, const fc__intervals *iv, fc__profile *p, double *vals, size_t *fitted,
                    size_t *assumed)
{
    uint32_t maxk = fc__intervals_max_k(iv);
    *fitted = *assumed = 0;
    for (uint32_t kind = FC_CONFLICT_OUTGOING; kind <= FC_CONFLICT_MIXED_OUT; kind++)
        for (uint32_t k = 2; k <= (maxk > 2 ? maxk : 2); k++) {
            /* k = 2 of every kind always gets a cut, seen or not: a simulation under another
             * placement (flowcut remap) meets conflicts the trace never had, and the profile
             * extrapolates the other k from the nearest one. */
            if (k > 2 && fc__intervals_time(iv, kind, k) <= 0)
                continue;
            size_t n = 0;
            for (size_t i = 0; i < m->ninter; i++) {
                const fc_flow *f = &m->flows[i];
                const fc__label_run *runs;
                size_t nr;
                if (fc__intervals_history(iv, f->id, &runs, &nr) < 0 || nr != 1 || runs[0].label.kind != kind ||
                    runs[0].label.k != k || f->bytes == 0)
                    continue;
                const fc__segment *s = fc__profile_segment(p, 0, f->bytes);
                double data = s ? (double)f->bytes * s->per_byte : 0;
                if (data > 0)
                    vals[n++] = (f->observed - s->latency) / data - 1;
            }
            double alpha;
            if (n >= FC_SELFCAL_MIN_FLOWS) {
                qsort(vals, n, sizeof *vals, cmp_double);
                alpha = n % 2 ? vals[n / 2] : (vals[n / 2 - 1] + vals[n / 2]) / 2;
                if (alpha < 0)
                    alpha = 0;
                ++*fitted;
            } else {
                alpha = (kind == FC_CONFLICT_OUTGOING || kind == FC_CONFLICT_INCOMING) ? (double)(k - 1) : 0.0;
                ++*assumed;
            }
            if (add_cut(p, kind, k, alpha) < 0)
                return FC_ENOMEM;
        }
    return 0;
}

int fc__selfcal(const fc_match *m, const fc__intervals *iv, fc__profile **out, char *note, size_t nnote)
{
    int rc = FC_ENOMEM;
    size_t n1 = m->nflows ? m->nflows : 1;
    fc__profile *p = fc__profile_new();
    double *bb = malloc(n1 * sizeof *bb), *tt = malloc(n1 * sizeof *tt);
    uint8_t *alone = calloc(n1, 1);
    double *degree = malloc(n1 * sizeof *degree);
    size_t nalone = 0;
    *out = NULL;
    if (p == NULL || bb == NULL || tt == NULL || alone == NULL || degree == NULL)
        goto out;
    /* Uncontended: every label run of the flow is NONE. The degree is the time-weighted mean
     * number of flows the flow shared its NIC direction with (k in an outgoing or incoming
     * conflict, 1 otherwise): under a fair share, its time over the degree is its time alone. */
    for (size_t i = 0; i < m->ninter; i++) {
        const fc__label_run *runs;
        size_t nr;
        double w = 0, len = 0;
        alone[i] = fc__intervals_history(iv, m->flows[i].id, &runs, &nr) == 0 && nr > 0;
        for (size_t r = 0; r < nr; r++) {
            const fc_label *l = &runs[r].label;
            double d = runs[r].end - runs[r].start;
            int same = l->kind == FC_CONFLICT_OUTGOING || l->kind == FC_CONFLICT_INCOMING;
            w += d * (same ? l->k : 1);
            len += d;
            if (l->kind != FC_CONFLICT_NONE)
                alone[i] = 0;
        }
        degree[i] = len > 0 ? w / len : 1;
        nalone += alone[i];
    }
    snprintf(p->source, sizeof p->source, "trace");
    p->eager_threshold = m->eager_threshold;
    fc__segment seg[2];
    size_t nseg = 0, used = 0;
    const char *inter_from = "uncontended flows";
    if (nalone >= FC_SELFCAL_MIN_FLOWS)
        used = fit_side(m, 0, m->ninter, alone, NULL, m->eager_threshold, bb, tt, seg, &nseg);
    if (nseg == 0) {
        /* Too few flows ran alone to trust: every flow, its time divided by its degree, which
         * assumes the NICs are shared fairly (the assumed cuts below say the same). */
        used = fit_side(m, 0, m->ninter, NULL, degree, m->eager_threshold, bb, tt, seg, &nseg);
        inter_from = "flows, each time divided by the mean number of flows sharing its NIC (too few "
                     "ran alone)";
    }
    if (nseg == 0) {
        rc = fc__err(FC_EINVAL, "self-calibration: the trace has no inter-node flow to fit latency and "
                                "bandwidth to; give --platform");
        goto out;
    }
    if ((p->inter = malloc(nseg * sizeof *seg)) == NULL)
        goto out;
    memcpy(p->inter, seg, nseg * sizeof *seg);
    p->ninter = nseg;
    size_t nintra = fit_side(m, m->ninter, m->nflows, NULL, NULL, m->eager_threshold, bb, tt, seg, &nseg);
    if (nseg > 0) {
        if ((p->intra = malloc(nseg * sizeof *seg)) == NULL)
            goto out;
        memcpy(p->intra, seg, nseg * sizeof *seg);
        p->nintra = nseg;
    }
    size_t fitted, assumed;
    if ((rc = fit_cuts(m, iv, p, bb, &fitted, &assumed)) < 0)
        goto out;
    /* The max-rate model needs several ranks per node to fit its core terms, which a trace does
     * not isolate: it becomes a NIC shared at the link rate. */
    const fc__segment *big = &p->inter[p->ninter - 1];
    p->has_maxrate = 1;
    p->maxrate = (fc__maxrate){big->latency, 1 / big->per_byte, 1 / big->per_byte, 0, 0};
    snprintf(note, nnote,
             "self-calibrated: inter-node latency and bandwidth from %zu %s, intra-node from %zu messages; "
             "flow cuts fitted for %zu (kind, k), assumed for %zu",
             used, inter_from, nintra, fitted, assumed);
    *out = p;
    p = NULL;
    rc = 0;
out:
    if (rc == FC_ENOMEM)
        fc__err(rc, "self-calibration: out of memory");
    fc__profile_free(p);
    free(bb);
    free(tt);
    free(alone);
    free(degree);
    return rc;
}

void fc__prediction_free(fc__prediction *pr)
{
    if (pr == NULL)
        return;
    for (unsigned j = 0; j < FC_NMODELS; j++) {
        free(pr->pred[j]);
        free(pr->iv_err[j]);
    }
    fc__profile_free(pr->profile);
    free(pr);
}

/* The mean absolute error (%) of the flows active in each interval, for every model at once:
 * err[q][v] for model q's predictions pred[q] (indexed by flow id). The intervals are swept again
 * rather than read from iv, which may be lean (fc__intervals_build_lean) and keep no interval's
 * flows: a sweep holds only the flows in flight. Each interval's flows are summed in ascending id,
 * the order in which a full build lists them, so the figures do not depend on how iv was built. */
typedef struct iverr {
    double **err;
    unsigned nq;
    size_t niv;
    /* Each flow's error under each model, e[id * nq + q], worked out once per flow (NAN for a flow
     * left out: no observed time or no finite prediction) rather than once per interval it is
     * active in: a few dozen intervals each, with a division each time. */
    const double *e;
    uint64_t *ids; /* the active flows' ids, sorted */
    size_t cids;
} iverr;

static int iverr_interval(void *arg, const fc__sweep *s, size_t v, double start, double end)
{
    iverr *x = arg;
    size_t n = fc__sweep_nactive(s);
    (void)start, (void)end;
    /* The same flows swept the same way give the same intervals as the build. */
    if (v >= x->niv)
        return fc__err(FC_EINVAL, "prediction: interval %zu beyond the %zu of the flows", v, x->niv);
    if (fc__reserve(&x->ids, &x->cids, n ? n : 1, sizeof *x->ids))
        return fc__err(FC_ENOMEM, "prediction: out of memory");
    fc__sweep_active_ids(s, x->ids);
    fc__sort_ids(x->ids, n);
    /* All models in one pass over the flows, each summing its own in ascending id as before. */
    double sum[FC_NMODELS] = {0};
    size_t used[FC_NMODELS] = {0};
    for (size_t j = 0; j < n; j++) {
        const double *row = &x->e[x->ids[j] * x->nq];
        for (unsigned q = 0; q < x->nq; q++)
            if (!isnan(row[q])) {
                sum[q] += row[q];
                used[q]++;
            }
    }
    for (unsigned q = 0; q < x->nq; q++)
        x->err[q][v] = used[q] ? sum[q] / used[q] : NAN;
    return 0;
}

static int interval_errors(const fc_match *m, const fc__intervals *iv, double *const *pred, unsigned nq,
                           double **err)
{
    iverr x = {.err = err, .nq = nq, .niv = fc__intervals_count(iv)};
    for (unsigned q = 0; q < nq; q++) {
        if ((err[q] = malloc((x.niv ? x.niv : 1) * sizeof *err[q])) == NULL)
            return fc__err(FC_ENOMEM, "prediction: out of memory");
        for (size_t v = 0; v < x.niv; v++)
            err[q][v] = NAN;
    }
    if (nq == 0)
        return 0;
    /* A flow is left out (NAN) exactly when it was before; one kept never gives NAN (finite
     * numbers, and a positive observed time, give a finite or infinite error). */
    double *e = malloc((m->ninter ? m->ninter : 1) * nq * sizeof *e);
    if (e == NULL)
        return fc__err(FC_ENOMEM, "prediction: out of memory");
    for (size_t i = 0; i < m->ninter; i++) {
        const fc_flow *f = &m->flows[i];
        for (unsigned q = 0; q < nq; q++) {
            double p = pred[q][f->id];
            e[f->id * nq + q] = !f->coll && f->observed > 0 && isfinite(p) ? fabs(p - f->observed) / f->observed * 100 : NAN;
        }
    }
    x.e = e;
    fc__sweep_ops ops = {.arg = &x, .interval = iverr_interval};
    int rc = fc__sweep_flows(m->flows, m->ninter, &ops);
    free(x.ids);
    free(e);
    return rc;
}

int fc__prediction_run(const fc_match *m, const fc__intervals *iv, fc__profile *p, const unsigned *models,
                       unsigned n, int all, fc__prediction **out)
{
    int rc = FC_ENOMEM;
    double *obs = NULL;
    fc__prediction *pr = calloc(1, sizeof *pr);
    *out = NULL;
    if (pr == NULL) {
        fc__profile_free(p);
        return fc__err(rc, "prediction: out of memory");
    }
    pr->profile = p;
    size_t n1 = m->ninter ? m->ninter : 1;
    if ((obs = malloc(n1 * sizeof *obs)) == NULL)
        goto out;
    /* A collective's flows are predicted (they share the network) but their times are inferred,
     * not observed: the errors are over the point-to-point flows, and the collective calls have
     * theirs (remap/coll-predict.h). */
    for (size_t i = 0; i < m->ninter; i++)
        obs[i] = m->flows[i].coll ? NAN : m->flows[i].observed;
    for (unsigned j = 0; j < n; j++) {
        unsigned md = models[j];
        if (!fc__model_usable(p, md)) {
            /* fc_errmsg's buffer is the one fc__err writes: copy the reason out first. */
            char why[256];
            snprintf(why, sizeof why, "%s", fc_errmsg());
            if (!all) {
                rc = fc__err(FC_EINVAL, "model %s: %s", fc__model_name(md), why);
                goto out;
            }
            size_t len = strlen(pr->skipped);
            snprintf(pr->skipped + len, sizeof pr->skipped - len, "%s%s (%s)", len ? "; " : "", fc__model_name(md),
                     why);
            continue;
        }
        unsigned q = pr->nmodels;
        if ((pr->pred[q] = malloc(n1 * sizeof *pr->pred[q])) == NULL)
            goto out;
        if ((rc = fc__predict(m, p, md, pr->pred[q])) < 0)
            goto out;
        rc = FC_ENOMEM;
        fc__errors_compute(obs, pr->pred[q], NULL, m->ninter, &pr->err[q]);
        pr->model[q] = md;
        pr->nmodels++;
    }
    if ((rc = interval_errors(m, iv, pr->pred, pr->nmodels, pr->iv_err)) < 0)
        goto out;
    *out = pr;
    pr = NULL;
    rc = 0;
out:
    if (rc == FC_ENOMEM)
        fc__err(rc, "prediction: out of memory");
    free(obs);
    fc__prediction_free(pr);
    return rc;
}
