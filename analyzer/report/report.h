/* analyzer/report/report.h: the reports of an analysis (`flowcut analyze`): a text report for a terminal,
 * and the complete JSON and CSV documents whose layout docs/json-schema.md
 * specifies field by field. Internal to libflowcut-analyzer.
 *
 * The writers only write to the FILE * they are given: they never print elsewhere, exit or close
 * it. They return 0, FC_ENOMEM, or FC_EIO when the stream reports an error (the message is then in
 * fc_errmsg). An analysis is only read, so several reports may be written from one analysis. */
#ifndef FLOWCUT_ANALYZER_REPORT_H
#define FLOWCUT_ANALYZER_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <flowcut/reader.h>
#include "match/flow.h"
#include "conflict/intervals.h"
#include "conflict/sweep.h"
#include "match/match.h"
#include "collective/calls.h"
#include "remap/coll-predict.h"
#include "model/evaluate.h"
#include "model/observe.h"

/* What one report describes. Nothing here is owned by the analysis: the caller keeps every
 * pointer valid while the report is written. */
typedef struct fc__analysis {
    const char *trace_path;   /* as given on the command line */
    const fc_trace *trace;
    const fc__match *match;    /* fc__match_trace of trace */
    const fc__intervals *iv;  /* fc__intervals_build or _build_lean of match->flows[0 ..
                                 match->ninter): the flows' label histories, each interval's span
                                 and the flow-seconds by label (no report reads an interval's
                                 flows from it: the JSON document sweeps match->flows again); JSON,
                                 CSV and predictions need it, the text report does not */
    const struct fc__summary *sum; /* the summary of the same flows (summary.h): the text report's */
    const fc_symbols *syms;   /* call-site texts, or NULL to show none */
    const char *eager_source; /* where match->eager_threshold comes from, one line */
    int mpi_assumed;          /* 1: the trace (an imported archive) does not name its MPI library,
                                 so MPICH's settings stand in for the library's: the warnings say
                                 what that assumes of the collectives */
    size_t top;               /* rows of each long list of the text report (0: all) */
    const fc__prediction *pred; /* the models' predictions, or NULL for none */
    const fc__colls *colls;   /* the collective calls, whose flows match->flows holds, or NULL */
    const fc__coll_pred *cpred; /* the models' durations of those calls, or NULL */
    const fc__observation *obs; /* what each flow's time is made of (observe.h), or NULL for none */
    size_t njudged;           /* with obs: the flows fc__report_judged counts (fc__report_count_judged) */
    /* Sweeps match->flows[0 .. match->ninter) again into ops (the JSON document's intervals),
     * returning 0 or the first error: set by the pipeline that made the analysis (analysis/), so
     * that the writers consume results and never run a stage themselves. */
    int (*sweep)(const struct fc__analysis *a, const fc__sweep_ops *ops);
} fc__analysis;

/* The text report: sections with headings and aligned columns, long lists cut to a->top rows.
 * Needs a->sum, built with the same top; a->iv only with predictions. */
int fc__report_text(FILE *f, const fc__analysis *a);
/* One JSON object (schema version 1) with every flow, intra-node message and interval. Also
 * FC_EINVAL when a flow's time is not finite (the sweep's check). */
int fc__report_json(FILE *f, const fc__analysis *a);
/* A header line and one row per message: the inter-node flows, then the intra-node ones. */
int fc__report_csv(FILE *f, const fc__analysis *a);

/* A document written while the pipeline matches the trace and sweeps its flows, without storing
 * the flows or the intervals: the pipeline calls start once the match knows the ranks and nodes,
 * gives ops to the sweep (intervals as they are found, flows once past their end) and intra the
 * intra-node messages (numbered from 0 among them), then calls the document's finish. */
typedef struct fc__stream_writer {
    void *arg;
    int (*start)(void *arg, const fc__match *m);
    fc__sweep_ops ops;
    int (*intra)(void *arg, const fc__flow *fl);
} fc__stream_writer;

/* The CSV report written that way: rows in the same order and with the same ids as
 * fc__report_csv's, the intra-node ones kept in a temporary file until the number of inter-node
 * flows is known. Without predictions (a->pred must be NULL); a->match is set at the start.
 * fc__csv_stream_new writes the header; on success *cs is owned by the caller
 * (fc__csv_stream_free, which keeps what was written). fc__csv_stream_finish, once the match
 * returned m and the sweep is finished, writes the rest. The functions return 0, FC_ENOMEM or
 * FC_EIO (the message in fc_errmsg). */
