/* analyzer/model/evaluate.c: the predicted-versus-observed part of an analysis: self-calibration of a
 * profile from the trace's own flows, and the run of each model over the inter-node flows with
 * its errors per flow, per interval and in Table 3's statistics. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "model/fit.h"
#include "util/internal.h"
#include "model/evaluate.h"
#include "model/observe.h"
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
static size_t fit_side_times(const fc__match *m, size_t lo, size_t hi, const uint8_t *keep, const double *div,
                             const double *tim, uint64_t threshold, double *bb, double *tt, fc__segment *seg,
                             size_t *nseg);

static size_t fit_side(const fc__match *m, size_t lo, size_t hi, const uint8_t *keep, const double *div,
                       uint64_t threshold, double *bb, double *tt, fc__segment *seg, size_t *nseg)
{
    return fit_side_times(m, lo, hi, keep, div, NULL, threshold, bb, tt, seg, nseg);
}

/* fit_side with flow i's time tim[i] in place of its observed time (NULL: the observed time). */
static size_t fit_side_times(const fc__match *m, size_t lo, size_t hi, const uint8_t *keep, const double *div,
                             const double *tim, uint64_t threshold, double *bb, double *tt, fc__segment *seg,
                             size_t *nseg)
{
    size_t used = 0;
    double lat_small = 0;
    *nseg = 0;
    for (int big = 0; big < 2; big++) {
        size_t n = 0;
        for (size_t i = lo; i < hi; i++) {
            const fc__flow *f = &m->flows[i];
            if ((keep && !keep[i]) || !(f->observed > 0) || (f->bytes >= threshold) != big)
                continue;
            double ti = tim ? tim[i] : f->observed;
            bb[n] = (double)f->bytes;
            tt[n++] = div ? ti / div[i] : ti;
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
static int fit_cuts_kept(const fc__match *m, const fc__intervals *iv, fc__profile *p, double *vals,
                         const uint8_t *keep, const double *tim, size_t *fitted, size_t *assumed);

static int fit_cuts(const fc__match *m, const fc__intervals *iv, fc__profile *p, double *vals, size_t *fitted,
                    size_t *assumed)
{
    return fit_cuts_kept(m, iv, p, vals, NULL, NULL, fitted, assumed);
}

/* fit_cuts over the flows keep[] names (NULL: all), with flow i's time tim[i] (NULL: observed);
 * with keep, a fitted cut stays between 0 and k - 1, a free flow and a fair share. */
static int fit_cuts_kept(const fc__match *m, const fc__intervals *iv, fc__profile *p, double *vals,
                         const uint8_t *keep, const double *tim, size_t *fitted, size_t *assumed)
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
                const fc__flow *f = &m->flows[i];
                const fc__label_run *runs;
                size_t nr;
                if ((keep && !keep[i]) || fc__intervals_history(iv, f->id, &runs, &nr) < 0 || nr != 1 ||
                    runs[0].label.kind != kind || runs[0].label.k != k || f->bytes == 0)
                    continue;
                const fc__segment *s = fc__profile_segment(p, 0, f->bytes);
                double data = s ? (double)f->bytes * s->per_byte : 0;
                if (data > 0)
                    vals[n++] = ((tim ? tim[i] : f->observed) - s->latency) / data - 1;
            }
            double alpha;
            if (n >= FC_SELFCAL_MIN_FLOWS) {
                qsort(vals, n, sizeof *vals, cmp_double);
                alpha = n % 2 ? vals[n / 2] : (vals[n / 2 - 1] + vals[n / 2]) / 2;
                if (alpha < 0)
                    alpha = 0;
                if (keep && kind != FC_CONFLICT_MIXED_IN && kind != FC_CONFLICT_MIXED_OUT && alpha > k - 1)
                    alpha = k - 1;
                if (keep && (kind == FC_CONFLICT_MIXED_IN || kind == FC_CONFLICT_MIXED_OUT) && alpha > 1)
                    alpha = 1;
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

/* Uncontended (alone[i]) and the time-weighted mean degree of each inter-node flow, as
 * fc__selfcal reads them from the label histories. Returns the flows that ran alone. */
static size_t degrees(const fc__match *m, const fc__intervals *iv, uint8_t *alone, double *degree)
{
    size_t nalone = 0;
    for (size_t i = 0; i < m->ninter; i++) {
        const fc__label_run *runs;
        size_t nr;
        double w = 0, len = 0;
        alone[i] = fc__intervals_history(iv, m->flows[i].id, &runs, &nr) == 0 && nr > 0;
        for (size_t r = 0; r < nr; r++) {
            const fc__label *l = &runs[r].label;
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
    return nalone;
}

int fc__selfcal(const fc__match *m, const fc__intervals *iv, fc__profile **out, char *note, size_t nnote)
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
    nalone = degrees(m, iv, alone, degree);
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

/* The inter-node segments fitted to the flows keep[] names, with times tim[]: to those that ran
 * alone when there are enough, else to all of them each divided by its degree (*div is then
 * degree, else NULL). */
static size_t fit_kept(const fc__match *m, const uint8_t *keep, const uint8_t *alone, const double *degree,
                       const double *tim, uint8_t *both, double *bb, double *tt, fc__segment *seg, size_t *nseg,
                       const double **div)
{
    size_t nboth = 0;
    for (size_t i = 0; i < m->ninter; i++)
        nboth += both[i] = keep[i] && alone[i];
    size_t used = 0;
    *nseg = 0;
    *div = NULL;
    if (nboth >= FC_SELFCAL_MIN_FLOWS)
        used = fit_side_times(m, 0, m->ninter, both, NULL, tim, m->eager_threshold, bb, tt, seg, nseg);
    if (*nseg == 0) {
        used = fit_side_times(m, 0, m->ninter, keep, degree, tim, m->eager_threshold, bb, tt, seg, nseg);
        *div = degree;
    }
    return used;
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Keeps a fitted segment to what the flows keep[] of it show, each time tim[i] divided by div[i]
 * (NULL: by 1), as the fit took them. Flows of one size show no latency: it is then fixed_lat,
 * else FC_SELFCAL_LATENCY_ASSUMED (*assumed set), and the per-byte cost their mean time beyond it.
 * Otherwise the latency is above 0: when the fit gives none (noise), the median time the flows took beyond their data time, when positive, else
 * fixed_lat (the eager segment's, for the rendezvous one), else the median of the positive ones
 * of those times. On a machine with more ranks than cores
 * (over) a rank that waits for a core only ever adds time: the per-byte cost is then at most the
 * 10th percentile of what the flows show. And the rate is one a NIC reached: at most the largest
 * of div[i] x bytes / (time - latency). vals has room for m->ninter values. Returns 0, or -1 when
 * no positive latency can be had. */
static int check_segment(const fc__match *m, const uint8_t *keep, const double *tim, const double *div,
                         int over, double fixed_lat, double *vals, fc__segment *s, int *capped, int *assumed)
{
    size_t n = 0;
#define KEPT(i) (keep[i] && m->flows[i].bytes >= s->lo && m->flows[i].bytes < s->hi && m->flows[i].bytes > 0)
#define TIME(i) (div ? tim[i] / div[i] : tim[i])
    uint64_t bmin = UINT64_MAX, bmax = 0;
    for (size_t i = 0; i < m->ninter; i++)
        if (KEPT(i)) {
            vals[n++] = TIME(i) - (double)m->flows[i].bytes * s->per_byte;
            bmin = m->flows[i].bytes < bmin ? m->flows[i].bytes : bmin;
            bmax = m->flows[i].bytes > bmax ? m->flows[i].bytes : bmax;
        }
    if (n == 0)
        return -1;
    if (bmin == bmax) {
        /* One size shows latency and data time only together: the latency is the eager
         * segment's, else taken as negligible, and the per-byte cost carries the rest. */
        s->latency = fixed_lat > 0 ? fixed_lat : FC_SELFCAL_LATENCY_ASSUMED;
        double sum = 0;
        for (size_t i = 0; i < m->ninter; i++)
            if (KEPT(i))
                sum += (TIME(i) - s->latency) / (double)bmin;
        s->per_byte = sum / (double)n;
        if (!(s->per_byte > 0))
            return -1;
        *assumed = fixed_lat > 0 ? *assumed : 1;
    }
    if (!(s->latency > 0)) {
        double med = median_of(vals, n);
        s->latency = med > 0 ? med : fixed_lat;
    }
    if (!(s->latency > 0)) {
        /* The residuals straddle 0: the median of those above it, a latency some flows show. */
        size_t np = 0;
        for (size_t i = 0; i < n; i++)
            if (vals[i] > 0)
                vals[np++] = vals[i];
        if (np == 0)
            return -1;
        s->latency = median_of(vals, np);
    }
    if (over) {
        n = 0;
        for (size_t i = 0; i < m->ninter; i++)
            if (KEPT(i) && TIME(i) > s->latency)
                vals[n++] = (TIME(i) - s->latency) / (double)m->flows[i].bytes;
        if (n > 0) {
            qsort(vals, n, sizeof *vals, cmp_double);
            double p10 = vals[n / 10];
            if (p10 < s->per_byte)
                s->per_byte = p10;
        }
    }
    double rmax = 0;
    for (size_t i = 0; i < m->ninter; i++)
        if (KEPT(i) && tim[i] > s->latency) {
            double r = (div ? div[i] : 1) * (double)m->flows[i].bytes / (tim[i] - s->latency);
            rmax = r > rmax ? r : rmax;
        }
#undef KEPT
#undef TIME
    if (rmax > 0 && 1 / s->per_byte > rmax) {
        s->per_byte = 1 / rmax;
        *capped = 1;
    }
    return 0;
}

/* The latency of the segment among seg[0 .. nseg) that holds a size, 0 when none does or it is not
 * positive: the time at the start of a flow during which none of its bytes cross. */
static double seg_latency(const fc__segment *seg, size_t nseg, uint64_t bytes)
{
    for (size_t q = 0; q < nseg; q++)
        if (bytes >= seg[q].lo && bytes < seg[q].hi)
            return seg[q].latency > 0 ? seg[q].latency : 0;
    return 0;
}

/* Keeps a fitted segment's rate to the fastest any NIC direction was seen moving bytes while a
 * flow keep[] names was active (fc__obs: the bytes that crossed the busier one over the flow's
 * time, less the latency of its size's segment among seg[0 .. nseg), which moves no byte): a rate
 * no NIC of the trace reached is not the network's. Without the latency taken off, a flow that ran
 * alone would read slower than its own rate, and cap the fit below it (a latency the fit assumed
 * is given as 0: check_segments). Returns 0 (*capped set when it lowered the rate of *s), or -1
 * when no flow gives a rate. */
static int cap_at_nics(const fc__observation *ob, const fc__match *m, const uint8_t *keep, const fc__segment *seg,
                       size_t nseg, fc__segment *s, int *capped)
{
    double rmax = 0;
    for (size_t i = 0; i < m->ninter; i++) {
        const fc__flow *f = &m->flows[i];
        if (!keep[i] || !(f->observed > 0))
            continue;
        double lat = seg_latency(seg, nseg, f->bytes);
        double busy = f->observed - lat > 0 ? f->observed - lat : f->observed;
        const fc__obs *o = &ob->flow[i];
        double r = (o->src_out > o->dst_in ? o->src_out : o->dst_in) / busy;
        rmax = r > rmax ? r : rmax;
    }
    if (!(rmax > 0))
        return -1;
    if (1 / s->per_byte > rmax) {
        s->per_byte = 1 / rmax;
        *capped = 1;
    }
    return 0;
}

/* check_segment for each of seg[0 .. nseg) (the rendezvous one's fixed latency the eager one's),
 * then cap_at_nics for each; lseg[] receives the segments with each latency that was assumed, not
 * fitted, set to 0, for the caps: an assumed latency is no measurement of the time a flow moves no
 * byte. Returns 0, or -1 when a segment has no latency (check_segment) or no flow gives a rate. */
static int check_segments(const fc__observation *ob, const fc__match *m, const uint8_t *keep, const double *tim,
                          const double *div, int over, double *vals, fc__segment *seg, size_t nseg,
                          fc__segment *lseg, int *capped, int *assumed)
{
    for (size_t s = 0; s < nseg; s++) {
        int a = 0;
        if (check_segment(m, keep, tim, div, over, s > 0 ? seg[0].latency : 0, vals, &seg[s], capped, &a) < 0)
            return -1;
        *assumed |= a;
        lseg[s] = seg[s];
        /* The rendezvous segment may take the eager one's latency, assumed or not. */
        if (a || (s > 0 && lseg[0].latency == 0 && seg[s].latency == seg[0].latency))
            lseg[s].latency = 0;
    }
    for (size_t s = 0; s < nseg; s++) {
        if (cap_at_nics(ob, m, keep, lseg, nseg, &seg[s], capped) < 0)
            return -1;
        lseg[s].per_byte = seg[s].per_byte;
    }
    return 0;
}

/* One NIC direction's share of a flow: the direction (node x 2 + 0 out, 1 in) and the flow's time. */
typedef struct nic_span {
    uint64_t key;
    double start, end, bytes;
    double data; /* the flow's first byte crosses no earlier: start + its segment's latency */
} nic_span;

static int cmp_span(const void *a, const void *b)
{
    const nic_span *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The least rate the NICs must have: for each NIC direction, the time at least one of the flows
 * keep[] names through it was active (the union of their [start, end]) falls into busy periods,
 * and each period's bytes (of the flows in it) over its length is a rate the direction carried;
 * *rate is the largest over the periods of every direction, *key that direction (node x 2 + 0 out,
 * 1 in). The bytes of a flow cross between the end of its latency (its size's segment among
 * seg[0 .. nseg)) and its end, and flows active together share the direction's capacity however
 * TCP splits it, so no period moves more than the capacity over its length less the time before
 * the first of its flows could move a byte: each figure is at most the capacity, and the largest
 * is the most the trace proves (an assumed latency given as 0, as for cap_at_nics). Returns 0, -1
 * when no kept flow has a positive time, or FC_ENOMEM. */
static int nic_bound(const fc__match *m, const uint8_t *keep, const fc__segment *seg, size_t nseg, double *rate,
                     uint64_t *key)
{
    size_t n = 0;
    nic_span *sp = malloc((m->ninter ? 2 * m->ninter : 1) * sizeof *sp);
    *rate = 0;
    *key = 0;
    if (sp == NULL)
        return FC_ENOMEM;
    for (size_t i = 0; i < m->ninter; i++) {
        const fc__flow *f = &m->flows[i];
        if (!keep[i] || !(f->end > f->start) || f->bytes == 0)
            continue;
        double data = f->start + seg_latency(seg, nseg, f->bytes);
        sp[n++] = (nic_span){(uint64_t)f->src_node * 2, f->start, f->end, (double)f->bytes, data};
        sp[n++] = (nic_span){(uint64_t)f->dst_node * 2 + 1, f->start, f->end, (double)f->bytes, data};
    }
    fc__sort(sp, n, sizeof *sp, cmp_span);
    /* Spans sorted by direction, then start: a period closes at a span that starts after it ends,
     * or at the next direction. */
    double bytes = 0, lo = 0, hi = 0, first = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i > 0 && (i == n || sp[i].key != sp[i - 1].key || sp[i].start > hi)) {
            double len = hi - first > 0 ? hi - first : hi - lo;
            if (bytes / len > *rate) {
                *rate = bytes / len;
                *key = sp[i - 1].key;
            }
            bytes = 0;
        }
        if (i == n)
            break;
        if (bytes == 0) {
            lo = sp[i].start;
            hi = sp[i].end;
            first = sp[i].data;
        } else {
            hi = sp[i].end > hi ? sp[i].end : hi;
            first = sp[i].data < first ? sp[i].data : first;
        }
        bytes += sp[i].bytes;
    }
    free(sp);
    return *rate > 0 ? 0 : -1;
}

/* Keeps the segments fitted to flows that shared their NICs (each time divided by its degree) to
 * the NIC bound: that fit assumes a fair split of each NIC, and the flows that got more than their
 * share read as a faster network than any NIC carried. Returns 1 when it lowered a rate, else 0. */
static int cap_at_bound(fc__segment *seg, size_t nseg, double bound)
{
    int capped = 0;
    for (size_t s = 0; s < nseg; s++)
        if (bound > 0 && 1 / seg[s].per_byte > bound) {
            seg[s].per_byte = 1 / bound;
            capped = 1;
        }
    return capped;
}

/* Whether either end of flow f ran on a machine with more ranks than cores. */
static int flow_over(const fc__observation *ob, const fc__flow *f)
{
    return (f->src_rank < ob->world && ob->oversub[f->src_rank]) ||
           (f->dst_rank < ob->world && ob->oversub[f->dst_rank]);
}

int fc__selfcal_observed(const fc__match *m, const fc__intervals *iv, fc__observation *ob, fc__profile **out,
                         char *note, size_t nnote)
{
    int rc = FC_ENOMEM;
    size_t n1 = m->nflows ? m->nflows : 1;
    fc__profile *p = fc__profile_new();
    double *bb = malloc(n1 * sizeof *bb), *tt = malloc(n1 * sizeof *tt), *tim = malloc(n1 * sizeof *tim);
    double *degree = malloc(n1 * sizeof *degree);
    uint8_t *alone = calloc(n1, 1), *keep = calloc(n1, 1), *both = calloc(n1, 1);
    *out = NULL;
    if (p == NULL || bb == NULL || tt == NULL || tim == NULL || degree == NULL || alone == NULL || keep == NULL ||
        both == NULL)
        goto out;
    degrees(m, iv, alone, degree);
    /* The first fit: flows whose ends both took part in most of their time, with that time; on a
     * machine with more ranks than cores only rendezvous ones, whose data time outweighs the
     * slices a descheduled rank loses on any network. */
    size_t ncand = 0, ncand_p2p = 0, ncoll = 0;
    for (size_t i = 0; i < m->ninter; i++) {
        const fc__flow *f = &m->flows[i];
        const fc__obs *o = &ob->flow[i];
        int over = (f->src_rank < ob->world && ob->oversub[f->src_rank]) ||
                   (f->dst_rank < ob->world && ob->oversub[f->dst_rank]);
        tim[i] = o->rest + o->wire;
        keep[i] = !o->clock && f->observed > 0 && f->bytes > 0 &&
                  o->late_peer + o->no_progress < FC_OBS_MAJOR_SHARE * f->observed && (!over || f->rendezvous);
        ncand += keep[i];
        ncand_p2p += keep[i] && !f->coll;
        ncoll += keep[i] && f->coll;
    }
    /* A collective's steps have inferred times (the expansion splits a rank's time in the call
     * evenly among its steps): the point-to-point flows, when there are enough of them, are what
     * the fit trusts; a trace whose traffic is all in collectives has only the steps. A step on a
     * machine with more ranks than cores is never fitted: its time is a share of the call, and a
     * rank's waits for a core count in it as much as the network, with no end of the step observed
     * to tell them apart. */
    int p2p = ncand_p2p >= FC_SELFCAL_MIN_FLOWS;
    size_t ncoll_over = 0;
    for (size_t i = 0; i < m->ninter; i++) {
        int drop = m->flows[i].coll && (p2p || flow_over(ob, &m->flows[i]));
        ncoll_over += keep[i] && drop && !p2p;
        if (drop && keep[i]) {
            keep[i] = 0;
            ncand--;
        }
    }
    if (ncand < FC_SELFCAL_MIN_FLOWS && ncoll_over > 0) {
        const fc__obs_host *h = ob->hosts;
        for (size_t k = 0; k < ob->nhosts; k++)
            if (ob->hosts[k].cores > 0 && ob->hosts[k].ranks > ob->hosts[k].cores) {
                h = &ob->hosts[k];
                break;
            }
        snprintf(note, nnote,
                 "not self-calibrated: %zu of the flows to fit are collectives' steps on machines with more ranks "
                 "than cores (%s ran %" PRIu32 " ranks on %" PRIu32 " cores), whose times, shares of each call, hold "
                 "the ranks' waits for a core as much as the network; models left out: give --platform (flowcut "
                 "calibrate)",
                 ncoll_over, h ? h->name : "?", h ? h->ranks : 0, h ? h->cores : 0);
        rc = 0;
        goto out;
    }
    fc__segment seg[2];
    size_t nseg = 0;
    const double *div = NULL;
    if (ncand >= FC_SELFCAL_MIN_FLOWS)
        fit_kept(m, keep, alone, degree, tim, both, bb, tt, seg, &nseg, &div);
    int capped = 0, nolat = 0, over = 0, assumed_lat = 0;
    for (size_t i = 0; i < m->ninter; i++)
        over |= keep[i] && ((m->flows[i].src_rank < ob->world && ob->oversub[m->flows[i].src_rank]) ||
                            (m->flows[i].dst_rank < ob->world && ob->oversub[m->flows[i].dst_rank]));
    fc__segment lseg[2];
    nolat = check_segments(ob, m, keep, tim, div, over, bb, seg, nseg, lseg, &capped, &assumed_lat) < 0;
    double bound = 0;
    uint64_t bound_key = 0;
    if (!nolat && nseg > 0 && div != NULL) {
        if ((rc = nic_bound(m, keep, lseg, nseg, &bound, &bound_key)) == FC_ENOMEM)
            goto out;
        cap_at_bound(seg, nseg, bound);
    }
    rc = FC_ENOMEM;
    if (nolat)
        nseg = 0;
    if (nseg > 0) {
        /* Classify with it, then fit again to the network flows alone. */
        if ((p->inter = malloc(sizeof seg)) == NULL)
            goto out;
        memcpy(p->inter, seg, nseg * sizeof *seg);
        p->ninter = nseg;
        fc__observe_classify(ob, m, p);
        if (p2p) {
            size_t np = 0;
            for (size_t i = 0; i < m->ninter; i++)
                np += ob->flow[i].cls == FC_OBS_NETWORK && !m->flows[i].coll;
            p2p = np >= FC_SELFCAL_MIN_FLOWS;
        }
        for (size_t i = 0; i < m->ninter; i++)
            keep[i] = ob->flow[i].cls == FC_OBS_NETWORK &&
                      !(m->flows[i].coll && (p2p || flow_over(ob, &m->flows[i])));
    }
    size_t nnet = 0, used = 0, ncoll_used = 0;
    for (size_t i = 0; nseg > 0 && i < m->ninter; i++)
        nnet += keep[i];
    nseg = 0;
    if (nnet >= FC_SELFCAL_MIN_FLOWS)
        used = fit_kept(m, keep, alone, degree, tim, both, bb, tt, seg, &nseg, &div);
    /* The steps among the flows the segments were fitted to (those that ran alone, or all). */
    for (size_t i = 0; nseg > 0 && i < m->ninter; i++)
        ncoll_used += (div ? keep[i] : both[i]) && m->flows[i].coll && m->flows[i].observed > 0;
    capped = nolat = over = assumed_lat = 0;
    for (size_t i = 0; i < m->ninter; i++)
        over |= keep[i] && ((m->flows[i].src_rank < ob->world && ob->oversub[m->flows[i].src_rank]) ||
                            (m->flows[i].dst_rank < ob->world && ob->oversub[m->flows[i].dst_rank]));
    nolat = check_segments(ob, m, keep, tim, div, over, bb, seg, nseg, lseg, &capped, &assumed_lat) < 0;
    int bounded = 0;
    bound = 0;
    if (!nolat && nseg > 0 && div != NULL) {
        if ((rc = nic_bound(m, keep, lseg, nseg, &bound, &bound_key)) == FC_ENOMEM)
            goto out;
        bounded = cap_at_bound(seg, nseg, bound);
    }
    rc = FC_ENOMEM;
    if (nseg == 0 || nolat) {
        snprintf(note, nnote,
                 "not self-calibrated: %zu of %zu inter-node flows are network flows under a platform fitted "
                 "to them (%d needed, with a positive latency); models left out: give --platform (flowcut "
                 "calibrate)",
                 nnet, m->ninter, FC_SELFCAL_MIN_FLOWS);
        rc = 0;
        goto out;
    }
    snprintf(p->source, sizeof p->source, "trace");
    p->eager_threshold = m->eager_threshold;
    free(p->inter);
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
    if ((rc = fit_cuts_kept(m, iv, p, bb, keep, tim, &fitted, &assumed)) < 0)
        goto out;
    /* The platform must hold up under its own classes: one under which too few flows are set by
     * the network (their NICs idle at its rate, on an oversubscribed machine) is not one the
     * trace shows. */
    fc__observe_classify(ob, m, p);
    if (ob->count[FC_OBS_NETWORK] < FC_SELFCAL_MIN_FLOWS) {
        snprintf(note, nnote,
                 "not self-calibrated: under the platform fitted to %zu network flows only %" PRIu64
                 " of %zu inter-node flows are network flows (%d needed); models left out: give --platform (flowcut "
                 "calibrate)",
                 used, ob->count[FC_OBS_NETWORK], m->ninter, FC_SELFCAL_MIN_FLOWS);
        rc = 0;
        goto out;
    }
    rc = FC_ENOMEM;
    const fc__segment *big = &p->inter[p->ninter - 1];
    p->has_maxrate = 1;
    p->maxrate = (fc__maxrate){big->latency, 1 / big->per_byte, 1 / big->per_byte, 0, 0};
    char how[320] = "";
    if (div != NULL && bounded)
        snprintf(how, sizeof how,
                 ", each time divided by the flows sharing its NIC (too few ran alone), the rate capped at the "
                 "most a NIC direction carried while busy (%.4g MB/s, %s %s)",
                 bound / 1e6, m->nodes[bound_key / 2], bound_key % 2 ? "in" : "out");
    else if (div != NULL)
        snprintf(how, sizeof how, ", each time divided by the flows sharing its NIC (too few ran alone)");
    char whose[96] = "";
    if (ncoll_used > 0)
        snprintf(whose, sizeof whose, ", %zu of them collectives' steps, whose times are inferred", ncoll_used);
    else if (p2p && ncoll > 0) /* steps the first fit would have taken */
        snprintf(whose, sizeof whose, ", point-to-point only (collectives' steps have inferred times)");
    snprintf(note, nnote,
             "self-calibrated: inter-node latency and bandwidth from %zu network flows (of %zu)%s%s%s%s, intra-node "
             "from %zu messages; flow cuts fitted for %zu (kind, k), assumed for %zu",
             used, m->ninter, whose, how, capped && !bounded ? ", the rate capped at the fastest NIC's" : "",
             assumed_lat ? ", the latency assumed (one message size shows none)" : "", nintra, fitted, assumed);
    *out = p;
    p = NULL;
    rc = 0;
out:
    if (rc == FC_ENOMEM)
        fc__err(rc, "self-calibration: out of memory");
    fc__profile_free(p);
    free(bb);
    free(tt);
    free(tim);
    free(degree);
    free(alone);
    free(keep);
    free(both);
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

static int interval_errors(const fc__match *m, const fc__intervals *iv, double *const *pred, unsigned nq,
                           const uint8_t *judged, double **err)
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
        const fc__flow *f = &m->flows[i];
        for (unsigned q = 0; q < nq; q++) {
            double p = pred[q][f->id];
            e[f->id * nq + q] = !f->coll && f->observed > 0 && isfinite(p) && (judged == NULL || judged[i])
                                    ? fabs(p - f->observed) / f->observed * 100
                                    : NAN;
        }
    }
    x.e = e;
    fc__sweep_ops ops = {.arg = &x, .interval = iverr_interval};
    int rc = fc__sweep_flows(m->flows, m->ninter, &ops);
    free(x.ids);
    free(e);
    return rc;
}

int fc__prediction_run(const fc__match *m, const fc__intervals *iv, fc__profile *p, const unsigned *models,
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
    if ((rc = interval_errors(m, iv, pr->pred, pr->nmodels, NULL, pr->iv_err)) < 0)
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

int fc__prediction_judge(fc__prediction *pr, const fc__match *m, const fc__intervals *iv, const uint8_t *judged)
{
    size_t n = 0;
    double *obs = malloc((m->ninter ? m->ninter : 1) * sizeof *obs);
    double *pv = malloc((m->ninter ? m->ninter : 1) * sizeof *pv);
    uint64_t *ids = malloc((m->ninter ? m->ninter : 1) * sizeof *ids);
    int rc = FC_ENOMEM;
    if (obs == NULL || pv == NULL || ids == NULL)
        goto out;
    for (unsigned q = 0; q < pr->nmodels; q++) {
        n = 0;
        for (size_t i = 0; i < m->ninter; i++)
            if (judged[i] && !m->flows[i].coll) { /* a collective's steps: fc__prediction_run */
                obs[n] = m->flows[i].observed;
                pv[n] = pr->pred[q][i];
                ids[n++] = m->flows[i].id;
            }
        fc__errors_compute(obs, pv, ids, n, &pr->err[q]);
        free(pr->iv_err[q]);
        pr->iv_err[q] = NULL;
    }
    pr->judged = 1;
    rc = interval_errors(m, iv, pr->pred, pr->nmodels, judged, pr->iv_err);
out:
    if (rc == FC_ENOMEM)
        fc__err(rc, "prediction: out of memory");
    free(obs);
    free(pv);
    free(ids);
    return rc;
}
