/* analyzer/analysis/export.h: `flowcut export --chrome-trace` in one call: the trace matched and
 * swept, then written in the Trace Event Format. Internal to libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_ANALYSIS_EXPORT_H
#define FLOWCUT_ANALYZER_ANALYSIS_EXPORT_H

#include "report/report.h"

/* Reads the trace at path (a trace directory, a rank file or an OTF2 anchor), matches its messages
 * with the default eager threshold, and writes the Chrome trace (report.h) to the file out, which
 * it creates or replaces; *st counts what it holds. Returns 0, or a negative FC_E* code with
 * fc_errmsg() naming the problem. */
int fc__export_chrome(const char *path, const char *out, fc__chrome_stats *st);

#endif /* FLOWCUT_ANALYZER_ANALYSIS_EXPORT_H */
