/* analyzer/cmd/analyze.c: `flowcut analyze`, which matches the messages of a trace, splits the
 * inter-node flows into intervals labelled with their conflicts, predicts every flow's time with
 * the contention models, and writes the report as text, JSON or CSV. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <flowcut/reader.h>
#include "model/evaluate.h"
#include "report/report.h"
#include "conflict/summary.h"
#include "conflict/feed.h"
#include "analysis/analysis.h"

static const char usage[] =
    "usage: flowcut analyze [--format text|json|csv] [-o FILE] [--eager BYTES] [--top N]\n"
    "                       [--platform PROFILE] [--model flowcut|maxrate|fairshare|linear|all|none] TRACE\n"
    "Analyses the point-to-point communications of TRACE (a trace directory or one rank file):\n"
    "flows between nodes, their conflicts over time, each model's predicted time of every flow\n"
    "against the observed one, wait states and warnings.\n"
    "  --format F     text (default, for a terminal), json (complete) or csv (one row per message)\n"
    "  -o FILE        write the report to FILE instead of standard output\n"
    "  --eager BYTES  eager/rendezvous threshold: messages of BYTES or more use rendezvous\n"
    "                 (default: the profile's, else 262144, MPICH ch4:ucx over UCX 1.13)\n"
    "  --platform P   the platform profile written by flowcut-calibrate; without it the models\n"
    "                 use a profile fitted to the trace's own uncontended flows\n"
    "  --model M      the contention model to predict with, all (default: all the profile serves),\n"
    "                 or none to leave predictions out (faster on long traces)\n"
    "  --top N        rows of each long list of the text report (default 10, 0 for all)\n"
    "  --help         print this help\n";

/* Parses a whole non-negative decimal number; returns 0 or -1. */
static int parse_count(const char *s, uint64_t *out)
{
    char *end;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static void progress(const char *what)
{
    /* Progress is for a person watching: never mixed into a redirected log. */
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "flowcut analyze: %s\n", what);
}

/* Call sites are a help, not a requirement: without addr2line they print as module+offset, and a
 * trace whose sites cannot be resolved at all still gets its report. Then the output: *out stays
 * stdout without -o; returns -1 (said on stderr) when FILE cannot be created. */