typedef struct fc__csv_stream fc__csv_stream;
int fc__csv_stream_new(FILE *out, const fc__analysis *a, fc__csv_stream **cs);
fc__stream_writer fc__csv_stream_writer(fc__csv_stream *cs);
int fc__csv_stream_finish(fc__csv_stream *cs, fc__match *m);
void fc__csv_stream_free(fc__csv_stream *cs);

/* The JSON document written that way: the same document as fc__report_json's (without
 * predictions: a->pred and a->iv are ignored). The head is written at the start; each interval as
 * the sweep finds it; the flows (in order of id) and the intra-node messages wait in temporary
 * files, copied after the intervals, and what is known only at the end follows them. Memory
 * follows the flows in flight. The functions and their errors are those of the CSV stream. */
typedef struct fc__json_stream fc__json_stream;
int fc__json_stream_new(FILE *out, const fc__analysis *a, fc__json_stream **js);
fc__stream_writer fc__json_stream_writer(fc__json_stream *js);
int fc__json_stream_finish(fc__json_stream *js, fc__match *m);
void fc__json_stream_free(fc__json_stream *js);
/* The collective calls the streamed documents describe (before their finish; NULL: none). */
void fc__json_stream_colls(fc__json_stream *js, const fc__colls *colls);

/* ---- shared by report.c (JSON, CSV) and report/text.c ----------------------------------------- */

/* The label inter-node flow id spent the most time under (the earliest on a tie; NONE with k = 1
 * for a flow never active) in *main, and its total time under a label other than NONE in
 * *conflict_s. */
void fc__report_flow_main(const fc__analysis *a, uint64_t id, fc__label *main, double *conflict_s);

/* Calls fn once per warning of the analysis (unmatched messages, clock violations, partial and
 * missing ranks, the ranks' own WARN texts), each one line without a newline, in that order. */
void fc__report_warnings(const fc__analysis *a, void (*fn)(const char *line, void *arg), void *arg);

/* The "collectives" member of the JSON document and the collective wait states' arrays, each
 * ending with ",\n" (collective/calls.h; empty lists without collectives). */
void fc__report_json_collectives(FILE *f, const fc__analysis *a);
void fc__report_json_coll_waits(FILE *f, const fc__analysis *a);
/* The text report's collective lines of its run section (nothing without collectives). */
void fc__report_text_collectives(FILE *f, const fc__analysis *a);
/* The JSON member "errors_collective" (null without predictions), ending with ",\n"; the text
 * report's predicted versus observed collective calls, per call site (nothing without). */
void fc__report_json_errors_collective(FILE *f, const fc__analysis *a);
int fc__report_text_coll_prediction(FILE *f, const fc__analysis *a);
/* The call sites of the collectives that waited most (the site of each call's lowest rank). */
void fc__report_text_coll_wait_sites(FILE *f, const fc__analysis *a);

/* Counts the calls fc__report_warnings would make. */
size_t fc__report_nwarnings(const fc__analysis *a);

/* ---- predicted versus observed (report/predictions.c) --------------------------------------------- */

/* Why the error figures are withheld, written into buf of n bytes and returned: no flow the
 * statistics count, or fewer than FC_SELFCAL_MIN_FLOWS network flows (--flows network); NULL when
 * they are given. The text and JSON reports follow it alike. */
const char *fc__report_errors_withheld(const fc__analysis *a, char *buf, size_t n);
/* The "platform" and "errors" members of the JSON document, each line ending with ",\n". Writes
 * nothing without predictions. */
void fc__report_json_prediction(FILE *f, const fc__analysis *a);
/* ", \"predicted\": {model: seconds ...}" for inter-node flow id; nothing without predictions. */
void fc__report_json_flow_predicted(FILE *f, const fc__analysis *a, uint64_t id);
/* ", \"predicted_error_pct\": {model: % ...}" for interval v; nothing without predictions. */
void fc__report_json_interval_error(FILE *f, const fc__analysis *a, size_t v);
/* The CSV header's extra columns (",predicted_MODEL" ...) and one row's values (empty for an
 * intra-node message). */
void fc__report_csv_predicted_header(FILE *f, const fc__analysis *a);
void fc__report_csv_predicted(FILE *f, const fc__analysis *a, const fc__flow *fl);
/* The text report's "predicted versus observed" section. Returns 0 or FC_ENOMEM. */
int fc__report_text_prediction(FILE *f, const fc__analysis *a);

/* ---- what the flows' times are made of (report/observation.c) ---------------------------------- */

/* Whether the error statistics count inter-node flow i (an index of a->match->flows): its class
 * makes it judged (observe.h) and it is a point-to-point message. A collective's messages have
 * inferred times: its calls are compared apart (errors_collective). 0 without an observation. */
