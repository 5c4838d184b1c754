/* analyzer/analysis/analyze.c: the pipelines of `flowcut analyze` (analyze.h). Four, by what the
 * report needs: the CSV rows and the JSON document without predictions are written while the
 * flows are matched and swept (nothing kept); the text report without predictions keeps only its
 * summary; every report with predictions keeps the flows and their label histories. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/reader.h>
#include "util/internal.h"
#include "match/match.h"
#include "collective/calls.h"
#include "conflict/feed.h"
#include "conflict/summary.h"
#include "model/evaluate.h"
#include "model/observe.h"
#include "remap/coll-predict.h"
#include "report/report.h"
#include "otf2/common.h"
#include "analysis/analysis.h"
#include "analysis/analyze.h"

static void progress(const fc__analyze_opts *o, const char *what)
{
    if (o->progress != NULL)
        o->progress(what);
}

/* The JSON document's intervals come from another sweep of the stored flows. */
static int sweep_stored(const fc__analysis *a, const fc__sweep_ops *ops)
{
    return fc__sweep_flows(a->match->flows, a->match->ninter, ops);
}

/* Call sites are a help, not a requirement: without addr2line they print as module+offset, and a
 * trace whose sites cannot be resolved at all still gets its report. Then the output: *out stays
 * stdout without an output file; FC_EIO when the file cannot be created. */
static int open_report(const fc__analyze_opts *o, fc_trace *t, fc_symbols **syms, FILE **out)
{
    progress(o, "resolving call sites");
    if (fc_symbols_create(t, 0, syms) < 0)
        *syms = NULL;
    if (o->output != NULL && (*out = fopen(o->output, "w")) == NULL) {
        *out = stdout;
        return fc__err(FC_EIO, "%s: %s", o->output, strerror(errno));
    }
    return 0;
}

/* The message of a failure to write the report names its file. */
static int output_err(const fc__analyze_opts *o, int rc)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", fc_errmsg());
    return fc__err(rc, "%s%s%s", o->output ? o->output : "", o->output ? ": " : "", msg);
}

/* The match sink of a streamed document: the writer's start, then the feed into the sweep. */
typedef struct streamed {
    fc__stream_writer w;
    fc__match_sink feed;
} streamed;

static int streamed_start(void *arg, const fc__match *m)
{
    streamed *s = arg;
    return s->w.start != NULL ? s->w.start(s->w.arg, m) : 0;
}

static int streamed_flow(void *arg, const fc__flow *f)
{
    streamed *s = arg;
    return s->feed.flow(s->feed.arg, f);
}

static int streamed_advance(void *arg, double watermark)
{
    streamed *s = arg;
    return s->feed.advance(s->feed.arg, watermark);
}

/* Matches t into the writer w through a feed and its sweep; *m is the match, NULL on failure. The
 * collectives' messages join the flows once the point-to-point ones are matched; *colls holds
 * their calls. */
static int stream(fc_trace *t, uint64_t eager, const fc__stream_writer *w, fc__match **m, fc__colls **colls)
{
    fc__feed *feed = NULL;
    fc__coll_stream *cst = NULL;
    streamed s;
    int rc = fc__feed_new(&w->ops, &feed);
    if (rc == 0) {
        fc__feed_intra(feed, w->intra, w->arg);
        s = (streamed){*w, fc__feed_sink(feed)};
        fc__match_sink inner = {.arg = &s, .start = streamed_start, .flow = streamed_flow,
                               .advance = streamed_advance};
        if ((rc = fc__coll_stream_new(t, &inner, &cst)) == 0) {
            fc__match_sink sink = fc__coll_stream_sink(cst);
            rc = fc__match_stream(t, eager, &sink, m);
            if (rc == 0 && ((rc = fc__coll_stream_finish(cst, *m, colls)) < 0 || (rc = fc__feed_finish(feed, *m)) < 0)) {
                fc__match_free(*m);
                *m = NULL;
            }
        }
    }
    fc__coll_stream_free(cst);
    fc__feed_free(feed);
    return rc;
}

/* 1 when some rank file names the MPI library the trace was made with. */
static int knows_mpi(fc_trace *t)
{
    for (size_t i = 0; i < fc_trace_nranks(t); i++)
        if (fc_trace_rank(t, i)->info.mpi_version[0])
            return 1;
    return 0;
}

/* The remap document given with --remap is read whole and handed to the page as it is: the page
 * parses it and says so when it is not a remap document. */