static int open_report(fc_trace *t, const char *output, fc_symbols **syms, FILE **out)
{
    progress("resolving call sites");
    if (fc_symbols_create(t, 0, syms) < 0)
        *syms = NULL;
    if (output != NULL && (*out = fopen(output, "w")) == NULL) {
        fprintf(stderr, "flowcut analyze: %s: %s\n", output, strerror(errno));
        *out = stdout;
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"eager", required_argument, NULL, 'e'},
                                         {"top", required_argument, NULL, 't'},
                                         {"platform", required_argument, NULL, 'p'},
                                         {"model", required_argument, NULL, 'm'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *format = "text", *output = NULL, *platform = NULL, *model = "all";
    uint64_t eager = 0, top = 10;
    int have_eager = 0, c, status = 1, rc;
    fc_trace *t = NULL;
    fc_match *m = NULL;
    fc__intervals *iv = NULL;
    fc__summary *sum = NULL;
    fc__profile *prof = NULL;
    fc__prediction *pred = NULL;
    fc_symbols *syms = NULL;
    fc__colls *colls = NULL;   /* the collective calls, their flows among the match's */
    fc__coll_pred *cpred = NULL;
    fc__coll_stream *cst = NULL;
    FILE *out = stdout;
    char eager_source[160];

    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0 && strcmp(optarg, "csv") != 0) {
                fprintf(stderr, "flowcut analyze: unknown format '%s' (text, json or csv)\n%s", optarg, usage);
                return 2;
            }
            format = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'e':
            if (parse_count(optarg, &eager) < 0 || eager == 0) {
                fprintf(stderr, "flowcut analyze: --eager wants a positive number of bytes, not '%s'\n%s", optarg,
                        usage);
                return 2;
            }
            have_eager = 1;
            break;
        case 't':
            if (parse_count(optarg, &top) < 0 || top > SIZE_MAX) {
                fprintf(stderr, "flowcut analyze: --top wants a number, not '%s'\n%s", optarg, usage);
                return 2;
            }
            break;
        case 'p':
            platform = optarg;
            break;
        case 'm':
            if (strcmp(optarg, "all") != 0 && strcmp(optarg, "none") != 0 && fc__model_parse(optarg) < 0) {
                fprintf(stderr,
                        "flowcut analyze: unknown model '%s' (flowcut, maxrate, fairshare, linear, all or none)\n%s",
                        optarg, usage);
                return 2;
            }
            model = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fprintf(stderr, "flowcut analyze: unknown or incomplete option '%s'\n%s", argv[optind - 1], usage);
            return 2;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "flowcut analyze: expects exactly one TRACE\n%s", usage);
        return 2;
    }
    const char *path = argv[optind];
    if (platform != NULL && fc__profile_read(platform, &prof) < 0) {
        fprintf(stderr, "flowcut analyze: %s\n", fc_errmsg());
        return 1;
    }
    if (have_eager)
        snprintf(eager_source, sizeof eager_source, "--eager");
    else if (prof != NULL && prof->eager_threshold > 0) {
        eager = prof->eager_threshold;
        have_eager = 1;
        snprintf(eager_source, sizeof eager_source, "the platform profile");
    } else
        snprintf(eager_source, sizeof eager_source, "default (MPICH ch4:ucx over UCX 1.13: 256 KiB rendezvous)");

    progress("reading the trace");
    fc__analysis_init(); /* OTF2 input for fc_trace_open */
    if (fc_trace_open(path, &t) < 0) {
        fprintf(stderr, "flowcut analyze: %s\n", fc_errmsg());
        goto out;
    }
    unsigned models[FC_NMODELS], nmodels = 0;
    int all = strcmp(model, "all") == 0, none = strcmp(model, "none") == 0, text = strcmp(format, "text") == 0;
    if ((strcmp(format, "csv") == 0 || strcmp(format, "json") == 0) && none) {
        /* The CSV rows and the JSON document are written as the flows are matched and swept, the
         * CSV rows and the JSON flows in the order of their ids (rows and flows wait only for a
         * lower id; the JSON flows and the intra-node messages wait in temporary files), so that
         * neither flows nor intervals are kept: call sites and the output are needed first. */
        int json = strcmp(format, "json") == 0;
        fc__csv_stream *cs = NULL;
        fc__json_stream *js = NULL;
        if (open_report(t, output, &syms, &out) < 0)
            goto out;
        fc__analysis ca = {.trace_path = path, .trace = t, .syms = syms, .eager_source = eager_source,
                           .top = (size_t)top};
        progress(json ? "matching messages and writing the document" : "matching messages and writing the flows");
        rc = json ? fc__json_stream_new(out, &ca, &js) : fc__csv_stream_new(out, &ca, &cs);
        if (rc == 0) {
            fc_match_sink inner = json ? fc__json_stream_sink(js) : fc__csv_stream_sink(cs), sink;
            if ((rc = fc__coll_stream_new(t, &inner, &cst)) == 0) {
                sink = fc__coll_stream_sink(cst);
                rc = fc__match_stream(t, have_eager ? eager : 0, &sink, &m);
            }
            if (rc == 0 && (rc = fc__coll_stream_finish(cst, m, &colls)) == 0 && json)
                fc__json_stream_colls(js, colls);
            if (rc == 0)
                rc = json ? fc__json_stream_finish(js, m) : fc__csv_stream_finish(cs, m);
        }
        fc__csv_stream_free(cs);
        fc__json_stream_free(js);
        if (rc < 0) {
            fprintf(stderr, "flowcut analyze: %s%s%s\n", output ? output : "", output ? ": " : "", fc_errmsg());
            goto out;
        }
        status = 0;
        goto out;
    }
    if (text && none) {
        /* The text report without predictions needs no flow kept: the messages are matched,
         * ordered and swept into the report's summary as the ranks are read, so memory follows
         * the messages in flight, not the length of the trace. */
        fc__feed *feed = NULL;
        progress("matching messages and splitting flows into intervals");
        if (fc__summary_new((size_t)top, &sum) == 0) {
            fc__sweep_ops ops = fc__summary_ops(sum);
            fc_match_sink inner, sink;
            if (fc__feed_new(&ops, &feed) == 0 && (inner = fc__feed_sink(feed), fc__coll_stream_new(t, &inner, &cst)) == 0) {
                sink = fc__coll_stream_sink(cst);
                if (fc__match_stream(t, have_eager ? eager : 0, &sink, &m) == 0 &&
                    (fc__coll_stream_finish(cst, m, &colls) < 0 || fc__feed_finish(feed, m) < 0)) {
                    fc__match_free(m);
                    m = NULL;
                }
            }
        }
        fc__feed_free(feed);
        if (m == NULL || fc__summary_finish(sum) < 0) {
            fprintf(stderr, "flowcut analyze: %s\n", fc_errmsg());
            goto out;
        }
    } else {
        progress("matching messages");
        if (fc__match_trace(t, have_eager ? eager : 0, &m) < 0 || fc__colls_add(t, m, &colls) < 0) {
            fprintf(stderr, "flowcut analyze: %s\n", fc_errmsg());
            goto out;
        }
        progress("splitting flows into intervals");
        /* The text report keeps only its summary of the intervals, so that its memory does not
         * grow with their number. The reports and the predictions read the flows' label
         * histories and each interval's span, which a lean build keeps in memory that grows with
         * the flows and intervals, not with the flows in flight in each interval as well; what
         * needs an interval's flows (the JSON document's intervals, the errors per interval)
         * sweeps the flows again. */
        int rc2;
        if (text) { /* one sweep of the flows for both */
            if ((rc2 = fc__summary_new((size_t)top, &sum)) == 0) {
                fc__sweep_ops ops = fc__summary_ops(sum);
                if ((rc2 = fc__intervals_build_lean_also(m->flows, m->ninter, &ops, &iv)) == 0)
                    rc2 = fc__summary_finish(sum);
            }
        } else
            rc2 = fc__intervals_build_lean(m->flows, m->ninter, &iv);
        if (rc2 < 0) {
            fprintf(stderr, "flowcut analyze: %s\n", fc_errmsg());
            goto out;
        }
    }
    /* Predictions: with the user's profile, else with one fitted to the trace; a trace with no
     * inter-node flow has nothing to predict, which is not an error unless a model was asked. */
    if (all)
        for (unsigned q = 0; q < FC_NMODELS; q++)
            models[nmodels++] = q;
    else if (!none)
        models[nmodels++] = (unsigned)fc__model_parse(model);
    char note[512] = "";
    if (none) {
        /* No prediction: a profile given with --platform was still read and checked above, so
         * that a bad path is reported the same way with every --model. */
        fc__profile_free(prof);
        prof = NULL;
    } else
        progress("predicting flow times");
    if (!none && prof == NULL && fc__selfcal(m, iv, &prof, note, sizeof note) < 0) {
        if (!all || m->ninter > 0) {
            fprintf(stderr, "flowcut analyze: %s\n", fc_errmsg());
            goto out;
        }
    }
    if (prof != NULL) {
        rc = fc__prediction_run(m, iv, prof, models, nmodels, all, &pred);
        prof = NULL; /* the prediction owns it now */
        if (rc < 0) {
            fprintf(stderr, "flowcut analyze: %s\n", fc_errmsg());
            goto out;
        }
        if (colls != NULL && colls->ncalls > 0 && fc__coll_predict(colls, m, pred, &cpred) < 0) {
            fprintf(stderr, "flowcut analyze: %s\n", fc_errmsg());
            goto out;
        }
        snprintf(pred->platform, sizeof pred->platform, "%s", platform ? platform : "");
        snprintf(pred->note, sizeof pred->note, "%s", platform ? "read from --platform" : note);
    }
    if (open_report(t, output, &syms, &out) < 0)
        goto out;
    fc__analysis a = {.trace_path = path,
                      .trace = t,
                      .match = m,
                      .iv = iv,
                      .sum = sum,
                      .syms = syms,
                      .eager_source = eager_source,
                      .top = (size_t)top,
                      .pred = pred,
                      .colls = colls,
                      .cpred = cpred};
    if (strcmp(format, "json") == 0)
        rc = fc__report_json(out, &a);
    else if (strcmp(format, "csv") == 0)
        rc = fc__report_csv(out, &a);
    else
        rc = fc__report_text(out, &a);
    if (rc < 0) {
        fprintf(stderr, "flowcut analyze: %s%s%s\n", output ? output : "", output ? ": " : "", fc_errmsg());
        goto out;
    }
    status = 0;
out:
    if (out != stdout && fclose(out) != 0 && status == 0) {
        fprintf(stderr, "flowcut analyze: %s: %s\n", output, strerror(errno));
        status = 1;
    }
    fc_symbols_free(syms);
    fc__prediction_free(pred);
    fc__profile_free(prof);
    fc__intervals_free(iv);
    fc__summary_free(sum);
    fc__coll_stream_free(cst);
    fc__coll_pred_free(cpred);
    fc__colls_free(colls);
    fc__match_free(m);
    fc_trace_close(t);
    return status;
}
