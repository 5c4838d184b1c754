/* analyzer/report/report.h: the reports of an analysis (`flowcut analyze`): a text report for a terminal,
 * and the complete JSON and CSV documents whose layout the README's "flowcut analyze" section
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
#include "match/match.h"
#include "collective/calls.h"
#include "remap/coll-predict.h"
#include "model/evaluate.h"

/* What one report describes. Nothing here is owned by the analysis: the caller keeps every
 * pointer valid while the report is written. */
typedef struct fc__analysis {
    const char *trace_path;   /* as given on the command line */
    const fc_trace *trace;
    const fc_match *match;    /* fc__match_trace of trace */
    const fc__intervals *iv;  /* fc__intervals_build or _build_lean of match->flows[0 ..
                                 match->ninter): the flows' label histories, each interval's span
                                 and the flow-seconds by label (no report reads an interval's
                                 flows from it: the JSON document sweeps match->flows again); JSON,
                                 CSV and predictions need it, the text report does not */
    const struct fc__summary *sum; /* the summary of the same flows (summary.h): the text report's */
    const fc_symbols *syms;   /* call-site texts, or NULL to show none */
    const char *eager_source; /* where match->eager_threshold comes from, one line */
    size_t top;               /* rows of each long list of the text report (0: all) */
    const fc__prediction *pred; /* the models' predictions, or NULL for none */
    const fc__colls *colls;   /* the collective calls, whose flows match->flows holds, or NULL */
    const fc__coll_pred *cpred; /* the models' durations of those calls, or NULL */
} fc__analysis;

/* The text report: sections with headings and aligned columns, long lists cut to a->top rows.
 * Needs a->sum, built with the same top; a->iv only with predictions. */
int fc__report_text(FILE *f, const fc__analysis *a);
/* One JSON object (schema version 1) with every flow, intra-node message and interval. Also
 * FC_EINVAL when a flow's time is not finite (fc__sweep_flows). */
int fc__report_json(FILE *f, const fc__analysis *a);
/* A header line and one row per message: the inter-node flows, then the intra-node ones. */
int fc__report_csv(FILE *f, const fc__analysis *a);

/* The CSV report written as the trace is matched (fc__match_stream), without storing the flows:
 * rows appear in the same order and with the same ids as fc__report_csv's, the intra-node ones
 * kept in a temporary file until the number of inter-node flows is known. Without predictions
 * (a->pred must be NULL); a->match is set from the match's start. fc__csv_stream_new writes the
 * header; on success *cs is owned by the caller (fc__csv_stream_free). The stream functions return
 * 0, FC_ENOMEM, FC_EIO (the message in fc_errmsg). */
typedef struct fc__csv_stream fc__csv_stream;
int fc__csv_stream_new(FILE *out, const fc__analysis *a, fc__csv_stream **cs);
fc_match_sink fc__csv_stream_sink(fc__csv_stream *cs);
/* After fc__match_stream returned m: writes the remaining rows. */
int fc__csv_stream_finish(fc__csv_stream *cs, fc_match *m);
void fc__csv_stream_free(fc__csv_stream *cs);

/* The JSON document written as the trace is matched, without storing the flows or the intervals:
 * the same document as fc__report_json's (without predictions: a->pred and a->iv are ignored).
 * The head is written when the match starts; each interval as the sweep finds it; the flows (in
 * order of id) and the intra-node messages wait in temporary files, copied after the intervals,
 * and what is known only at the end follows them. Memory follows the flows in flight. The
 * functions and their errors are those of the CSV stream above: fc__json_stream_new (the caller
 * owns *js, freed with fc__json_stream_free, which flushes what was written), the sink to give
 * fc__match_stream, and fc__json_stream_finish once it returned m. */
typedef struct fc__json_stream fc__json_stream;
int fc__json_stream_new(FILE *out, const fc__analysis *a, fc__json_stream **js);
fc_match_sink fc__json_stream_sink(fc__json_stream *js);
int fc__json_stream_finish(fc__json_stream *js, fc_match *m);
void fc__json_stream_free(fc__json_stream *js);
/* The collective calls the streamed documents describe (before their finish; NULL: none). */
void fc__json_stream_colls(fc__json_stream *js, const fc__colls *colls);

/* The name of an FC_CONFLICT_* kind ("none", "outgoing", "incoming", "mixed-in", "mixed-out"),
 * or "unknown". */
const char *fc__conflict_name(uint32_t kind);

/* ---- shared by report.c (JSON, CSV) and report/text.c ----------------------------------------- */

/* The text of call site `site` of world rank `rank`, or NULL (site 0, no symbols, unknown id). */
const char *fc__report_site(const fc__analysis *a, uint32_t rank, uint64_t site);

/* The label inter-node flow id spent the most time under (the earliest on a tie; NONE with k = 1
 * for a flow never active) in *main, and its total time under a label other than NONE in
 * *conflict_s. */
void fc__report_flow_main(const fc__analysis *a, uint64_t id, fc_label *main, double *conflict_s);

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
void fc__report_csv_predicted(FILE *f, const fc__analysis *a, const fc_flow *fl);
/* The text report's "predicted versus observed" section. Returns 0 or FC_ENOMEM. */
int fc__report_text_prediction(FILE *f, const fc__analysis *a);

#endif /* FLOWCUT_ANALYZER_REPORT_H */
