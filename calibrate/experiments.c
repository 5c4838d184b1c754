/* calibrate/experiments.c: what flowcut-calibrate measures and how it turns the times into a profile:
 * adaptive ping-pong sweeps, the elementary conflicts, the max-rate series, and the summary. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include <flowcut/reader.h>
#include "calibrate.h"
#include "model/fit.h"
#include "match/flow.h"
#include "util/internal.h"

/* Appends a line to the notes. */
/* The name of a conflict kind, as the profile and the reports spell it. */
static const char *kind_name(uint32_t kind)
{
    static const char *const names[] = {
#define FC__X(name, num, text) [num] = text,
        FC_CONFLICT_KINDS(FC__X)
#undef FC__X
    };
    return kind < sizeof names / sizeof names[0] && names[kind] ? names[kind] : "unknown";
}

static void note(char *notes, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(char *notes, size_t n, const char *fmt, ...)
{
    size_t used = strlen(notes);
    if (used + 2 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes + used, n - used - 1, fmt, ap);
    va_end(ap);
    used = strlen(notes);
    notes[used] = '\n';
    notes[used + 1] = '\0';
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, dbl_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- ping-pong sweeps --------------------------------------------------------------------------- */

typedef struct point {
    double x, t, e;
} point;

/* One size, measured o->runs times; the median of the runs' means and of their errors. */
static point measure_point(const cal_opts *o, int peer, double x)
{
    double t[99], e[99];
    for (int r = 0; r < o->runs; r++) {
        cal_stat s = cal_pingpong(o, peer, (uint64_t)x);
        t[r] = s.mean;
        e[r] = s.rel_se;
    }
    point pt = {x, median(t, o->runs), median(e, o->runs)};
    if (o->verbose)
        fprintf(stderr, "ping-pong peer %d size %.0f: %.9g s (eps %.3f)\n", peer, x, pt.t, pt.e);
    return pt;
}

/* An interval between two measured sizes, and how badly linear interpolation did around it. */
typedef struct interval {
    double lo, hi, prio;
} interval;

/* A binary max-heap of intervals by prio. */
static void heap_push(interval *h, size_t *n, interval v)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].prio < v.prio) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static interval heap_pop(interval *h, size_t *n)
{
    interval top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].prio > h[c].prio)
            c++;
        if (h[c].prio <= last.prio)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = last;
    return top;
}

static int point_cmp(const void *a, const void *b)
{
    return dbl_cmp(&((const point *)a)->x, &((const point *)b)->x);
}

static const point *find_point(const point *v, size_t n, double x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].x == x)
            return &v[i];
    return NULL;
}

/* SKaMPI's adaptive sizes: 0, 1 and the powers of 16 up to the largest size first; then the
 * interval where interpolation erred most is split at its geometric mean, until every interval
 * interpolates within eps or the point budget is spent. Returns the points sorted by size. */
static point *sweep(const cal_opts *o, int peer, size_t *np)
{
    size_t cap = o->max_points + 16, n = 0, nh = 0;
    point *v = malloc(cap * sizeof *v);
    interval *h = malloc(2 * cap * sizeof *h);
    if (v == NULL || h == NULL) {
        free(v);
        free(h);
        return NULL;
    }
    v[n++] = measure_point(o, peer, 0);
    for (double x = 1; x < (double)o->max_size; x *= 16)
        v[n++] = measure_point(o, peer, x);
    v[n++] = measure_point(o, peer, (double)o->max_size);
    for (size_t i = 0; i + 1 < n; i++)
        heap_push(h, &nh, (interval){v[i].x, v[i + 1].x, INFINITY});
    while (nh > 0 && n < o->max_points && n < cap) {
        interval iv = heap_pop(h, &nh);
        if (iv.prio < o->eps)
            break;
        double m = round(sqrt(fmax(iv.lo, 1) * iv.hi));
        /* Neighbours closer than 1.25 apart tell nothing new at the scale of a protocol switch. */
        if (m <= iv.lo || m >= iv.hi || iv.hi < 1.25 * fmax(iv.lo, 1))
            continue;
        const point *a = find_point(v, n, iv.lo), *b = find_point(v, n, iv.hi);
        point pm = measure_point(o, peer, m);
        double interp = a->t + (b->t - a->t) * (m - a->x) / (b->x - a->x);
        double err = fabs(pm.t - interp) / pm.t;
        v[n++] = pm;
        heap_push(h, &nh, (interval){iv.lo, m, err});
        heap_push(h, &nh, (interval){m, iv.hi, err});
    }
    free(h);
    qsort(v, n, sizeof *v, point_cmp);
    *np = n;
    return v;
}

/* Measures one path's sweep and stores its segments. Returns 0 or an FC_E* code. */
static int path_segments(const cal_opts *o, int peer, int intra, fc__profile *p, uint64_t *thr, size_t *npts)
{
    size_t n = 0;
    point *v = sweep(o, peer, &n);
    if (v == NULL)
        return FC_ENOMEM;
    double x[n], t[n], e[n];
    for (size_t i = 0; i < n; i++) {
        x[i] = v[i].x;
        t[i] = v[i].t;
        e[i] = v[i].e;
    }
    free(v);
    fc__segment seg[FC_FIT_MAXSEG];
    size_t ns = 0;
    /* A segment is about the curve's shape, not the noise: at most 5 % of unexplained error even
     * when the means are only asked for to 10 %. */
    int rc = fc__fit_segments(x, t, e, n, fmin(o->eps, 0.05), seg, &ns, thr);
    for (size_t i = 0; rc == 0 && i < ns; i++)
        rc = fc__profile_add_segment(p, intra, seg[i].lo, seg[i].hi, seg[i].latency, seg[i].per_byte, seg[i].eps);
    *npts = n;
    if (rc != 0 && rc != FC_ENOMEM)
        rc = fc__err(rc, "the %s ping-pong times could not be fitted", intra ? "intra-node" : "inter-node");
    return rc;
}

