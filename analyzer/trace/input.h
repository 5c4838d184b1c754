/* analyzer/trace/input.h: input back-ends, the formats other than flowcut's own rank files that
 * fc_trace_open accepts. A back-end lives in a later layer (OTF2 in otf2/) and is added to the
 * list by the layer that composes the library (analysis/inputs.c), so that the trace layer calls
 * none of them by name. Internal to libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_TRACE_INPUT_H
#define FLOWCUT_ANALYZER_TRACE_INPUT_H

#include <flowcut/reader.h>

typedef struct fc__input {
    const char *name; /* "OTF2" */
    /* 1 when path is this back-end's to open; 0 otherwise (missing files included). */
    int (*claims)(const char *path);
    /* Opens path as a trace, with fc_trace_open's contract. */
    int (*open)(const char *path, fc_trace **out);
} fc__input;

/* Adds in (which must outlive every fc_trace_open) to the back-ends fc_trace_open tries before
 * reading path as rank files, in the order added; adding one already there does nothing. Returns
 * 0, or FC_ENOMEM when the fixed list is full. Thread-safe. */
int fc__input_add(const fc__input *in);

/* Makes fc_trace_close(t) call fn(arg) after it has released t (a back-end's private files). At
 * most one per trace; a second call replaces the first. */
void fc__trace_on_close(fc_trace *t, void (*fn)(void *), void *arg);

#endif /* FLOWCUT_ANALYZER_TRACE_INPUT_H */
