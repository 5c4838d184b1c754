/* analyzer/analysis/analysis.h: the layer that composes libflowcut-analyzer from its stages.
 * Internal to libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_ANALYSIS_H
#define FLOWCUT_ANALYZER_ANALYSIS_H

/* Adds the input back-ends of the later layers (OTF2) to fc_trace_open. The shared library does it
 * when it is loaded; a program linked with the layers' convenience libraries calls this first.
 * Idempotent and thread-safe; returns 0 or FC_ENOMEM. */
int fc__analysis_init(void);

/* Reads the whole file at path into *text, NUL-terminated and malloc'd (the caller frees it).
 * Returns 0, FC_EIO (message naming the file) or FC_ENOMEM. */
int fc__read_text(const char *path, char **text);

#endif /* FLOWCUT_ANALYZER_ANALYSIS_H */