/* ---- flow sets ---------------------------------------------------------------------------------- */

/* The highest rank of node d not yet in f (ranks other than 0 first: rank 0 also drives). */
static int pick(const cal_layout *L, int d, const cal_flows *f)
{
    for (int i = L->first[d + 1] - 1; i >= L->first[d]; i--) {
        int r = L->members[i], used = 0;
        for (int j = 0; j < f->n; j++)
            used |= f->src[j] == r || f->dst[j] == r;
        if (!used)
            return r;
    }
    return -1;
}

static void add_flow(cal_flows *f, int src, int dst)
{
    f->src[f->n] = src;
    f->dst[f->n] = dst;
    f->n++;
}

/* Flows listed by ascending source rank, the order the profile's alphas follow. */
static void sort_flows(cal_flows *f)
{
    for (int i = 1; i < f->n; i++)
        for (int j = i; j > 0 && f->src[j] < f->src[j - 1]; j--) {
            int s = f->src[j], d = f->dst[j];
            f->src[j] = f->src[j - 1];
            f->dst[j] = f->dst[j - 1];
            f->src[j - 1] = s;
            f->dst[j - 1] = d;
        }
}

/* Runs f o->runs times; per-flow medians of the means, and the largest error, into t and *eps;
 * the median time until the last flow ended into *last (may be NULL). */
static void run_flows(const cal_opts *o, const cal_flows *f, uint64_t bytes, double *t, double *eps, double *last)
{
    double v[99][CAL_MAXFLOWS + 1], col[99];
    *eps = 0;
    for (int r = 0; r < o->runs; r++) {
        cal_stat per[CAL_MAXFLOWS], all;
        cal_run_flows(o, f, bytes, per, &all);
        for (int i = 0; i < f->n; i++) {
            v[r][i] = per[i].mean;
            *eps = fmax(*eps, per[i].rel_se);
        }
        v[r][f->n] = all.mean;
        if (o->verbose) {
            fprintf(stderr, "flows of %" PRIu64 " bytes:", bytes);
            for (int i = 0; i < f->n; i++)
                fprintf(stderr, " %d->%d %.6g s (eps %.3f, %zu reps)", f->src[i], f->dst[i], per[i].mean,
                        per[i].rel_se, per[i].n);
            fprintf(stderr, "; last ends %.6g s\n", all.mean);
        }
    }
    for (int i = 0; i <= f->n; i++) {
        for (int r = 0; r < o->runs; r++)
            col[r] = v[r][i];
        double m = median(col, o->runs);
        if (i < f->n)
            t[i] = m;
        else if (last != NULL)
            *last = m;
    }
}

/* Measures a conflict and stores its cuts. ref[i] is flow i's time alone, lat the latency. */
static int conflict(const cal_opts *o, fc__profile *p, const cal_flows *f, const double *ref, double ref_eps,
                    double lat, uint32_t kind, double after)
{
    double t[CAL_MAXFLOWS], norm[CAL_MAXFLOWS], a[CAL_MAXFLOWS], eps;
    run_flows(o, f, o->cut_size, t, &eps, NULL);
    /* Each flow against its own lone time: the stretch of its data-moving part. */
    for (int i = 0; i < f->n; i++) {
        double l = fmin(lat, 0.5 * ref[i]);
        norm[i] = fmax(t[i] - l, 1e-9) / (ref[i] - l);
    }
    int rc = fc__fit_cut(norm, (size_t)f->n, 1.0, 0, fmax(2 * o->eps, 0.05), after, a);
    if (rc != 0)
        return fc__err(rc, "a conflict's times could not be turned into flow cuts");
    eps = fmax(eps, ref_eps);
    if (kind == FC_CONFLICT_MIXED_IN) {
        /* Flow 0 enters node X, flow 1 leaves it. */
        if ((rc = fc__profile_add_cut(p, FC_CONFLICT_MIXED_IN, 2, &a[0], 1, eps)) == 0)
            rc = fc__profile_add_cut(p, FC_CONFLICT_MIXED_OUT, 2, &a[1], 1, eps);
        return rc;
    }
    return fc__profile_add_cut(p, kind, (uint32_t)f->n, a, (size_t)f->n, eps);
}

static double mean_alpha(const fc__profile *p, uint32_t kind, uint32_t k)
{
    for (size_t i = 0; i < p->ncuts; i++)
        if (p->cuts[i].kind == kind && p->cuts[i].k == k) {
            double s = 0;
            for (size_t j = 0; j < p->cuts[i].nalpha; j++)
                s += p->cuts[i].alpha[j];
            return s / (double)p->cuts[i].nalpha;
        }
    return 0;
}

/* The cut of the conflict of k - 1 flows a flow of a k-flow conflict is left in when the first
 * flow ends: the mean alpha of k - 1 when it was measured, else of the largest k' < k measured,
 * scaled by (k - 2) / (k' - 1) as the models extrapolate it (k is measured after 2, 4, 8...). */
static double after_alpha(const fc__profile *p, uint32_t kind, uint32_t k)
{
    for (uint32_t q = k - 1; q >= 2; q--)
        for (size_t i = 0; i < p->ncuts; i++)
            if (p->cuts[i].kind == kind && p->cuts[i].k == q)
                return mean_alpha(p, kind, q) * (double)(k - 2) / (double)(q - 1);
    return 0;
}

/* The k measured after k: every k up to the ranks per node, then doubling (4 and 8 on nodes of 2
 * ranks): each conflict of 8 flows of 4 MiB takes seconds a repetition, and the models take an
 * unmeasured k from the nearest measured one. */
