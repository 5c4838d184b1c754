/* analyzer/analysis/analyze.h: the analysis of a trace as `flowcut analyze` runs it, in one call:
 * it picks the pipeline (streamed or stored, with or without predictions) that the report asked
 * for needs. Internal to libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_ANALYSIS_ANALYZE_H
#define FLOWCUT_ANALYZER_ANALYSIS_ANALYZE_H

#include <stddef.h>
#include <stdint.h>
#include <flowcut/reader.h>

typedef struct fc__analyze_opts {
    const char *trace;    /* a trace directory, a rank file or an OTF2 anchor file */
    const char *output;   /* the report's file, or NULL for standard output */
    const char *format;   /* "text", "json", "csv" or "html" */
    const char *platform; /* a platform profile's file, or NULL to fit one to the trace */
    const char *model;    /* a model's name (model.h), "all" (what the profile serves) or "none" */
    uint64_t eager;       /* the eager/rendezvous threshold in bytes; 0: the profile's or the default */
    size_t top;           /* rows of each long list of the text report (0: all) */
    int all_flows;        /* the error statistics count every flow's class, not network flows only */
    const char *remap;    /* the HTML report only: a file `flowcut remap --format json` wrote, to
                             show beside the analysis, or NULL */
    void (*progress)(const char *what); /* told each stage as it starts; may be NULL */
    void (*opened)(const fc_trace *t);   /* shown the trace once open (its skipped rank files); may be NULL */
} fc__analyze_opts;

/* Reads the trace, matches its messages, splits the inter-node flows into intervals labelled with
 * their conflicts, predicts the flows' times with the models asked for, and writes the report.
 * Returns 0, or a negative FC_E* code with fc_errmsg() naming the problem (prefixed with the
 * report's file when writing it failed). What was written before a failure stays written. */
int fc__analyze(const fc__analyze_opts *o);

#endif /* FLOWCUT_ANALYZER_ANALYSIS_ANALYZE_H */
