/* analyzer/report/shared.h: what the report writers share beyond report.h: the names of conflict
 * kinds and call sites, the flows put in id order, node names, the end of a document. Private to
 * analyzer/report/.
 *
 * The writers depend one way, each only on those before it: this header; observation.c;
 * predictions.c and collectives.c; report.c (the JSON document, the warnings, the flows in order);
 * then csv.c, text.c, html.c and chrome.c. info.c and remap.c stand apart. */
#ifndef FLOWCUT_ANALYZER_REPORT_SHARED_H
#define FLOWCUT_ANALYZER_REPORT_SHARED_H

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "util/internal.h"
#include "util/numfmt.h"
#include "report/report.h"
#include "conflict/sweep.h"

/* ---- names ------------------------------------------------------------------------------------ */

/* The name of an FC_CONFLICT_* kind ("none", "outgoing", "incoming", "mixed-in", "mixed-out"),
 * or "unknown". */
static inline const char *fc__conflict_name(uint32_t kind)
{
    static const char *const names[] = {
#define FC__X(name, num, text) [num] = text,
        FC_CONFLICT_KINDS(FC__X)
#undef FC__X
    };
    return kind < sizeof names / sizeof names[0] && names[kind] ? names[kind] : "unknown";
}

/* The text of call site `site` of world rank `rank`, or NULL (site 0, no symbols, unknown id). */
static inline const char *fc__report_site(const fc__analysis *a, uint32_t rank, uint64_t site)
{
    if (a->syms == NULL || site == 0)
        return NULL;
    long i = fc_trace_find(a->trace, rank);
    return i < 0 ? NULL : fc_symbols_site(a->syms, (size_t)i, site);
}

/* ---- flows in order of id ------------------------------------------------------------------ */

/* The streamed documents list the flows by id, but the sweep hands each over when it ends: a flow
 * waits here, with a copy of its label history, until every lower id has been written, so that
 * what is held is the flows in flight, not the trace. */
typedef struct held {
    int used;
    fc__flow fl;
    fc__label_run *runs; /* nruns of them: in inl when they fit, else malloc'd */
    size_t nruns;
    fc__label_run inl[4]; /* most flows change label a few times: no allocation for them */
} held;

typedef struct idorder {
    held *ring; /* flows of ids base .. base + cap - 1 at [id & (cap - 1)] */
    size_t cap;
    uint64_t base;
    void (*put)(void *arg, const fc__flow *fl, const fc__label_run *runs, size_t nruns);
    void *arg;
} idorder;

/* ---- report/report.c ----------------------------------------------------------------------------- */

const char *fc__rp_node_name(const fc__match *m, uint32_t node);

int fc__rp_finish(FILE *f);

int fc__rp_order_init(idorder *o, void (*put)(void *, const fc__flow *, const fc__label_run *, size_t), void *arg);

void fc__rp_order_free(idorder *o);

/* Hands fl to put now if it is the next id, with every held flow that follows; else holds it.
 * Returns 0 or FC_ENOMEM (message set). */
int fc__rp_order_flow(idorder *o, const fc__flow *fl, const fc__label_run *runs, size_t nruns);

/* The JSON document in pieces, for the HTML page: the head ("{" up to eager_threshold_source),
 * one flow with its label history from a->iv, and the tail from "clock" to the closing "}". */
void fc__rp_json_head(FILE *f, const fc__analysis *a);
void fc__rp_json_flow(fc__obuf *o, const fc__analysis *a, const fc__flow *fl);
void fc__rp_json_tail(FILE *f, const fc__analysis *a);

#endif /* FLOWCUT_ANALYZER_REPORT_SHARED_H */