static int next_k(const cal_layout *L, int k)
{
    return k < L->rpn ? k + 1 : 2 * k;
}

/* Pairs k ranks of node X, in turn, with the ranks of order[0..no) (flows out of X when out,
 * into it otherwise), starting each at its own place in order and skipping a pair already used.
 * Returns 0 when there are not k distinct pairs. */
static int pair_with(const cal_layout *L, int X, int k, int out, const int *order, int no, cal_flows *f)
{
    int nx = L->first[X + 1] - L->first[X];
    *f = (cal_flows){0};
    for (int j = 0; j < k; j++) {
        int x = L->members[L->first[X] + j % nx], y = -1;
        for (int c = 0; c < no && y < 0; c++) {
            int cand = order[(j + c) % no], used = 0;
            for (int q = 0; q < f->n; q++)
                used |= out ? f->src[q] == x && f->dst[q] == cand : f->src[q] == cand && f->dst[q] == x;
            if (!used)
                y = cand;
        }
        if (y < 0)
            return 0;
        if (out)
            add_flow(f, x, y);
        else
            add_flow(f, y, x);
    }
    return 1;
}

/* k flows out of (into) node X between k distinct pairs of ranks: X's ranks in turn at X's end,
 * and at the other end the ranks of the other nodes, a node after the other (ranks of a node from
 * the highest, as pick takes them), skipping a pair already used. A rank then plays several flows
 * when the nodes have fewer ranks than k. Returns 0 when there are not k distinct pairs. */
static int same_direction(const cal_layout *L, int X, int k, int out, cal_flows *f)
{
    int others = L->nnodes - 1, nx = L->first[X + 1] - L->first[X], ny = L->nranks - nx;
    int order[CAL_MAXFLOWS * 4], no = 0;
    /* The other ranks, a node after the other: node 0's highest, node 1's highest, ... */
    for (int depth = 0; no < ny && no < (int)(sizeof order / sizeof *order); depth++)
        for (int d = 0; d < others; d++) {
            int cnt = L->first[d + 1] - L->first[d];
            if (depth < cnt && no < (int)(sizeof order / sizeof *order))
                order[no++] = L->members[L->first[d + 1] - 1 - depth];
        }
    if (!pair_with(L, X, k, out, order, no, f))
        return 0;
    sort_flows(f);
    return 1;
}

/* The late joiner's share at node X, for k = 2 .. o->max_k flows out of X: k - 1 flows of
 * cut_size bytes start together, and the k-th, of o->newcomer bytes (--newcomer; a quarter of
 * cut_size by default), starts when they have run for an eighth of a lone flow's time t_out, long
 * before they end. While all are in flight the newcomer
 * gets the fraction r of the NIC its lone time over its time gives (latency set apart); in a
 * weighted fair share where the old flows weigh 1 and the newcomer w, r = w / (k - 1 + w), so
 * w = (k - 1) r / (1 - r), and the profile's g, a newcomer joining n older flows weighing
 * 1 / (1 + g n), is the least-squares fit of 1 / w - 1 = g (k - 1) over the k measured. */
static int latejoin(const cal_opts *o, const cal_layout *L, fc__profile *p, double t_out, double lat, char *notes,
                    size_t nn)
{
    int X = L->nnodes - 1;
    uint64_t small = o->newcomer;
    cal_flows f1;
    if (!same_direction(L, X, 1, 1, &f1))
        return 0;
    f1.size[0] = small;
    double t1, e1, sxy = 0, sxx = 0, eps = 0;
    int kmax = 0;
    run_flows(o, &f1, o->cut_size, &t1, &e1, NULL);
    char line[512];
    int len = snprintf(line, sizeof line, "late joiner: %" PRIu64 " bytes out of node %d alone %.6g s, after k-1 flows "
                       "of %" PRIu64 " bytes started %.6g s earlier:", small, X, t1, o->cut_size, t_out / 8);
    for (int k = 2; k <= o->max_k && k <= CAL_MAXFLOWS; k = next_k(L, k)) {
        cal_flows f;
        if (!same_direction(L, X, k, 1, &f))
            break;
        /* The newcomer: the last flow listed (same_direction gave it the last pair). */
        f.size[k - 1] = small;
        f.delay[k - 1] = t_out / 8;
        double t[CAL_MAXFLOWS], e;
        run_flows(o, &f, o->cut_size, t, &e, NULL);
        double old_end = INFINITY;
        for (int i = 0; i < k - 1; i++)
            old_end = fmin(old_end, t[i]);
        double l = fmin(lat, 0.5 * t1), r = (t1 - l) / fmax(t[k - 1] - l, 1e-9);
        if (t_out / 8 + t[k - 1] > old_end || !(r > 0) || r >= 1) {
            if ((size_t)len < sizeof line)
                len += snprintf(line + len, sizeof line - (size_t)len, " k=%d %.6g s (not used: %s)", k, t[k - 1],
                                r >= 1 ? "no slower than alone" : "the old flows ended first");
            continue;
        }
        double w = (double)(k - 1) * r / (1 - r), y = 1 / w - 1;
        sxy += (double)(k - 1) * y;
        sxx += (double)(k - 1) * (k - 1);
        eps = fmax(eps, e);
        kmax = k;
        if ((size_t)len < sizeof line)
            len += snprintf(line + len, sizeof line - (size_t)len, " k=%d %.6g s (share %.3f, weight %.3f)", k,
                            t[k - 1], r, w);
    }
    note(notes, nn, "%s", line);
    if (kmax == 0) {
        note(notes, nn, "no late-joiner share: no measurement had the newcomer end among the old flows");
        return 0;
    }
    p->has_latejoin = 1;
    p->latejoin_g = sxx > 0 && sxy > 0 ? sxy / sxx : 0;
    p->latejoin_kmax = (uint32_t)kmax;
    p->latejoin_eps = fmax(eps, e1);
    return 0;
}

