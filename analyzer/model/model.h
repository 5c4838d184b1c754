/* analyzer/model/model.h: contention models behind one interface, and the fluid simulation of messages
 * crossing a platform that every prediction uses: the asynchronous, heterogeneous algorithm of
 * Martinasso & Mehaut (section 5.3) for the observed flows of a trace (fc__predict), and the
 * replay of `flowcut remap`, which starts messages as its simulated ranks reach them.
 *
 * Models (the rate each in-flight message moves its data at, re-solved whenever the set of
 * messages in flight changes):
 *   linear     piecewise latency/bandwidth from the profile, no contention;
 *   flowcut    the report's flow cuts: each inter-node message labelled by the rules of
 *              intervals.h (R1-R3, generalised to k flows) moves at 1 / (1 + alpha) of its
 *              uncontended rate, alpha from the profile for its conflict kind and k;
 *   maxrate    Gropp's max-rate: k messages sharing a NIC direction share
 *              min(r_nic, r_core_base + (k - 1) r_core_incr), with the latency term s;
 *   fairshare  each NIC direction's bandwidth shared equally by the messages using it (max-min
 *              fair), the baseline every simulator offers.
 * Intra-node messages always move at the profile's intra-node figures and never contend.
 *
 * A message is a latency phase (the segment's latency; s for maxrate's inter-node messages),
 * which uses no bandwidth and is never slowed, then a data phase of bytes * per_byte seconds when
 * alone (bytes / min(r_nic, r_core_base) for maxrate): only messages in their data phase contend.
 * Uncontended, a message takes exactly fc__profile_time. model/netsim.c explains the rest.
 *
 * Internal to libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_MODEL_H
#define FLOWCUT_ANALYZER_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "match/flow.h"
#include "match/match.h"
#include "model/profile.h"

#define FC_MODELS(X)                                                                               \
    X(LINEAR, 0, "linear")                                                                        \
    X(FLOWCUT, 1, "flowcut")                                                                      \
    X(MAXRATE, 2, "maxrate")                                                                      \
    X(FAIRSHARE, 3, "fairshare")

enum fc__model_id {
#define FC__X(name, num, text) FC_MODEL_##name = num,
    FC_MODELS(FC__X)
#undef FC__X
    FC_NMODELS
};

/* The name of a model ("linear" ...), or "unknown". */
const char *fc__model_name(unsigned model);
/* The model called name, or -1. */
int fc__model_parse(const char *name);
/* 1 when the profile holds what the model needs (segments; cuts for flowcut; max-rate parameters
 * for maxrate), else 0 with the reason in fc_errmsg, without the model's name (the caller adds
 * it). A profile with cuts for only some conflict kinds is usable: the others cost nothing. */
int fc__model_usable(const fc__profile *p, unsigned model);

/* ---- fluid simulation --------------------------------------------------------------------------- */

typedef struct fc__net fc__net;

/* A new simulation at time 0 with nothing in flight, for model on the platform p (not copied:
 * p must outlive the simulation, and must not change while it runs: the flowcut model remembers
 * the flow cuts it has read from p). Returns 0, FC_EINVAL (unknown or unusable model, message in
 * fc_errmsg) or FC_ENOMEM; *out is owned by the caller (fc__net_free). */
int fc__net_create(const fc__profile *p, unsigned model, fc__net **out);
/* Frees the simulation; NULL is a no-op. */
void fc__net_free(fc__net *n);

/* Errors: when re-solving the rates fails (out of memory inside fc__intervals_label_set), the
 * simulation stops for good: fc__net_next returns NAN and fc__net_start, fc__net_pop,
 * fc__net_advance and fc__net_settle return the code; only fc__net_free is then useful. Not thread-safe: fc__net_next memoizes its look-ahead
 * inside the handle although it takes it const. */

/* The simulation's current time. */
double fc__net_now(const fc__net *n);

/* Starts a message of `bytes` from node src to node dst (src == dst: intra-node) at time t, which
 * must satisfy fc__net_now(n) <= t <= fc__net_next(n): the simulation first advances to t. key is
 * the caller's name for the message, given back when it completes. Returns 0, FC_EINVAL (t out
 * of range) or FC_ENOMEM. */
int fc__net_start(fc__net *n, double t, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t key);

/* fc__net_start for a message of connection conn: a non-zero number the caller gives every message
 * of one pair of ranks (one sender, one receiver). When the profile's connection record says
 * serial, a message of a connection moves no data while an earlier-started one of the same
 * connection still does (models other than linear): the connection is one flow for the NICs, its
 * messages in the order they started. conn 0 is no connection, as fc__net_start. */
