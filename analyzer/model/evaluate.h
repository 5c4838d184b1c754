/* analyzer/model/evaluate.h: the predicted-versus-observed part of an analysis: the platform profile
 * it uses (read with --platform, or fitted from the trace itself), each model's prediction of
 * every inter-node flow, and the errors of Martinasso & Mehaut's Table 3 per model. Internal to
 * libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_PREDICTION_H
#define FLOWCUT_ANALYZER_PREDICTION_H

#include <stddef.h>
#include <stdint.h>
#include "conflict/intervals.h"
#include "match/match.h"
#include "model/model.h"
#include "model/profile.h"

/* Flows whose whole life lies under one conflict label that self-calibration needs, per (kind,
 * k), before it trusts the median flow cut they show; with fewer it assumes the cut. */
#define FC_SELFCAL_MIN_FLOWS 3
/* The latency self-calibration takes when the network flows of a segment all have one size, which
 * shows latency and data time only together, and no eager segment gives one: negligible against
 * the time of flows of a size large enough to be network flows. Seconds. */
#define FC_SELFCAL_LATENCY_ASSUMED 1e-6

typedef struct fc__prediction {
    fc__profile *profile;    /* owned */
    char platform[512];      /* the --platform file, or "" when self-calibrated */
    char note[512];          /* how the profile was obtained, one line */
    unsigned nmodels;
    unsigned model[FC_NMODELS];  /* the models run, in the order given */
    double *pred[FC_NMODELS];    /* pred[j][i]: model[j]'s duration of inter-node flow i (owned) */
    fc__errors err[FC_NMODELS];
    double *iv_err[FC_NMODELS];  /* iv_err[j][v]: mean absolute error (%) of the flows active in
                                    interval v under model[j], NaN for none (owned) */
    char skipped[256];           /* models left out of "all" because the profile lacks their
                                    figures, with the reason; "" when none */
    int judged;                  /* err and iv_err count the flows fc__prediction_judge named */
} fc__prediction;

/* Fits a profile to the trace's own flows (self-calibration) into a new *out owned by the caller:
 * inter-node latency and per-byte cost by least squares over the flows never in conflict
 * (separately below and above the eager threshold; when fewer than FC_SELFCAL_MIN_FLOWS ran
 * alone, over every flow with its time divided by the time-weighted mean number of flows that
 * shared its NIC direction, a fair share's time alone), intra-node ones over the intra-node
 * messages, and a flow cut per (kind, k) as the median over the flows that spent their whole life
 * under that label of (observed - latency) / (bytes * per_byte) - 1, when at least
 * FC_SELFCAL_MIN_FLOWS such flows exist; other (kind, k) seen in the trace, and k = 2 of every
 * kind, get assumed cuts (k - 1 for same-direction conflicts, a fair share; 0 for mixed ones, a full-duplex NIC). The
 * max-rate parameters become s = latency and r_nic = r_core_base = 1/per_byte, r_core_incr = 0.
 * Writes one line saying what was fitted and what assumed into note. Returns 0, FC_EINVAL (no
 * flow to fit: message in fc_errmsg) or FC_ENOMEM. */
int fc__selfcal(const fc__match *m, const fc__intervals *iv, fc__profile **out, char *note, size_t n);

/* Self-calibration that fits network flows only (observe.h): ob holds the parts the events give
 * (fc__observe_new). A first fit, to the flows whose ends both took part in most of their time
 * (with that time; on a machine with more ranks than cores, rendezvous ones only), classifies the
 * flows (ob is left so classified); the segments are then fitted again to the network flows as
 * fc__selfcal fits its flows, each with a latency above 0 and a rate some network flow reached,
 * and the flow cuts to the network flows that lived under one label, between 0 and k - 1 (1 for
 * mixed). Collectives' steps, whose times are inferred, are fitted only when fewer than
 * FC_SELFCAL_MIN_FLOWS point-to-point flows qualify, and never on a machine with more ranks than
 * cores. With fewer than FC_SELFCAL_MIN_FLOWS network flows, or no positive latency, *out is NULL
 * and note says why: the models are left out. Returns 0 or FC_ENOMEM. */
struct fc__observation;
int fc__selfcal_observed(const fc__match *m, const fc__intervals *iv, struct fc__observation *ob,
                         fc__profile **out, char *note, size_t n);

/* Runs models[0 .. n) on the inter-node flows of m with profile p (ownership passes to the
 * result, also on failure). With `all` set, models the profile cannot serve are left out and
 * named in skipped; otherwise such a model is an FC_EINVAL error. iv (full or lean) must be built
 * from m->flows[0 .. m->ninter): the errors per interval come from sweeping those flows again, one
 * for each of iv's intervals. Returns 0, FC_EINVAL (also: a flow's time is not finite, or the
 * flows give more intervals than iv) or FC_ENOMEM; *out is owned by the caller
 * (fc__prediction_free). */
int fc__prediction_run(const fc__match *m, const fc__intervals *iv, fc__profile *p, const unsigned *models,
                       unsigned n, int all, fc__prediction **out);

/* Recomputes the errors of pr (per model and per interval) over the inter-node flows i of m with
 * judged[i] set, the predictions staying those of every flow. Returns 0 or FC_ENOMEM (pr's
 * errors then partly recomputed). */
int fc__prediction_judge(fc__prediction *pr, const fc__match *m, const fc__intervals *iv, const uint8_t *judged);

/* Frees everything the prediction owns; NULL is a no-op. */
void fc__prediction_free(fc__prediction *pr);

#endif /* FLOWCUT_ANALYZER_PREDICTION_H */