/* The order of the messages of one connection: one rank of node X sends cut_size bytes and at once
 * cut_size / 4 to one rank of node 0, both received and timed from the start. Side by side (each
 * message a flow of its own, sharing the path fairly), the small one moves at half its rate while
 * the large one moves, and ends at lat + 2 d (d its lone data time); one after the other, it ends
 * a lone data time after the large one, t_large + d. The share of the way from the first to the
 * second where it ended is the profile's WAIT; serial when it is 1/2 or more.
 *
 * The large one's end tells the two ways a small message can end after it apart: alone it takes
 * T_L; if the small one waited behind it, it still ends at T_L, and if the small one moved beside
 * it, taking its share of the path, at T_L + d. The share of d by which it ended later than alone
 * is the profile's connection-ends SHARE: at 1/2 or more the messages move side by side and end
 * in the order they started. */
static int connection(const cal_opts *o, const cal_layout *L, fc__profile *p, double lat, char *notes, size_t nn)
{
    int X = L->nnodes - 1;
    uint64_t small = o->cut_size / 4;
    cal_flows f1 = {0}, fl = {0}, f = {0};
    add_flow(&f1, L->members[L->first[X]], pick(L, 0, &f1));
    if (f1.dst[0] < 0)
        return 0;
    f1.size[0] = small;
    double t1, e1, tl, el, t[2], e;
    run_flows(o, &f1, o->cut_size, &t1, &e1, NULL);
    add_flow(&fl, f1.src[0], f1.dst[0]);
    run_flows(o, &fl, o->cut_size, &tl, &el, NULL);
    add_flow(&f, f1.src[0], f1.dst[0]);
    add_flow(&f, f1.src[0], f1.dst[0]);
    f.size[1] = small;
    run_flows(o, &f, o->cut_size, t, &e, NULL);
    double l = fmin(lat, 0.5 * t1), d = t1 - l, side = l + 2 * d, serial = t[0] + d;
    if (!(serial > side)) {
        note(notes, nn, "no connection order: the large message of %" PRIu64 " bytes (%.6g s) was not longer than "
             "two small ones", o->cut_size, t[0]);
        return 0;
    }
    double wait = (t[1] - side) / (serial - side);
    wait = wait < 0 ? 0 : wait > 1 ? 1 : wait;
    p->has_conn = 1;
    p->conn_wait = wait;
    p->conn_serial = wait >= 0.5;
    p->conn_eps = fmax(e, e1);
    double ends = (t[0] - tl) / d;
    ends = ends < 0 ? 0 : ends > 1 ? 1 : ends;
    p->has_conn_ends = 1;
    p->conn_ends = ends;
    p->conn_ends_eps = fmax(p->conn_eps, el);
    note(notes, nn, "connection: rank %d sent %" PRIu64 " and then %" PRIu64 " bytes to rank %d: they ended at %.6g "
         "and %.6g s, the small one alone %.6g s (side by side it would end at %.6g s, after the large one at "
         "%.6g s): %s; the large one alone %.6g s, later by %.2f of the small one's data time beside it: %s",
         f.src[0], o->cut_size, small, f.dst[0], t[0], t[1], t1, side, serial,
         p->conn_serial ? "serial" : "parallel", tl, ends,
         ends >= 0.5 ? "side by side, ending in order" : "one after the other");
    return 0;
}

/* k flows between node X and the ranks of nodes 1 .. X - 1 (out: from X), X's ranks in turn at
 * X's end, at the other end those ranks a node after the other (highest first), each pair used
 * once. Node 0 is left out: it carries the probe of opposite(). Returns 0 when there are not k
 * distinct pairs. */
static int around(const cal_layout *L, int X, int k, int out, cal_flows *f)
{
    int order[CAL_MAXFLOWS * 4], no = 0;
    const int cap = (int)(sizeof order / sizeof *order);
    for (int depth = 0, any = 1; any && no < cap; depth++) {
        any = 0;
        for (int d = 1; d < X && no < cap; d++)
            if (depth < L->first[d + 1] - L->first[d]) {
                order[no++] = L->members[L->first[d + 1] - 1 - depth];
                any = 1;
            }
    }
    return pair_with(L, X, k, out, order, no, f);
}

/* The opposite direction's load at node X (the last), for k = 1 .. o->max_k: k flows of cut_size
 * bytes out of X to the ranks of nodes 1 .. X - 1, and a probe of cut_size / 4 from node 0 into
 * X started when they have run for an eighth of a lone flow's time t_out; then the other way, k
 * flows into X and the probe from X to node 0. Node 0 carries the probe alone and the probe's
 * direction at X carries nothing else, so every NIC direction on the probe's path is free: what
 * slows it is X's other direction, full with the k flows (over TCP its acknowledgements queue
 * behind their data there). Its delay is its time less its time alone, kept at 0 or more. A
 * measurement whose k flows ended before the probe is left out (the notes say so): the probe then
 * ran part of its way beside an empty direction. */
