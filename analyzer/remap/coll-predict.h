/* analyzer/remap/coll-predict.h: each model's prediction of each collective call's duration: the
 * replay (replay.h) of the call's expanded messages alone, every member starting at its observed
 * entry, set against the observed duration (the first entry to the last exit). Internal to
 * libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_COLL_PREDICT_H
#define FLOWCUT_ANALYZER_COLL_PREDICT_H

#include <stddef.h>
#include "collective/calls.h"
#include "match/match.h"
#include "model/evaluate.h"
#include "model/model.h"

typedef struct fc__coll_pred {
    size_t ncalls;               /* the calls of the fc__colls predicted from (all of them) */
    unsigned nmodels;
    unsigned model[FC_NMODELS];  /* as the prediction's */
    double *obs;                 /* per call: observed seconds, NaN for a call not predicted (no
                                    message, or members missing) */
    double *pred[FC_NMODELS];    /* pred[j][i]: model[j]'s seconds for call i, NaN likewise */
    fc__errors err[FC_NMODELS];  /* over the calls predicted; best and worst are call indices */
    size_t npredicted;
} fc__coll_pred;

/* Predicts every complete call of c (all members present) that sends messages, under each model
 * of p with p's profile and m's eager threshold and nodes. On success *out is owned by the caller
 * (fc__coll_pred_free). Returns 0, FC_ENOMEM or a model's FC_EINVAL (message in fc_errmsg). */
int fc__coll_predict(const fc__colls *c, const fc__match *m, const fc__prediction *p, fc__coll_pred **out);

/* Frees cp; NULL is a no-op. */
void fc__coll_pred_free(fc__coll_pred *cp);

#endif /* FLOWCUT_ANALYZER_COLL_PREDICT_H */