int fc__net_start_conn(fc__net *n, double t, uint32_t src, uint32_t dst, uint64_t conn, uint64_t bytes,
                       uint64_t key);

/* The time at which the next message in flight completes if none is started before, or INFINITY
 * when nothing is in flight (NAN after a failure, above). */
double fc__net_next(const fc__net *n);

/* Advances to fc__net_next(n) and removes the message that completes then (the lowest key on a
 * tie: completion times computed as equal doubles), storing its key in *key and the time in *t.
 * Returns 1, 0 when nothing is in flight, or a negative FC_E* code after a failure (above): loop
 * with `while ((rc = fc__net_pop(...)) > 0)`. */
int fc__net_pop(fc__net *n, double *t, uint64_t *key);

/* Advances the simulation to time until (INFINITY: until nothing is left in flight) and, when a
 * message completes no later than until, stops at the first completion and removes that message
 * as fc__net_pop does (*t, *key). Returns 1 then, 0 once the simulation is at until with no
 * completion left at or before it (fc__net_start(n, until, ...) is then valid), or a negative
 * FC_E* code: FC_EINVAL when until is before fc__net_now(n) or NAN, or the failure above. The
 * same figures as fc__net_next and fc__net_pop, without simulating the stretch up to the next
 * completion twice when a message starts before it: loop with
 * `while ((rc = fc__net_advance(n, t, ...)) > 0)` before starting a message at t. */
int fc__net_advance(fc__net *n, double until, double *t, uint64_t *key);

/* For a caller whose own events interleave with the completions, a completion at the time of
 * one of its events coming after it (a replay's ranks): runs the simulation's events up to time
 * until (latency ends and the re-solves they cause), stopping at the first completion. When a
 * message has completed before until (or at any time, with until = INFINITY), removes it as
 * fc__net_pop does (*t, *key) and returns 1; otherwise returns 0, and a completion at until itself
 * waits for the next call. The clock is left where the events left it, so the figures are those
 * of fc__net_next, fc__net_pop and fc__net_start called in the same order, without the stretch up
 * to the next completion simulated twice; fc__net_start(n, until, ...) is valid after a return of
 * 0 when until >= fc__net_now(n) (an earlier until runs nothing and returns 0). Returns a negative
 * FC_E* code on failure (above), FC_EINVAL for until = NAN. */
int fc__net_settle(fc__net *n, double until, double *t, uint64_t *key);

/* Removes the message key from the simulation unfinished, at the simulation's time (a caller that
 * knows a message ends no later than some time, whatever the model says: advance to that time with
 * fc__net_advance first), and re-solves the rates of the others. Returns 1, 0 when no message of
 * that key is in flight, FC_EINVAL while a completion waits to be popped, or the failure above. */
int fc__net_cancel(fc__net *n, uint64_t key);

/* ---- predicted versus observed ----------------------------------------------------------------- */

/* The asynchronous, heterogeneous prediction of every inter-node flow of m (flows[0 .. ninter)):
 * each starts at its observed start with its size and moves as the model allows, interval by
 * interval, until it ends. Stores the predicted duration (end - start, seconds) of flow i in
 * pred[i] (an array of m->ninter the caller owns; NAN for a flow the simulation never completes,
 * which the error statistics and the reports leave out). Returns 0, FC_EINVAL or FC_ENOMEM. */
int fc__predict(const fc__match *m, const fc__profile *p, unsigned model, double *pred);

/* Errors of a prediction, following the report's Table 3. Flows with an observed time <= 0 or
 * not finite, or a prediction that is not finite, are left out; with none left every field is
 * 0. */
typedef struct fc__errors {
    size_t n;            /* flows compared */
    double mean_abs_pct; /* mean over flows of |pred - obs| / obs, in % */
    double global_pct;   /* |sum pred - sum obs| / sum obs, in % */
    double p95_abs_pct;  /* 95th percentile of the per-flow absolute error (nearest rank: the
                            ceil(0.95 n)-th smallest), in %; NAN when out of memory to sort */
    double max_abs_pct;
    uint64_t best, worst; /* ids of the flows with the smallest and largest absolute error (the
                             first in index order on a tie) */
    double best_abs_pct;
} fc__errors;

/* Compares pred[i] with obs[i] for i < n, ids[i] naming flow i (NULL: ids are 0 .. n-1). */
void fc__errors_compute(const double *obs, const double *pred, const uint64_t *ids, size_t n,
                        fc__errors *out);

#endif /* FLOWCUT_ANALYZER_MODEL_H */