static int opposite(const cal_opts *o, const cal_layout *L, fc__profile *p, double t_out, char *notes, size_t nn)
{
    int X = L->nnodes - 1;
    if (L->nnodes < 3) {
        note(notes, nn, "no opposite-direction delay: it needs three nodes (the probe's own and two more)");
        return 0;
    }
    uint64_t small = o->cut_size / 4;
    int zero = L->members[L->first[1] - 1], x0 = L->members[L->first[X]];
    double alone[2], ealone[2], eps = 0;
    for (int out = 0; out < 2; out++) {
        cal_flows f1 = {0};
        if (out)
            add_flow(&f1, x0, zero);
        else
            add_flow(&f1, zero, x0);
        f1.size[0] = small;
        run_flows(o, &f1, o->cut_size, &alone[out], &ealone[out], NULL);
        eps = fmax(eps, ealone[out]);
    }
    char line[768];
    int len = snprintf(line, sizeof line, "opposite direction: %" PRIu64 " bytes between node 0 and node %d alone "
                       "%.6g s in, %.6g s out; beside k flows of %" PRIu64 " bytes the other way at node %d, "
                       "started %.6g s earlier:", small, X, alone[0], alone[1], o->cut_size, X, t_out / 8);
    for (int k = 1; k <= o->max_k && k < CAL_MAXFLOWS; k = next_k(L, k)) {
        double pen[2];
        int ok = 1;
        for (int out = 0; out < 2 && ok; out++) {
            cal_flows f;
            /* The probe enters X (out = 0) while the k flows leave it, or the other way. */
            if (!around(L, X, k, !out, &f)) {
                ok = 0;
                break;
            }
            if (out)
                add_flow(&f, x0, zero);
            else
                add_flow(&f, zero, x0);
            f.size[k] = small;
            f.delay[k] = t_out / 8;
            double t[CAL_MAXFLOWS], e, last_bulk = 0;
            run_flows(o, &f, o->cut_size, t, &e, NULL);
            for (int i = 0; i < k; i++)
                last_bulk = fmax(last_bulk, t[i]);
            pen[out] = fmax(0, t[k] - alone[out]);
            if ((size_t)len < sizeof line)
                len += snprintf(line + len, sizeof line - (size_t)len, " k=%d %s %.6g s", k, out ? "out" : "in",
                                t[k]);
            if (t_out / 8 + t[k] > last_bulk) {
                if ((size_t)len < sizeof line)
                    len += snprintf(line + len, sizeof line - (size_t)len, " (not used: the k flows ended first)");
                ok = 0;
            }
            eps = fmax(eps, e);
        }
        if (ok && fc__profile_add_opposite(p, (uint32_t)k, pen[0], pen[1], eps) != 0)
            return FC_ENOMEM;
    }
    note(notes, nn, "%s", line);
    if (p->nopp == 0)
        note(notes, nn, "no opposite-direction delay: no measurement had the probe end among the k flows");
    return 0;
}

/* The report's chain 0>1>2>3 (on the first four nodes): a flow into node 1 while another leaves
 * it for node 2, whose other rank sends to node 3, every rank napping while it waits. No NIC
 * direction carries two flows, so a full-duplex network should move each at its lone rate; the
 * middle flow is in a mixed conflict at both its ends. Written to the notes only: the profile's
 * mixed cuts are the model's figure, and this says what a longer chain costs on the network alone,
 * apart from the CPUs that busy-polling programs share. */
static void chain(const cal_opts *o, const cal_layout *L, double t_out, double t_in, char *notes, size_t nn)
{
    if (L->nnodes < 4)
        return;
    cal_flows f = {0};
    for (int d = 0; d < 3; d++)
        add_flow(&f, L->members[L->first[d] + (d > 0)], L->members[L->first[d + 1]]);
    double t[CAL_MAXFLOWS], eps;
    run_flows(o, &f, o->cut_size, t, &eps, NULL);
    double lone = 0.5 * (t_out + t_in), worst = fmax(t[0], fmax(t[1], t[2]));
    note(notes, nn, "chain 0>1>2>3: messages of %" PRIu64 " bytes started together, ranks napping: %.6g, %.6g, "
         "%.6g s against %.6g-%.6g s alone (the longest %+.1f %% over their mean)", o->cut_size, t[0], t[1], t[2],
         fmin(t_out, t_in), fmax(t_out, t_in), 100 * (worst / lone - 1));
}

/* Every elementary conflict at node X (the last node), for k = 2 .. o->max_k. */
static int cuts(const cal_opts *o, const cal_layout *L, fc__profile *p, char *notes, size_t nn)
{
    int X = L->nnodes - 1, others = L->nnodes - 1, rc = 0;
    if (L->rpn < 2) {
        note(notes, nn, "no flow cuts: they need 2 ranks on every node, found %d", L->rpn);
        return 0;
    }
    double lat = 0;
    const fc__segment *s = fc__profile_segment(p, 0, o->cut_size);
    if (s != NULL)
        lat = s->latency;
    /* The lone flows, out of X and into X. */
    cal_flows fo = {0}, fi = {0};
    add_flow(&fo, L->members[L->first[X]], pick(L, 0, &fo));
    add_flow(&fi, pick(L, 0, &fi), L->members[L->first[X]]);
    double t_out, t_in, e_out, e_in;
    run_flows(o, &fo, o->cut_size, &t_out, &e_out, NULL);
    run_flows(o, &fi, o->cut_size, &t_in, &e_in, NULL);
    double ref_eps = fmax(e_out, e_in), ref[CAL_MAXFLOWS];
    note(notes, nn, "flow cuts: messages of %" PRIu64 " bytes started together on a signal from rank 0 and "
         "timed by their receivers; alone %.6g s out of node %d, %.6g s into it", o->cut_size, t_out, X, t_in);
    /* k flows on a node with fewer ranks: its ranks play several flows each, napping while they
     * wait, so that the CPUs (8 ranks on 2 on the emulated cluster) do not set the times. */
    for (int k = 2; k <= o->max_k && k <= CAL_MAXFLOWS && rc == 0; k = next_k(L, k)) {
        cal_flows f;
        if (!same_direction(L, X, k, 1, &f)) {
            note(notes, nn, "no outgoing or incoming cut for k=%d: the other nodes have too few ranks", k);
            break;
        }
        for (int j = 0; j < k; j++)
            ref[j] = t_out;
        rc = conflict(o, p, &f, ref, ref_eps, lat, FC_CONFLICT_OUTGOING,
                      k > 2 ? after_alpha(p, FC_CONFLICT_OUTGOING, (uint32_t)k) : 0);
        if (rc != 0)
            break;
        same_direction(L, X, k, 0, &f);
        for (int j = 0; j < k; j++)
            ref[j] = t_in;
        rc = conflict(o, p, &f, ref, ref_eps, lat, FC_CONFLICT_INCOMING,
                      k > 2 ? after_alpha(p, FC_CONFLICT_INCOMING, (uint32_t)k) : 0);
    }
    if (rc != 0)
        return rc;
    if (L->nnodes >= 2 && (rc = latejoin(o, L, p, t_out, lat, notes, nn)) != 0)
        return rc;
    if (L->nnodes >= 2 && (rc = connection(o, L, p, lat, notes, nn)) != 0)
        return rc;
    if ((rc = opposite(o, L, p, t_out, notes, nn)) != 0)
        return rc;
    /* Mixed: A -> X while X -> B, the report's 0 -> 1 -> 2 (B = A with only two nodes). */
    cal_flows f = {0};
    add_flow(&f, pick(L, 0, &f), L->members[L->first[X]]);
    add_flow(&f, L->members[L->first[X] + 1], pick(L, others >= 2 ? 1 : 0, &f));
    ref[0] = t_in;
    ref[1] = t_out;
    if (f.src[0] < 0 || f.dst[1] < 0) {
        note(notes, nn, "no mixed cut: node 0 has too few ranks to play both ends");
        return 0;
    }
    if ((rc = conflict(o, p, &f, ref, ref_eps, lat, FC_CONFLICT_MIXED_IN, 0)) != 0)
        return rc;
    chain(o, L, t_out, t_in, notes, nn);
    return 0;
}

