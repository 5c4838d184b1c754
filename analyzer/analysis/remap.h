/* analyzer/analysis/remap.h: `flowcut remap` in one call: the replay of a trace, the platform it
 * runs on (given, or fitted to the trace or to another trace), the search over placements, and the
 * report or launcher file. Internal to libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_ANALYSIS_REMAP_H
#define FLOWCUT_ANALYZER_ANALYSIS_REMAP_H

#include <stddef.h>
#include <stdint.h>
#include <flowcut/reader.h>

typedef struct fc__remap_run_opts {
    const char *trace;          /* the traced run */
    const char *output;         /* the report's or launcher file's path, or NULL for standard output */
    const char *format;         /* "text" or a launcher format's name (remap.h) */
    const char *platform;       /* a platform profile's file, or NULL */
    const char *platform_trace; /* a trace to fit the profile to instead of `trace`, or NULL */
    const char *model;          /* a model's name, or NULL for the default (see flowcut-remap(1)) */
    const char *placement;      /* a Hydra machinefile to replay and report too, or NULL */
    char *hosts;                /* comma-separated names of the next allocation's nodes (split in
                                   place), or NULL for the trace's */
    uint64_t nodes, slots;      /* 0: the trace's */
    uint64_t top, eager, budget; /* eager 0: the profile's or the default; budget 0: the default */
    int exhaustive;             /* -1: by size; 0: never; 1: always */
    void (*opened)(const fc_trace *t); /* shown the trace once open (its skipped rank files); may be NULL */
} fc__remap_run_opts;

/* Runs the search and writes its result. Returns 0, or a negative FC_E* code with fc_errmsg()
 * naming the problem; FC_EINVAL for options that contradict each other or the trace. The check
 * line of a launcher file goes to standard error, as a note beside the file. */
int fc__remap_run(const fc__remap_run_opts *o);

#endif /* FLOWCUT_ANALYZER_ANALYSIS_REMAP_H */