int fc__report_judged(const fc__analysis *a, size_t i);
/* How many flows fc__report_judged counts: a->njudged with an observation, else 0. */
size_t fc__report_njudged(const fc__analysis *a);
/* The count a pipeline sets in fc__analysis.njudged: the flows of m that o judges and that are
 * point-to-point messages, in one pass (the reports ask for it once per interval). */
size_t fc__report_count_judged(const fc__match *m, const fc__observation *o);
/* The "observation" member of the JSON document, ending with ",\n"; nothing without one. */
void fc__report_json_observation(FILE *f, const fc__analysis *a);
/* ", \"observation\": {...}" for inter-node flow id; nothing without an observation. */
void fc__report_json_flow_observation(FILE *f, const fc__analysis *a, uint64_t id);
/* The members the clock checks add to the JSON document's "clock" object, each after ", ". */
void fc__report_json_clock_more(FILE *f, const fc__analysis *a);
/* The line under a heading of the text report that says which flows its figures count; nothing
 * without an observation (every flow counts). */
void fc__report_text_counted(FILE *f, const fc__analysis *a);
/* The text report's "observed times" section; nothing without an observation. */
void fc__report_text_observation(FILE *f, const fc__analysis *a);
/* The warnings of the clock checks on sends and on the wire, and of a self-calibration that
 * declined (fc__report_warnings' format). */
void fc__report_observation_warnings(const fc__analysis *a, void (*fn)(const char *line, void *arg), void *arg);

/* ---- the HTML page (report/html.c) ---------------------------------------------------------- */

/* One self-contained HTML page (scripts and styles inline, nothing fetched when it is opened):
 * the timeline of the flows, predicted versus observed per model, the traffic between nodes, the
 * hot nodes, the wait states and the warnings, drawn by the page's script from the JSON document
 * (docs/json-schema.md) it embeds, without its intervals. Up to FC__HTML_ALL_FLOWS flows the
 * document holds every flow and intra-node message; beyond, the flows of the worst intervals and
 * an even sample of the others, no intra-node message, and the timeline summed in bins per node
 * and conflict kind. remap_json, when not NULL, is the document of
 * `flowcut remap --format json`, shown as the current and suggested placements. Needs a->iv. */
#define FC__HTML_ALL_FLOWS 4000
int fc__report_html(FILE *f, const fc__analysis *a, const char *remap_json);
/* The page of `flowcut remap --format html`: only the placements of remap_json, the document of
 * `flowcut remap --format json` for trace. */
int fc__report_html_remap(FILE *f, const char *trace, const char *remap_json);

/* ---- the Chrome trace (report/chrome.c) -------------------------------------------------------- */

typedef struct fc__chrome_stats {
    uint64_t slices;    /* MPI calls */
    uint64_t flows;     /* matched messages, each a flow arrow */
    uint64_t conflicts; /* conflicts of the intervals, each a slice of the conflict track */
} fc__chrome_stats;

/* The Trace Event Format (the JSON that Perfetto and chrome://tracing open) of trace t, which
 * a->trace is: one process per node and one thread per rank, every MPI call of t a slice named
 * after it with its call site, every flow and intra-node message of a->match an arrow from the
 * call that sent it to the call that completed its receive, and the conflicts of the intervals
 * (a->sweep) as slices of a process of their own, one thread per node and kind, one slice per run
 * of consecutive intervals in which that conflict stays the same. Reads every event
 * of t once. Returns 0, FC_ENOMEM, FC_EIO or a reading error (fc_errmsg set); *st counts what was
 * written. */
int fc__report_chrome(FILE *f, fc_trace *t, const fc__analysis *a, fc__chrome_stats *st);

/* ---- flowcut remap ------------------------------------------------------------------------------ */

struct fc__remap;
struct fc__replay;
/* The line that sets the replay of the observed placement against the observed run. */
void fc__report_remap_check(FILE *f, const struct fc__remap *rm);
/* The text report of a placement search rm over the replay rp of trace: the check, the search,
 * the current placement and each suggestion with what it does to the conflicts; nodes of the
 * suggestions named by names. */
void fc__report_remap_text(FILE *f, const struct fc__replay *rp, const struct fc__remap *rm, const char *trace,
                           const char *model, const char *platform, const char *const *names);

/* ---- flowcut info ------------------------------------------------------------------------------- */

/* The summary of trace t (opened from path) as text, or as one JSON object with json: ranks,
 * nodes, events and bytes per kind, duration, partial ranks, warnings, MPI version and clock-sync
 * quality. Reads every event once. Returns 0, or FC_ENOMEM or a reading error (fc_errmsg set). */
int fc__report_info(FILE *f, fc_trace *t, const char *path, int json);

#endif /* FLOWCUT_ANALYZER_REPORT_H */