/* k ranks of one node sending to k of another, k = 1 .. rpn, four sizes: Gropp's series. */
/* Replaces the inter-node segments from the smallest lone-flow size up by a line fitted to the
 * one-way times of a lone flow (the k = 1 series of the max-rate measurement). A flow in a trace
 * runs from its start (a barrier, a signal) to the end of its receive, as these do; a ping-pong's
 * half round trip leaves out the one-way start-up of a large transfer and, on a loaded machine,
 * mixes in the wake-up of the replying rank, so for the sizes whose time is mostly bandwidth the
 * one-way figures are what the models must read. */
static void one_way_segment(fc__profile *p, const unsigned *ks, const double *bytes, const double *t, size_t n,
                            char *notes, size_t nn)
{
    double x[4 * CAL_MAXFLOWS], y[4 * CAL_MAXFLOWS], lat, pb;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (ks[i] == 1 && t[i] > 0) {
            x[m] = bytes[i];
            y[m++] = t[i];
        }
    if (m < 2 || fc__fit_line(x, y, NULL, m, &lat, &pb) != 0 || pb <= 0)
        return;
    double lo_b = x[0];
    for (size_t i = 1; i < m; i++)
        lo_b = x[i] < lo_b ? x[i] : lo_b;
    if (lat < 0) {
        /* Through the origin instead: the mean slope. */
        double num = 0, den = 0;
        for (size_t i = 0; i < m; i++) {
            num += x[i] * y[i];
            den += x[i] * x[i];
        }
        lat = 0;
        pb = num / den;
    }
    double worst = 0;
    for (size_t i = 0; i < m; i++) {
        double e = fabs(lat + pb * x[i] - y[i]) / y[i];
        worst = e > worst ? e : worst;
    }
    uint64_t lo = (uint64_t)lo_b;
    size_t keep = 0;
    while (keep < p->ninter && p->inter[keep].lo < lo)
        keep++;
    if (keep == 0)
        return; /* never replace the small sizes' latency */
    p->ninter = keep;
    p->inter[keep - 1].hi = lo;
    if (fc__profile_add_segment(p, 0, lo, UINT64_MAX, lat, pb, worst) != 0) {
        p->inter[keep - 1].hi = UINT64_MAX;
        return;
    }
    note(notes, nn, "inter from %" PRIu64 " bytes: one-way times of a lone flow (%zu sizes; latency %.1f us, %.2f MB/s, "
         "worst relative residual %.3f), the time a flow takes in a trace, in place of the ping-pong's",
         lo, m, lat * 1e6, 1e-6 / pb, worst);
}

