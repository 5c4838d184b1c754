/* analyzer/model/fit.c: least-squares fits of the platform models and the papers' model curves (fit.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "model/fit.h"
#include "util/internal.h"

/* ---- straight lines ---------------------------------------------------------------------------- */

int fc__fit_line(const double *x, const double *y, const double *w, size_t n, double *a, double *b)
{
    /* Centred sums: sizes reach 2^24 and weights 1e10, so raw moments would cancel badly. */
    double sw = 0, xm = 0, ym = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        sw += wi;
        xm += wi * x[i];
        ym += wi * y[i];
    }
    if (n < 2 || sw <= 0)
        return FC_EINVAL;
    xm /= sw;
    ym /= sw;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        sxx += wi * (x[i] - xm) * (x[i] - xm);
        sxy += wi * (x[i] - xm) * (y[i] - ym);
    }
    if (!(sxx > 0))
        return FC_EINVAL;
    *b = sxy / sxx;
    *a = ym - *b * xm;
    return 0;
}

/* A line through the points, intercept and slope kept >= 0, each point weighted by the inverse
 * variance of its mean: 1 / (y e)^2 with e its relative standard error (at least 1 %, so that one
 * lucky point cannot take over), or 1 / y^2 when e is NULL. Returns the sum of squared relative
 * residuals. A single point gets a constant. */
static double fit_rel(const double *x, const double *y, const double *e, size_t n, double *a, double *b)
{
    double *w = calloc(n ? n : 1, sizeof *w);
    double sse = 0;
    if (w == NULL) {
        *a = y[0];
        *b = 0;
        return INFINITY;
    }
    for (size_t i = 0; i < n; i++) {
        double r = e ? fmax(e[i], 0.01) : 1.0;
        w[i] = 1.0 / (y[i] * y[i] * r * r);
    }
    if (fc__fit_line(x, y, w, n, a, b) != 0) {
        *b = 0;
        *a = 0;
        double sw = 0;
        for (size_t i = 0; i < n; i++) {
            *a += w[i] * y[i];
            sw += w[i];
        }
        *a /= sw;
    }
    if (*a < 0) {
        /* Through the origin: b = sum w x y / sum w x x. */
        double num = 0, den = 0;
        for (size_t i = 0; i < n; i++) {
            num += w[i] * x[i] * y[i];
            den += w[i] * x[i] * x[i];
        }
        *a = 0;
        *b = den > 0 ? num / den : 0;
    }
    if (*b < 0) {
        double num = 0, den = 0;
        for (size_t i = 0; i < n; i++) {
            num += w[i] * y[i];
            den += w[i];
        }
        *b = 0;
        *a = num / den;
    }
    for (size_t i = 0; i < n; i++) {
        double r = (*a + *b * x[i] - y[i]) / y[i];
        sse += r * r;
    }
    free(w);
    return sse;
}

/* The fewest points of a segment: two always fit exactly, so a segment of two would explain any
 * bump of noise (a window-growth blip of TCP) as a regime of its own. */
#define MINPTS 3

