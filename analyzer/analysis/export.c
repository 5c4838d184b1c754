/* analyzer/analysis/export.c: the pipeline of `flowcut export --chrome-trace` (export.h): the
 * writer reads the events itself but is handed the flows and a sweep of them, as every report is. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <flowcut/reader.h>
#include "util/internal.h"
#include "match/match.h"
#include "conflict/sweep.h"
#include "report/report.h"
#include "analysis/analysis.h"
#include "analysis/export.h"

static int sweep_stored(const fc__analysis *a, const fc__sweep_ops *ops)
{
    return fc__sweep_flows(a->match->flows, a->match->ninter, ops);
}

int fc__export_chrome(const char *path, const char *out, fc__chrome_stats *st)
{
    fc_trace *t = NULL;
    fc__match *m = NULL;
    fc_symbols *syms = NULL;
    FILE *f = NULL;
    int rc;

    fc__analysis_init(); /* OTF2 input for fc_trace_open */
    if ((rc = fc_trace_open(path, &t)) < 0)
        goto out;
    if ((rc = fc__match_trace(t, 0, &m)) < 0)
        goto out;
    /* Call sites are a help: a trace whose sites cannot be resolved is still exported. */
    if (fc_symbols_create(t, 0, &syms) < 0)
        syms = NULL;
    if ((f = fopen(out, "w")) == NULL) {
        rc = fc__err(FC_EIO, "%s: %s", out, strerror(errno));
        goto out;
    }
    fc__analysis a = {.trace_path = path, .trace = t, .match = m, .syms = syms, .sweep = sweep_stored};
    if ((rc = fc__report_chrome(f, t, &a, st)) < 0) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", fc_errmsg());
        fc__err(rc, "%s: %s", out, msg);
    }
out:
    if (f != NULL && fclose(f) != 0 && rc == 0)
        rc = fc__err(FC_EIO, "%s: %s", out, strerror(errno));
    fc_symbols_free(syms);
    fc__match_free(m);
    fc_trace_close(t);
    return rc;
}
