/* analyzer/model/fit.h: least-squares fits of the platform models to measurements, and the papers'
 * model curves they fit: piecewise-linear one-way times with the eager/rendezvous threshold found
 * from the data, flow cuts from synchronous conflicts (Martinasso & Mehaut, section 6.1), Gropp's
 * max-rate model, and Hager & Wellein's IMB multi-mode ping-pong model. Pure computation: no I/O,
 * no MPI. Internal to libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_FIT_H
#define FLOWCUT_ANALYZER_FIT_H

#include <stddef.h>
#include <stdint.h>
#include "model/profile.h"

/* ---- piecewise-linear one-way times ------------------------------------------------------------ */

/* The most segments fc__fit_segments returns. */
#define FC_FIT_MAXSEG 4

/* Fits up to FC_FIT_MAXSEG segments to the n points (x[i] bytes, y[i] seconds), x strictly
 * increasing, minimizing the relative squared error (every size counts alike, not only the large
 * ones); inside a segment each point is weighted by the inverse variance of its mean, so that a
 * size measured to 0.5 % steers the line more than one measured to 30 %. Breaks fall between
 * measured sizes, at the first size of the new segment; a segment spans at least three points
 * (when there are). A segment is added only while it lowers the relative RMS error by more than a
 * third and that error is still
 * above tol (the measurement's own relative error, e.g. 0.03). eps[i] (may be NULL) is each
 * point's relative standard error; a segment's eps is the largest of its points'. Intercepts and
 * slopes are kept non-negative (a negative one is fixed at 0 and the other refitted). The last
 * segment ends at UINT64_MAX, the first starts at 0.
 * *threshold is the break where time jumps most (relative to the left segment's prediction) or,
 * when no break jumps by more than tol, the one where the slope changes most; 0 with one segment.
 * Returns 0 or FC_EINVAL (n < 2, x not increasing, y not positive). */
int fc__fit_segments(const double *x, const double *y, const double *eps, size_t n, double tol,
                     fc__segment *seg, size_t *nseg, uint64_t *threshold);

/* Weighted least squares y ~ a + b x with weights w (NULL: all 1). Returns 0, or FC_EINVAL when
 * fewer than two distinct x carry weight. */
int fc__fit_line(const double *x, const double *y, const double *w, size_t n, double *a, double *b);

/* ---- flow cuts (Martinasso & Mehaut, section 6.1) ----------------------------------------------- */

/* Derives the flow cuts of k flows that started together with equal sizes, from their measured
 * times t[i] and the time t_alone of one such flow without conflict; latency is the part of both
 * that no conflict stretches (the profile's latency at that size; 0 to ignore it). While all k
 * flows run, flow i moves at 1 / (1 + alpha[i]). Flows that end within tol (relative) of the
 * first end "end together": alpha = t_i / t_alone - 1. A flow that outlives them finished part of
 * its data during the conflict and the rest afterwards at 1 / (1 + after) (the cut of the smaller
 * conflict left behind; 0 when it runs alone), which gives the report's linear equation: with
 * t_1 = T and t_2 = 1.75 T, alpha = (0, 3). A flow that made no progress at all during the
 * conflict gets FC_FIT_ALPHA_MAX. Returns 0 or FC_EINVAL (k = 0, times not positive). */
#define FC_FIT_ALPHA_MAX 1000.0
int fc__fit_cut(const double *t, size_t k, double t_alone, double latency, double tol, double after,
                double *alpha);

/* ---- Gropp's max-rate model --------------------------------------------------------------------- */

/* The time for k flows of n bytes each leaving one node for another:
 * s + k n / min(r_nic, r_core_base + (k - 1) r_core_incr). */
double fc__gropp_time(const fc__maxrate *m, unsigned k, double n);

/* Which parameters the data could not determine (bits of fc__fit_maxrate's *fixed). */
#define FC_FIT_FIXED_NIC 1u       /* no k saturated the NIC: r_nic is the largest rate seen */
#define FC_FIT_FIXED_CORE_BASE 2u /* one flow already saturates: r_core_base is a lower bound */
#define FC_FIT_FIXED_CORE_INCR 4u /* fewer than two unsaturated k: r_core_incr is the least
                                     increment that reaches the saturated rate (0 if none does) */

/* Fits Gropp's model to n measurements: time t[i] of k[i] flows of bytes[i] each. For each k the
 * times are linear in the size, giving that k's aggregate rate R_k = k / slope and an intercept;
 * s is the weighted mean of the intercepts. Then R_k ~ min(r_nic, r_core_base + (k-1) r_core_incr)
 * by least squares over every split of the k into core-bound and NIC-bound ones. Parameters the
 * data cannot determine are set as the FC_FIT_FIXED_* comments say and flagged in *fixed.
 * out->eps is the relative RMS residual of the fitted times. Returns 0 or FC_EINVAL (fewer than
 * two sizes for some k, no data). */
int fc__fit_maxrate(const unsigned *k, const double *bytes, const double *t, size_t n, fc__maxrate *out,
                    unsigned *fixed);

/* ---- Hager & Wellein's IMB multi-mode ping-pong model -------------------------------------------- */

/* IMB's standard settings (IMB_settings.h): OVERALL_VOL = 40 MB (40 * 2^20 bytes), MSGSPERSAMPLE = 1000. */
#define FC_IMB_OVERALL_VOL 41943040.0
#define FC_IMB_MSGSPERSAMPLE 1000.0

/* The model's parameters: chunk size C (bytes), raw unidirectional bandwidth B_r (bytes/s),
 * latency T_1 (s), and the IMB settings (the two above for a standard run). */
typedef struct fc__imb {
    double chunk, bandwidth, latency;
    double overall_vol, msgs_per_sample;
} fc__imb;

/* Equation (1): T_p(x) = x / B_r. */
double fc__imb_tp(const fc__imb *m, double x);
/* Equation (2): the chunks per message, 1 below C, x / C from C. */
double fc__imb_beta(const fc__imb *m, double x);
/* Equation (3): repetitions, min(MSGSPERSAMPLE, max(1, OVERALL_VOL / x)); IMB divides integers,
 * so the quotient is truncated; x = 0 gives MSGSPERSAMPLE. */
double fc__imb_n(const fc__imb *m, double x);
/* Equations (4)-(5): time of n(x) successive ping-pongs of two pairs on two nodes. */
double fc__imb_tb(const fc__imb *m, double x);
/* Equation (6): the aggregated bandwidth 4 x n(x) / T_b(x) (twice what IMB reports). */
double fc__imb_bandwidth(const fc__imb *m, double x);

/* Fits C, B_r and T_1 to n measurements of the aggregated bandwidth b[i] at sizes x[i] > 0 (the
 * settings are taken from *m, which receives the fit). For a given C the model's T_b is linear in
 * 1 / B_r and T_1, so each candidate C (the measured sizes and the geometric means between them)
 * gets a linear least-squares fit; the C with the smallest relative residual wins. *resid (may be
 * NULL) receives that relative RMS residual of the bandwidths. Returns 0 or FC_EINVAL. */
int fc__imb_fit(const double *x, const double *b, size_t n, fc__imb *m, double *resid);

#endif /* FLOWCUT_ANALYZER_FIT_H */