int fc__fit_segments(const double *x, const double *y, const double *eps, size_t n, double tol,
                     fc__segment *seg, size_t *nseg, uint64_t *threshold)
{
    *nseg = 0;
    *threshold = 0;
    if (n < 2)
        return FC_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!(y[i] > 0) || x[i] < 0 || (i > 0 && !(x[i] > x[i - 1])))
            return FC_EINVAL;
    /* cost[i][j]: relative SSE of one segment over points i .. j-1 (at least MINPTS points).
     * best[s][j]: the least cost of s + 1 segments covering points 0 .. j-1; from[s][j] its last
     * segment's first point. n is small (a few dozen sizes), so O(S n^3) is nothing. */
    size_t S = FC_FIT_MAXSEG;
    double *cost = malloc(n * (n + 1) * sizeof *cost);
    double *best = malloc(S * (n + 1) * sizeof *best);
    size_t *from = malloc(S * (n + 1) * sizeof *from);
    int rc = 0;
    if (cost == NULL || best == NULL || from == NULL) {
        rc = FC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= n; j++) {
            double a, b;
            cost[i * (n + 1) + j] = j >= i + MINPTS ? fit_rel(x + i, y + i, eps ? eps + i : NULL, j - i, &a, &b) : INFINITY;
        }
    for (size_t s = 0; s < S; s++)
        for (size_t j = 0; j <= n; j++) {
            best[s * (n + 1) + j] = INFINITY;
            from[s * (n + 1) + j] = 0;
            if (s == 0) {
                best[j] = cost[j];
                continue;
            }
            for (size_t i = MINPTS; i + MINPTS <= j; i++) {
                double c = best[(s - 1) * (n + 1) + i] + cost[i * (n + 1) + j];
                if (c < best[s * (n + 1) + j]) {
                    best[s * (n + 1) + j] = c;
                    from[s * (n + 1) + j] = i;
                }
            }
        }
    /* The fewest segments that explain the data: add one only while it pays clearly. */
    size_t s = 0;
    while (s + 1 < S) {
        double now = sqrt(best[s * (n + 1) + n] / (double)n), next = sqrt(best[(s + 1) * (n + 1) + n] / (double)n);
        if (!(now > tol) || !(next < now * (2.0 / 3.0)))
            break;
        s++;
    }
    /* Walk the breaks back, then fit each segment for good. */
    size_t start[FC_FIT_MAXSEG + 1];
    start[s + 1] = n;
    for (size_t t = s + 1; t-- > 0;)
        start[t] = t == 0 ? 0 : from[t * (n + 1) + start[t + 1]];
    double bestjump = 0, bestslope = 0;
    uint64_t at_jump = 0, at_slope = 0;
    for (size_t t = 0; t <= s; t++) {
        size_t i = start[t], j = start[t + 1];
        double a, b, e = 0;
        fit_rel(x + i, y + i, eps ? eps + i : NULL, j - i, &a, &b);
        for (size_t q = i; eps && q < j; q++)
            e = fmax(e, eps[q]);
        seg[t] = (fc__segment){.lo = t == 0 ? 0 : (uint64_t)x[i],
                               .hi = t == s ? UINT64_MAX : (uint64_t)x[j],
                               .latency = a, .per_byte = b, .eps = e};
        if (t > 0) {
            double left = seg[t - 1].latency + seg[t - 1].per_byte * x[i];
            double right = a + b * x[i];
            double jump = (right - left) / left;
            double slope = fabs(b - seg[t - 1].per_byte) / fmax(fmax(b, seg[t - 1].per_byte), 1e-300);
            if (jump > bestjump) {
                bestjump = jump;
                at_jump = (uint64_t)x[i];
            }
            if (slope > bestslope) {
                bestslope = slope;
                at_slope = (uint64_t)x[i];
            }
        }
    }
    *nseg = s + 1;
    *threshold = bestjump > tol ? at_jump : at_slope;
out:
    free(cost);
    free(best);
    free(from);
    return rc;
}

/* ---- flow cuts ---------------------------------------------------------------------------------- */

int fc__fit_cut(const double *t, size_t k, double t_alone, double latency, double tol, double after,
                double *alpha)
{
    if (k == 0 || !(t_alone > 0))
        return FC_EINVAL;
    /* The latency is paid once whatever the conflict; keep at least half of the lone time as the
     * part that moves data, so that a mismeasured latency cannot blow the ratios up. */
    double lat = fmin(fmax(latency, 0), 0.5 * t_alone);
    double work = t_alone - lat, first = INFINITY;
    for (size_t i = 0; i < k; i++) {
        if (!(t[i] > 0))
            return FC_EINVAL;
        first = fmin(first, fmax(t[i] - lat, 1e-300));
    }
    for (size_t i = 0; i < k; i++) {
        double d = fmax(t[i] - lat, 1e-300);
        if (d <= first * (1 + tol)) {
            alpha[i] = d / work - 1;
            continue;
        }
        /* It moved first / (1 + a) of its work during the conflict and the rest, at 1 / (1 + after),
         * in d - first: first / (1 + a) = work - (d - first) / (1 + after). */
        double done = work - (d - first) / (1 + after);
        alpha[i] = done > first / (1 + FC_FIT_ALPHA_MAX) ? first / done - 1 : FC_FIT_ALPHA_MAX;
    }
    return 0;
}

/* ---- Gropp's max-rate model --------------------------------------------------------------------- */

double fc__gropp_time(const fc__maxrate *m, unsigned k, double n)
{
    double r = fmin(m->r_nic, m->r_core_base + (double)(k ? k - 1 : 0) * m->r_core_incr);
    return m->s + (double)k * n / r;
}