static int maxrate(const cal_opts *o, const cal_layout *L, fc__profile *p, char *notes, size_t nn)
{
    int P = L->nnodes - 2, Q = L->nnodes - 1;
    unsigned ks[4 * CAL_MAXFLOWS];
    double bytes[4 * CAL_MAXFLOWS], t[4 * CAL_MAXFLOWS];
    size_t n = 0;
    int kmax = L->rpn < CAL_MAXFLOWS ? L->rpn : CAL_MAXFLOWS;
    for (int k = 1; k <= kmax; k++)
        for (int q = 3; q >= 0; q--) {
            uint64_t b = o->cut_size >> (2 * q);
            if (b < 1024)
                continue;
            cal_flows f = {0};
            for (int j = 0; j < k; j++)
                add_flow(&f, L->members[L->first[P] + j], L->members[L->first[Q] + j]);
            double per[CAL_MAXFLOWS], eps, last;
            run_flows(o, &f, b, per, &eps, &last);
            ks[n] = (unsigned)k;
            bytes[n] = (double)b;
            t[n] = last;
            n++;
        }
    one_way_segment(p, ks, bytes, t, n, notes, nn);
    unsigned fixed = 0;
    int rc = fc__fit_maxrate(ks, bytes, t, n, &p->maxrate, &fixed);
    if (rc != 0) {
        note(notes, nn, "no max-rate parameters: the series could not be fitted");
        return 0;
    }
    p->has_maxrate = 1;
    double s0 = fc__profile_time(p, 0, 0);
    if (p->maxrate.s < s0) {
        /* A message starts no sooner than an empty one arrives. The sizes' line puts the start-up
         * below that, or below zero, where a shaped link lets its token bucket's burst through at
         * once: the first bytes of every size cost no time, and the intercept is the start-up less
         * the burst's time at the link's rate. The start-up is not in these times; the
         * ping-pong's one-way time of an empty message is. */
        p->maxrate.s = s0;
        double sse = 0;
        for (size_t i = 0; i < n; i++) {
            double r = fc__gropp_time(&p->maxrate, ks[i], bytes[i]) / t[i] - 1;
            sse += r * r;
        }
        p->maxrate.eps = sqrt(sse / (double)n);
        note(notes, nn, "max-rate: the sizes' line starts below an empty message's one-way time (a shaped link "
             "passes a flow's first bytes at once), which s takes: %.3g us", s0 * 1e6);
    }
    note(notes, nn, "max-rate: k = 1..%d ranks of node %d send to as many of node %d, %zu sizes up to %" PRIu64
         " bytes; T = time until the last flow ends; s is a one-way start-up, not Gropp's round trip", kmax, P, Q,
         n / (size_t)kmax, o->cut_size);
    if (fixed & FC_FIT_FIXED_NIC)
        note(notes, nn, "max-rate: no k saturated the NIC: R_NIC is fixed at the largest rate seen (a lower bound)");
    if (fixed & FC_FIT_FIXED_CORE_BASE)
        note(notes, nn, "max-rate: one flow already fills the NIC, so the cores' rates are hidden: R_CORE_BASE is "
                        "fixed at R_NIC (a lower bound)");
    if (fixed & FC_FIT_FIXED_CORE_INCR)
        note(notes, nn, "max-rate: fewer than two k below the NIC's rate: R_CORE_INCR is fixed at the least "
                        "increment that reaches the rate seen (0 when one flow fills the NIC)");
    return 0;
}

/* IMB's multi-mode ping-pong between nodes 0 and 1 (two pairs: their first two ranks each), at
 * sizes from 32 KiB up by 2, and Hager & Wellein's model fitted to the aggregated bandwidths. The
 * model has three parameters (chunk, B_r, T_1): with sizes up by 4, --quick measured only three,
 * which all but determined the fit, and a size slowed by CPU contention moved B_r by 30 %; six
 * sizes up to --quick's 1 MiB (eight up to 4 MiB) overdetermine it. The IMB settings are scaled
 * down from the standard 40 MB / 1000 to 4 MiB / 100 (1 MiB / 20 with --quick): a standard sample
 * moves 80 MB through each link, 3 s at 200 Mbit/s; the model takes the settings as parameters, so
 * the fit is the same model at other settings. */
static int imb(const cal_opts *o, const cal_layout *L, fc__profile *p, char *notes, size_t nn)
{
    if (L->first[1] - L->first[0] < 2 || L->first[2] - L->first[1] < 2) {
        note(notes, nn, "no IMB multi-mode figures: nodes 0 and 1 need two ranks each");
        return 0;
    }
    fc__imb m = {.overall_vol = o->quick ? 1048576.0 : 4194304.0, .msgs_per_sample = o->quick ? 20.0 : 100.0};
    cal_flows f = {0};
    for (int j = 0; j < 2; j++)
        add_flow(&f, L->members[L->first[0] + j], L->members[L->first[1] + j]);
    double x[8], b[8];
    size_t n = 0;
    uint64_t top = o->max_size < 4194304 ? o->max_size : 4194304;
    for (uint64_t s = 32768; s <= top && n < 8; s *= 2) {
        int reps = (int)fc__imb_n(&m, (double)s);
        cal_stat st = cal_multi_pingpong(o, &f, s, reps);
        if (!(st.mean > 0))
            continue;
        x[n] = (double)s;
        b[n++] = 4.0 * (double)s * reps / st.mean;
        if (o->verbose)
            fprintf(stderr, "imb multi-mode ping-pong size %" PRIu64 ": T_b %.6g s, b %.6g B/s (eps %.3f)\n", s,
                    st.mean, b[n - 1], st.rel_se);
    }
    double resid = 0;
    if (n < 3 || fc__imb_fit(x, b, n, &m, &resid) != 0) {
        note(notes, nn, "no IMB multi-mode figures: %zu sizes could not be fitted", n);
        return 0;
    }
    p->has_imb = 1;
    p->imb_chunk = m.chunk;
    p->imb_bandwidth = m.bandwidth;
    p->imb_latency = m.latency;
    p->imb_overall_vol = m.overall_vol;
    p->imb_msgs_per_sample = m.msgs_per_sample;
    p->imb_eps = resid;
    note(notes, nn, "imb: IMB multi-mode ping-pong, 2 pairs between nodes 0 and 1, %zu sizes from 32 KiB, "
         "OVERALL_VOL %.0f, MSGSPERSAMPLE %.0f; Hager & Wellein's model fitted to the aggregated bandwidth "
         "(relative residual %.3f)", n, m.overall_vol, m.msgs_per_sample, resid);
    if (L->crowded)
        note(notes, nn, "imb: %d ranks share a host of %d CPUs, so the pairs' ranks napped %d us between "
             "polls where IMB polls busily; T_1 includes those naps", L->host_ranks, L->host_cpus, CAL_NAP_PP);
    else
        note(notes, nn, "imb: the pairs' ranks polled busily, as IMB does");
    return 0;
}

