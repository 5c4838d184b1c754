/* analyzer/model/predict.c: the asynchronous, heterogeneous prediction of a trace's inter-node flows
 * (Martinasso & Mehaut, section 5.3) under any model, and the statistics of its errors against
 * the observed times (the report's Table 3). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "model/model.h"

/* Sort context: qsort has none, and the order needs the flows. */
typedef struct by_start {
    double start;
    size_t i;
} by_start;

static int cmp_start(const void *x, const void *y)
{
    const by_start *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* Pops every message the simulation completes no later than `until` and stores its predicted
 * duration. Completions at the very time a flow starts are taken first, so that a flow ending
 * as another begins is not counted in conflict with it for a zero-length interval. */
static int drain(fc__net *net, const fc__flow *f, double t0, double until, double *pred)
{
    double t;
    uint64_t key;
    int rc;
    while ((rc = fc__net_advance(net, until, &t, &key)) > 0)
        pred[key] = t - (f[key].start - t0);
    return rc;
}

/* A collective step's flow leaves the simulation at its end (f->end), finished or not: the trace
 * shows its bytes crossing inside the collective call's window (the step's end is the receiving
 * rank's exit for its last step, and no later for the others), and how long a model takes to move a
 * collective's bytes is judged per call (remap/coll-predict.h), from the replay of the call. Left
 * to run on past it, a step the model cannot finish in its window (the expansion places the steps
 * evenly inside a rank's time in the call, so some get less time than they need, even when the
 * call as a whole moved its bytes at the link's rate) would load the NICs after the call has
 * returned, and every point-to-point flow there would be judged against traffic the trace shows
 * over. Such a step's prediction is its window, where the trace places its end (its error is
 * never counted: a step's time is inferred). */
static int cut_collectives(fc__net *net, const fc__flow *f, double t0, const by_start *cut, size_t ncut,
                           size_t *next, double before, double *pred)
{
    int rc = 0;
    for (; *next < ncut && cut[*next].start < before; ++*next) {
        size_t i = cut[*next].i;
        if ((rc = drain(net, f, t0, cut[*next].start, pred)) != 0)
            return rc;
        if (isnan(pred[i])) {
            if ((rc = fc__net_cancel(net, i)) < 0)
                return rc;
            pred[i] = cut[*next].start - (f[i].start - t0);
        }
    }
    return 0;
}

int fc__predict(const fc__match *m, const fc__profile *p, unsigned model, double *pred)
{
    if (m == NULL || p == NULL || (pred == NULL && m->ninter > 0))
        return fc__err(FC_EINVAL, "predict: NULL argument");
    size_t n = m->ninter, ncut = 0, next_cut = 0;
    fc__net *net = NULL;
    by_start *order = NULL, *cut = NULL;
    int rc = fc__net_create(p, model, &net);
    if (rc)
        goto out;
    if (n == 0)
        goto out;
    order = malloc(n * sizeof *order);
    if (order == NULL) {
        rc = fc__err(FC_ENOMEM, "predict: out of memory for %zu flows", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        pred[i] = NAN; /* a message the simulation never completes has no prediction */
        if (!isfinite(m->flows[i].start)) {
            rc = fc__err(FC_EINVAL, "predict: flow %" PRIu64 " has no finite start",
                         m->flows[i].id);
            goto out;
        }
        order[i] = (by_start){m->flows[i].start, i};
        ncut += m->flows[i].coll != 0;
    }
    /* Matching numbers flows in order of start already, which is checked in one pass: the sort,
     * for any other fc__match, would cost more than the linear model's whole prediction. */
    size_t in_order = 1;
    while (in_order < n && cmp_start(&order[in_order - 1], &order[in_order]) < 0)
        in_order++;
    if (in_order < n)
        fc__sort(order, n, sizeof *order, cmp_start);
    /* The simulation starts at 0: a trace whose first flow starts before its origin is shifted,
     * and durations, differences of times, do not move. */
    double t0 = order[0].start < 0 ? order[0].start : 0;
    /* The collective steps' ends, in time order (cut_collectives). */
    if (ncut > 0) {
        if ((cut = malloc(ncut * sizeof *cut)) == NULL) {
            rc = fc__err(FC_ENOMEM, "predict: out of memory for %zu flows", n);
            goto out;
        }
        ncut = 0;
        for (size_t i = 0; i < n; i++)
            if (m->flows[i].coll != 0)
                cut[ncut++] = (by_start){fmax(m->flows[i].end, m->flows[i].start) - t0, i};
        fc__sort(cut, ncut, sizeof *cut, cmp_start);
    }
    for (size_t j = 0; j < n; j++) {
        const fc__flow *f = &m->flows[order[j].i];
        double t = f->start - t0;
        /* A step ending when a flow starts is cut after that flow starts: it started no later. */
        if ((rc = cut_collectives(net, m->flows, t0, cut, ncut, &next_cut, t, pred)) != 0)
            goto out;
        rc = drain(net, m->flows, t0, t, pred);
        if (rc)
            goto out;
        /* One connection per ordered pair of ranks, numbered from 1 (none for a flow whose ends
         * name one rank: not a message between two processes). */
        uint64_t conn = f->src_rank == f->dst_rank ? 0 : ((uint64_t)f->src_rank << 32 | f->dst_rank) + 1;
        rc = fc__net_start_conn(net, t, f->src_node, f->dst_node, conn, f->bytes, order[j].i);
        if (rc)
            goto out;
    }
    if ((rc = cut_collectives(net, m->flows, t0, cut, ncut, &next_cut, INFINITY, pred)) != 0)
        goto out;
    rc = drain(net, m->flows, t0, INFINITY, pred);
out:
    free(order);
    free(cut);
    fc__net_free(net);
    return rc;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The k-th smallest of v[0..n) (k < n; no NAN), v reordered: Hoare's selection with a median of
 * three, in O(n) on average where a sort takes O(n log n). Past 64 rounds (an unlucky input) the
 * part left is sorted instead, so the worst case stays O(n log n). The value is that of v sorted,
 * v[k], whatever the method. */
static double select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    for (int round = 0; lo < hi; round++) {
        if (round == 64) {
            fc__sort(v + lo, hi - lo + 1, sizeof *v, cmp_double);
            break;
        }
        size_t mid = lo + (hi - lo) / 2;
        double a = v[lo], b = v[mid], c = v[hi];
        double pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        /* v[lo..j] <= pivot <= v[i..hi], and anything between equals the pivot. */
        if (k <= j) /* j did not wrap: the swap at j = 0 stops the loop first */
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

void fc__errors_compute(const double *obs, const double *pred, const uint64_t *ids, size_t n,
                        fc__errors *out)
{
    memset(out, 0, sizeof *out);
    double *err = n ? malloc(n * sizeof *err) : NULL;
    double sum_err = 0, sum_obs = 0, sum_pred = 0;
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(obs[i] > 0) || !isfinite(obs[i]) || !isfinite(pred[i]))
            continue;
        double e = fabs(pred[i] - obs[i]) / obs[i] * 100.0;
        uint64_t id = ids ? ids[i] : i;
        /* Ties keep the first flow met, so best and worst do not depend on the sort. */
        if (c == 0 || e < out->best_abs_pct) {
            out->best_abs_pct = e;
            out->best = id;
        }
        if (c == 0 || e > out->max_abs_pct) {
            out->max_abs_pct = e;
            out->worst = id;
        }
        if (err)
            err[c] = e;
        c++;
        sum_err += e;
        sum_obs += obs[i];
        sum_pred += pred[i];
    }
    out->n = c;
    if (c > 0) {
        out->mean_abs_pct = sum_err / (double)c;
        out->global_pct = fabs(sum_pred - sum_obs) / sum_obs * 100.0;
        if (err) {
            /* Nearest rank: the smallest error with at least 95 % of the flows at or below it. */
            size_t rank = (95 * c + 99) / 100;
            out->p95_abs_pct = select_kth(err, c, rank - 1);
        } else {
            out->p95_abs_pct = NAN;
        }
    }
    free(err);
}