int fc__read_text(const char *path, char **text)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    if (f == NULL)
        return fc__err(FC_EIO, "%s: %s", path, strerror(errno));
    for (;;) {
        if (cap - n < 4096) {
            char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
            if (nb == NULL) {
                rc = fc__err(FC_ENOMEM, "%s: out of memory", path);
                break;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = fc__err(FC_EIO, "%s: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *text = buf;
    return 0;
}

int fc__analyze(const fc__analyze_opts *o)
{
    int rc, have_eager = o->eager > 0, status = -1;
    uint64_t eager = o->eager;
    fc_trace *t = NULL;
    fc__match *m = NULL;
    fc__intervals *iv = NULL;
    fc__summary *sum = NULL;
    fc__profile *prof = NULL;
    fc__prediction *pred = NULL;
    fc__observation *obs = NULL;
    fc_symbols *syms = NULL;
    fc__colls *colls = NULL; /* the collective calls, their flows among the match's */
    fc__coll_pred *cpred = NULL;
    FILE *out = stdout;
    char eager_source[320], *remap_json = NULL;

    if (o->platform != NULL && fc__profile_read(o->platform, &prof) < 0)
        return -1;
    if (o->remap != NULL && (status = fc__read_text(o->remap, &remap_json)) < 0)
        goto out;
    if (have_eager)
        snprintf(eager_source, sizeof eager_source, "--eager");
    else if (prof != NULL && prof->eager_threshold > 0) {
        eager = prof->eager_threshold;
        have_eager = 1;
        snprintf(eager_source, sizeof eager_source, "the platform profile");
    } else
        snprintf(eager_source, sizeof eager_source, "default (MPICH ch4:ucx over UCX 1.13: 256 KiB rendezvous)");

    progress(o, "reading the trace");
    fc__analysis_init(); /* OTF2 input for fc_trace_open */
    if ((status = fc_trace_open(o->trace, &t)) < 0)
        goto out;
    if (o->opened != NULL)
        o->opened(t);
    status = -1;
    /* An imported OTF2 archive does not name its MPI library: MPICH's threshold and collective
     * algorithms are guesses, and the report says so (and how to set the threshold). */
    int mpi_assumed = fc__otf2_is_anchor(o->trace) && !knows_mpi(t);
    if (!have_eager && mpi_assumed)
        snprintf(eager_source, sizeof eager_source,
                 "an assumption: the trace does not name its MPI library, so MPICH ch4:ucx's 256 KiB "
                 "rendezvous threshold is taken; set the real one with --eager BYTES or --platform PROFILE");
    unsigned models[FC_NMODELS], nmodels = 0;
    int all = strcmp(o->model, "all") == 0, none = strcmp(o->model, "none") == 0;
    int text = strcmp(o->format, "text") == 0, json = strcmp(o->format, "json") == 0;
    if ((strcmp(o->format, "csv") == 0 || json) && none) {
        /* The CSV rows and the JSON document are written as the flows are matched and swept, the
         * CSV rows and the JSON flows in the order of their ids (rows and flows wait only for a
         * lower id; the JSON flows and the intra-node messages wait in temporary files), so that
         * neither flows nor intervals are kept: call sites and the output are needed first. */
        fc__csv_stream *cs = NULL;
        fc__json_stream *js = NULL;
        if ((status = open_report(o, t, &syms, &out)) < 0)
            goto out;
        fc__analysis ca = {.trace_path = o->trace, .trace = t, .syms = syms, .eager_source = eager_source,
                           .mpi_assumed = mpi_assumed, .top = o->top};
        progress(o, json ? "matching messages and writing the document" : "matching messages and writing the flows");
        rc = json ? fc__json_stream_new(out, &ca, &js) : fc__csv_stream_new(out, &ca, &cs);
        if (rc == 0) {
            fc__stream_writer w = json ? fc__json_stream_writer(js) : fc__csv_stream_writer(cs);
            rc = stream(t, have_eager ? eager : 0, &w, &m, &colls);
            if (rc == 0 && json)
                fc__json_stream_colls(js, colls);
            if (rc == 0)
                rc = json ? fc__json_stream_finish(js, m) : fc__csv_stream_finish(cs, m);
        }
        fc__csv_stream_free(cs);
        fc__json_stream_free(js);
        status = rc < 0 ? output_err(o, rc) : 0;
        goto out;
    }
    if (text && none) {
        /* The text report without predictions needs no flow kept: the messages are matched,
         * ordered and swept into the report's summary as the ranks are read, so memory follows
         * the messages in flight, not the length of the trace. */
        progress(o, "matching messages and splitting flows into intervals");
        if ((status = fc__summary_new(o->top, &sum)) < 0)
            goto out;
        fc__stream_writer w = {.ops = fc__summary_ops(sum)};
        if ((status = stream(t, have_eager ? eager : 0, &w, &m, &colls)) < 0 ||
            (status = fc__summary_finish(sum)) < 0)
            goto out;
    } else {
        progress(o, "matching messages");
        if ((status = fc__match_trace(t, have_eager ? eager : 0, &m)) < 0 ||
            (status = fc__colls_add(t, m, &colls)) < 0)
            goto out;
        progress(o, "splitting flows into intervals");
        /* The text report keeps only its summary of the intervals, so that its memory does not
         * grow with their number. The reports and the predictions read the flows' label
         * histories and each interval's span, which a lean build keeps in memory that grows with
         * the flows and intervals, not with the flows in flight in each interval as well; what
         * needs an interval's flows (the JSON document's intervals, the errors per interval)
         * sweeps the flows again. */
        if (text && none) { /* one sweep of the flows for both */
            if ((status = fc__summary_new(o->top, &sum)) == 0) {
                fc__sweep_ops ops = fc__summary_ops(sum);
                if ((status = fc__intervals_build_lean_also(m->flows, m->ninter, &ops, &iv)) == 0)
                    status = fc__summary_finish(sum);
            }
        } else
            status = fc__intervals_build_lean(m->flows, m->ninter, &iv);
        if (status < 0)
            goto out;
    }
    status = -1;
    /* Predictions: with the user's profile, else with one fitted to the trace; a trace with no
     * inter-node flow has nothing to predict, which is not an error unless a model was asked. */
    if (all)
        for (unsigned q = 0; q < FC_NMODELS; q++)
            models[nmodels++] = q;
    else if (!none)
        models[nmodels++] = (unsigned)fc__model_parse(o->model);
    char note[512] = "";
    if (none) {
        /* No prediction: a profile given with --platform was still read and checked above, so
         * that a bad path is reported the same way with every --model. */
        fc__profile_free(prof);
        prof = NULL;
    } else
        progress(o, "predicting flow times");
    /* What each flow's time is made of, and so which flows the models are judged on: the parts
     * the events give first, which self-calibration needs, then the classes with the platform. */
    if (!none && (status = fc__observe_new(t, m, o->all_flows, &obs)) < 0)
        goto out;
    status = -1;
    if (!none && prof == NULL && m->ninter > 0 && (rc = fc__selfcal_observed(m, iv, obs, &prof, note, sizeof note)) < 0) {
        status = rc;
        goto out;
    }
    if (!none && prof == NULL && m->ninter > 0 && !all) {
        status = fc__err(FC_EINVAL, "model %s: %s", o->model, note);
        goto out;
    }
    if (obs != NULL) {
        /* Self-calibration that declined a platform it fitted, too few flows being network flows
         * under it, leaves the classes it found with it: they say why. */
        if (prof != NULL || !obs->have_platform)
            fc__observe_classify(obs, m, prof);
        snprintf(obs->platform_note, sizeof obs->platform_note, "%s", prof == NULL ? note : "");
    }
    if (!none && prof == NULL && m->ninter == 0 && (rc = fc__selfcal(m, iv, &prof, note, sizeof note)) < 0) {
        if (!all) {
            status = rc;
            goto out;
        }
    }
    if (prof != NULL) {
        rc = fc__prediction_run(m, iv, prof, models, nmodels, all, &pred);
        prof = NULL; /* the prediction owns it now */
        if (rc == 0 && obs != NULL)
            rc = fc__prediction_judge(pred, m, iv, obs->judged);
        if (rc < 0) {
            status = rc;
            goto out;
        }
        if (colls != NULL && colls->ncalls > 0 && (rc = fc__coll_predict(colls, m, pred, &cpred)) < 0) {
            status = rc;
            goto out;
        }
        snprintf(pred->platform, sizeof pred->platform, "%s", o->platform ? o->platform : "");
        snprintf(pred->note, sizeof pred->note, "%s", o->platform ? "read from --platform" : note);
    }
    if (text && !none) {
        /* The summary counts the flows the statistics count (network ones by default), which the
         * classes decide: a sweep of the stored flows once they are known. */
        if ((status = fc__summary_new(o->top, &sum)) < 0)
            goto out;
        sum->count = obs != NULL ? obs->judged : NULL;
        fc__sweep_ops ops = fc__summary_ops(sum);
        if ((status = fc__sweep_flows(m->flows, m->ninter, &ops)) < 0 || (status = fc__summary_finish(sum)) < 0)
            goto out;
    }
    if ((status = open_report(o, t, &syms, &out)) < 0)
        goto out;
    fc__analysis a = {.trace_path = o->trace,
                      .trace = t,
                      .match = m,
                      .iv = iv,
                      .sum = sum,
                      .syms = syms,
                      .eager_source = eager_source,
                      .mpi_assumed = mpi_assumed,
                      .top = o->top,
                      .pred = pred,
                      .colls = colls,
                      .cpred = cpred,
                      .obs = obs,
                      .njudged = fc__report_count_judged(m, obs),
                      .sweep = sweep_stored};
    if (json)
        rc = fc__report_json(out, &a);
    else if (strcmp(o->format, "csv") == 0)
        rc = fc__report_csv(out, &a);
    else if (strcmp(o->format, "html") == 0)
        rc = fc__report_html(out, &a, remap_json);
    else
        rc = fc__report_text(out, &a);
    status = rc < 0 ? output_err(o, rc) : 0;
out:
    if (out != stdout && fclose(out) != 0 && status == 0)
        status = fc__err(FC_EIO, "%s: %s", o->output, strerror(errno));
    free(remap_json);
    fc_symbols_free(syms);
    fc__prediction_free(pred);
    fc__observation_free(obs);
    fc__profile_free(prof);
    fc__intervals_free(iv);
    fc__summary_free(sum);
    fc__coll_pred_free(cpred);
    fc__colls_free(colls);
    fc__match_free(m);
    fc_trace_close(t);
    return status;
}