int cal_measure(const cal_opts *o, const cal_layout *L, fc__profile *p, char *notes, size_t n)
{
    notes[0] = '\0';
    int a = L->members[L->first[0]], b = L->members[L->first[1]];
    note(notes, n, "flowcut-calibrate: %d nodes x %d ranks per node (%d ranks), eps %.3g, %d run%s merged by "
         "their median%s", L->nnodes, L->rpn, L->nranks, o->eps, o->runs, o->runs == 1 ? "" : "s",
         o->quick ? ", --quick" : "");
    uint64_t thr = 0, thr_intra = 0;
    size_t npts = 0;
    /* a is rank 0: the ping-pong initiator is always rank 0, which drives. */
    int rc = path_segments(o, b, 0, p, &thr, &npts);
    if (rc != 0)
        return rc;
    p->eager_threshold = thr;
    note(notes, n, "inter: ping-pong (round trip / 2) between rank %d (node 0) and rank %d (node 1), %zu sizes "
         "0..%" PRIu64 " refined where interpolation erred most", a, b, npts, o->max_size);
    if (L->first[1] - L->first[0] >= 2) {
        int c = L->members[L->first[0] + 1];
        if ((rc = path_segments(o, c, 1, p, &thr_intra, &npts)) != 0)
            return rc;
        note(notes, n, "intra: ping-pong between ranks %d and %d of node 0, %zu sizes", a, c, npts);
    } else {
        note(notes, n, "no intra-node figures: node 0 has one rank");
    }
    if (thr == 0)
        note(notes, n, "eager-threshold: no protocol switch found in the inter-node times");
    if ((rc = cuts(o, L, p, notes, n)) != 0)
        return rc;
    if ((rc = maxrate(o, L, p, notes, n)) != 0)
        return rc;
    return imb(o, L, p, notes, n);
}

/* ---- summary ------------------------------------------------------------------------------------ */

static void put_segments(FILE *f, const char *what, const fc__segment *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char hi[32];
        if (s[i].hi == UINT64_MAX)
            snprintf(hi, sizeof hi, "inf");
        else
            snprintf(hi, sizeof hi, "%" PRIu64, s[i].hi);
        fprintf(f, "  %-6s %10" PRIu64 " .. %-10s latency %9.2f us  %10.2f MB/s  (eps %.3f)\n", what, s[i].lo, hi,
                s[i].latency * 1e6, s[i].per_byte > 0 ? 1e-6 / s[i].per_byte : INFINITY, s[i].eps);
    }
}

void cal_summary(FILE *f, const cal_opts *o, const cal_layout *L, const fc__profile *p, const char *notes,
                 double seconds)
{
    fprintf(f, "flowcut-calibrate: wrote %s in %.1f s\n", o->out, seconds);
    fprintf(f, "  %d nodes x %d ranks per node; MPI: %s\n  network: %s\n", L->nnodes, L->rpn, p->mpi, p->network);
    fprintf(f, "one-way time = latency + size / rate:\n");
    put_segments(f, "inter", p->inter, p->ninter);
    put_segments(f, "intra", p->intra, p->nintra);
    if (p->eager_threshold)
        fprintf(f, "eager -> rendezvous threshold: %" PRIu64 " bytes\n", p->eager_threshold);
    else
        fprintf(f, "eager -> rendezvous threshold: not seen in the data\n");
    if (p->ncuts)
        fprintf(f, "flow cuts (a flow moves at 1 / (1 + alpha) of its lone rate):\n");
    for (size_t i = 0; i < p->ncuts; i++) {
        const fc__cut *c = &p->cuts[i];
        fprintf(f, "  %-9s k=%" PRIu32 "  alpha", kind_name(c->kind), c->k);
        for (size_t j = 0; j < c->nalpha; j++)
            fprintf(f, " %.3f", c->alpha[j]);
        fprintf(f, "  (eps %.3f)\n", c->eps);
    }
    if (p->has_maxrate)
        fprintf(f, "max-rate: s %.1f us, R_NIC %.2f MB/s, R_CORE_BASE %.2f MB/s, R_CORE_INCR %.2f MB/s "
                   "(fit residual %.3f)\n",
                p->maxrate.s * 1e6, p->maxrate.r_nic * 1e-6, p->maxrate.r_core_base * 1e-6,
                p->maxrate.r_core_incr * 1e-6, p->maxrate.eps);
    if (p->has_latejoin)
        fprintf(f, "late joiner: weighs 1 / (1 + %.3f n) after n older flows, measured up to k = %u (eps %.3f)\n",
                p->latejoin_g, (unsigned)p->latejoin_kmax, p->latejoin_eps);
    for (size_t i = 0; i < p->nopp; i++)
        fprintf(f, "opposite direction: %u flows fill a node's other direction: a flow in waits %.1f ms, out "
                "%.1f ms (eps %.3f)\n", (unsigned)p->opp[i].k, p->opp[i].p_in * 1e3, p->opp[i].p_out * 1e3,
                p->opp[i].eps);
    if (p->has_conn)
        fprintf(f, "connection: the messages from one rank to another move %s (waiting share %.2f, eps %.3f)\n",
                p->conn_serial ? "one after the other" : "side by side", p->conn_wait, p->conn_eps);
    if (p->has_conn_ends)
        fprintf(f, "connection: the earlier message ends later by %.2f of the later one's data time (%s; eps %.3f)\n",
                p->conn_ends, fc__profile_conn_ordered(p) ? "they move side by side and end in order" :
                p->conn_serial ? "they move one after the other" : "they move side by side", p->conn_ends_eps);
    if (p->has_imb)
        fprintf(f, "IMB multi-mode (Hager & Wellein): chunk %.0f B, B_r %.2f MB/s, T_1 %.1f us (fit residual %.3f)\n",
                p->imb_chunk, p->imb_bandwidth * 1e-6, p->imb_latency * 1e6, p->imb_eps);
    fprintf(f, "notes:\n");
    for (const char *s = notes; *s;) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        fprintf(f, "  %.*s\n", (int)len, s);
        s += len + (e != NULL);
    }
}