/* One way of splitting the k into core-bound and NIC-bound ones, and how well it fits. */
struct cand {
    double nic, cb, ci, rms;
    unsigned fixed;
};

static int uint_cmp(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

int fc__fit_maxrate(const unsigned *k, const double *bytes, const double *t, size_t n, fc__maxrate *out,
                    unsigned *fixed)
{
    int rc = 0;
    unsigned *ks = malloc((n ? n : 1) * sizeof *ks);
    double *rate = malloc((n ? n : 1) * sizeof *rate), *xs = malloc((n ? n : 1) * sizeof *xs),
           *ys = malloc((n ? n : 1) * sizeof *ys);
    struct cand *cand = malloc((n + 1) * sizeof *cand);
    size_t m = 0;
    *fixed = 0;
    if (ks == NULL || rate == NULL || xs == NULL || ys == NULL || cand == NULL) {
        rc = FC_ENOMEM;
        goto out;
    }
    if (n == 0) {
        rc = FC_EINVAL;
        goto out;
    }
    memcpy(ks, k, n * sizeof *ks);
    fc__sort(ks, n, sizeof *ks, uint_cmp);
    for (size_t i = 0; i < n; i++)
        if ((i == 0 || ks[i] != ks[m - 1]) && ks[i] > 0)
            ks[m++] = ks[i];
    if (m == 0) {
        rc = FC_EINVAL;
        goto out;
    }
    /* Per k: time linear in the size; rate = k / slope, intercepts averaged into s. */
    double s = 0, sn = 0;
    for (size_t q = 0; q < m; q++) {
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
            if (k[i] == ks[q]) {
                xs[c] = bytes[i];
                ys[c] = t[i];
                c++;
            }
        double a, b;
        fit_rel(xs, ys, NULL, c, &a, &b);
        if (c < 2 || !(b > 0)) {
            rc = FC_EINVAL;
            goto out;
        }
        rate[q] = (double)ks[q] / b;
        s += (double)c * a;
        sn += (double)c;
    }
    s /= sn;
    /* Rates: the first p of the k are core-bound, the rest NIC-bound. */
    double best_rms = INFINITY;
    for (size_t p = 0; p <= m; p++) {
        struct cand c = {0};
        if (p < m) {
            for (size_t q = p; q < m; q++)
                c.nic += rate[q];
            c.nic /= (double)(m - p);
        }
        if (p >= 2) {
            for (size_t q = 0; q < p; q++)
                xs[q] = (double)(ks[q] - 1);
            if (fc__fit_line(xs, rate, NULL, p, &c.cb, &c.ci) != 0) {
                c.rms = INFINITY;
                cand[p] = c;
                continue;
            }
        } else if (p == 1) {
            c.cb = rate[0];
            c.fixed |= FC_FIT_FIXED_CORE_INCR;
            c.ci = p < m ? fmax(0, (c.nic - c.cb) / (double)(ks[1] - 1)) : 0;
        } else {
            /* NIC-bound from the first flow: the cores were never seen. */
            c.cb = c.nic;
            c.ci = 0;
            c.fixed |= FC_FIT_FIXED_CORE_BASE | FC_FIT_FIXED_CORE_INCR;
        }
        if (p == m) {
            c.nic = c.cb + (double)(ks[m - 1] - 1) * c.ci;
            c.fixed |= FC_FIT_FIXED_NIC;
        }
        double sse = 0;
        for (size_t q = 0; q < m; q++) {
            double r = fmin(c.nic, c.cb + (double)(ks[q] - 1) * c.ci);
            sse += (r / rate[q] - 1) * (r / rate[q] - 1);
        }
        c.rms = c.cb > 0 && c.nic > 0 ? sqrt(sse / (double)m) : INFINITY;
        best_rms = fmin(best_rms, c.rms);
        cand[p] = c;
    }
    /* The simplest split (fewest core-bound k) within two percent of the best explains the data
     * as well as the noise allows. */
    size_t p = 0;
    while (p < m && !(cand[p].rms <= best_rms + 0.02))
        p++;
    if (!isfinite(cand[p].rms)) {
        rc = FC_EINVAL;
        goto out;
    }
    *out = (fc__maxrate){.s = fmax(s, 0), .r_nic = cand[p].nic, .r_core_base = cand[p].cb,
                         .r_core_incr = cand[p].ci};
    *fixed = cand[p].fixed;
    double sse = 0;
    for (size_t i = 0; i < n; i++) {
        double r = fc__gropp_time(out, k[i], bytes[i]) / t[i] - 1;
        sse += r * r;
    }
    out->eps = sqrt(sse / (double)n);
out:
    free(ks);
    free(rate);
    free(xs);
    free(ys);
    free(cand);
    return rc;
}

/* ---- Hager & Wellein's IMB multi-mode ping-pong ------------------------------------------------- */

double fc__imb_tp(const fc__imb *m, double x)
{
    return x / m->bandwidth;
}

double fc__imb_beta(const fc__imb *m, double x)
{
    return x < m->chunk ? 1.0 : x / m->chunk;
}

double fc__imb_n(const fc__imb *m, double x)
{
    if (x <= 0)
        return m->msgs_per_sample;
    return fmin(m->msgs_per_sample, fmax(1.0, floor(m->overall_vol / x)));
}

double fc__imb_tb(const fc__imb *m, double x)
{
    double n = fc__imb_n(m, x);
    /* Equation (5). */
    return fc__imb_tp(m, x) * (4 * n - (2 * n - 1) / fc__imb_beta(m, x)) + m->latency * (4 * n - 1);
}

double fc__imb_bandwidth(const fc__imb *m, double x)
{
    return 4 * x * fc__imb_n(m, x) / fc__imb_tb(m, x);
}

/* For one chunk size: least squares of the measured T_b over p = x (4n - (2n-1)/beta) and
 * q = 4n - 1, relative weights. Returns the relative RMS residual of the bandwidths. */
static double imb_fit_chunk(const double *x, const double *b, size_t n, fc__imb *m)
{
    double spp = 0, spq = 0, sqq = 0, spy = 0, sqy = 0;
    for (size_t i = 0; i < n; i++) {
        double nn = fc__imb_n(m, x[i]), y = 4 * x[i] * nn / b[i], w = 1 / (y * y);
        double p = x[i] * (4 * nn - (2 * nn - 1) / fc__imb_beta(m, x[i])), q = 4 * nn - 1;
        spp += w * p * p;
        spq += w * p * q;
        sqq += w * q * q;
        spy += w * p * y;
        sqy += w * q * y;
    }
    double det = spp * sqq - spq * spq, u, t1;
    if (!(fabs(det) > 0))
        return INFINITY;
    u = (spy * sqq - sqy * spq) / det;
    t1 = (spp * sqy - spq * spy) / det;
    if (t1 < 0) {
        t1 = 0;
        u = spy / spp;
    }
    if (!(u > 0))
        return INFINITY;
    m->bandwidth = 1 / u;
    m->latency = t1;
    double sse = 0;
    for (size_t i = 0; i < n; i++) {
        double r = fc__imb_bandwidth(m, x[i]) / b[i] - 1;
        sse += r * r;
    }
    return sqrt(sse / (double)n);
}

int fc__imb_fit(const double *x, const double *b, size_t n, fc__imb *m, double *resid)
{
    if (n < 3)
        return FC_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!(x[i] > 0) || !(b[i] > 0))
            return FC_EINVAL;
    double best = INFINITY;
    fc__imb keep = *m, trial = *m;
    /* Candidates: every measured size, the geometric means of every pair of neighbours in sorted
     * order, and one above them all (no chunking seen). */
    double *c = malloc((2 * n + 1) * sizeof *c);
    if (c == NULL)
        return FC_ENOMEM;
    size_t nc = 0;
    double xmax = 0;
    for (size_t i = 0; i < n; i++) {
        c[nc++] = x[i];
        xmax = fmax(xmax, x[i]);
        double next = INFINITY;
        for (size_t j = 0; j < n; j++)
            if (x[j] > x[i] && x[j] < next)
                next = x[j];
        if (isfinite(next))
            c[nc++] = sqrt(x[i] * next);
    }
    c[nc++] = 2 * xmax;
    for (size_t i = 0; i < nc; i++) {
        trial.chunk = c[i];
        double r = imb_fit_chunk(x, b, n, &trial);
        if (r < best) {
            best = r;
            keep = trial;
        }
    }
    free(c);
    if (!isfinite(best))
        return FC_EINVAL;
    *m = keep;
    if (resid)
        *resid = best;
    return 0;
}
