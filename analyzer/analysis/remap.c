/* analyzer/analysis/remap.c: the pipeline of `flowcut remap` (remap.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/reader.h>
#include "util/internal.h"
#include "conflict/intervals.h"
#include "collective/calls.h"
#include "match/match.h"
#include "model/model.h"
#include "model/evaluate.h"
#include "model/observe.h"
#include "remap/remap.h"
#include "report/report.h"
#include "analysis/analysis.h"
#include "analysis/remap.h"

/* Splits a comma-separated list; returns the count, names point into s (0: out of memory). */
static size_t split_hosts(char *s, char ***out)
{
    size_t n = 1;
    for (char *p = s; *p; p++)
        n += *p == ',';
    char **v = calloc(n, sizeof *v);
    if (v == NULL)
        return 0;
    n = 0;
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ","))
        v[n++] = tok;
    *out = v;
    return n;
}

int fc__remap_run(const fc__remap_run_opts *o)
{
    const char *path = o->trace, *model = o->model;
    uint32_t *given_pl = NULL;
    char **hostv = NULL, note[1024] = "";
    size_t nhosts = 0;
    uint64_t eager = o->eager;
    int html = strcmp(o->format, "html") == 0;
    int status = -1, rc, fmt = strcmp(o->format, "text") == 0 ? -1 : html ? FC_LAUNCHER_JSON : fc__launcher_parse(o->format);
    fc_trace *t = NULL;
    fc__match *m = NULL;
    fc__intervals *iv = NULL;
    fc__profile *prof = NULL;
    fc__replay *rp = NULL;
    fc__remap *rm = NULL;
    FILE *out = stdout;

    if (o->platform != NULL && fc__profile_read(o->platform, &prof) < 0)
        goto out;
    if (eager == 0)
        eager = prof && prof->eager_threshold ? prof->eager_threshold : FC_MATCH_EAGER_DEFAULT;
    fc__analysis_init(); /* OTF2 input for fc_trace_open */
    if (fc_trace_open(path, &t) < 0)
        goto out;
    if (o->opened != NULL)
        o->opened(t);
    if (fc__replay_build(t, &rp) < 0)
        goto out;
    if (prof == NULL) {
        /* Self-calibration: the network flows of the trace give latency and bandwidth. */
        fc_trace *ct = t;
        if (o->platform_trace != NULL && fc_trace_open(o->platform_trace, &ct) < 0)
            goto out;
        fc__observation *ob = NULL;
        rc = fc__match_trace(ct, eager, &m);
        if (rc == 0) { /* the collectives' messages are flows to fit to as well */
            fc__colls *colls = NULL;
            rc = fc__colls_add(ct, m, &colls);
            fc__colls_free(colls);
        }
        if (rc == 0)
            rc = fc__intervals_build_lean(m->flows, m->ninter, &iv);
        /* Fitted to the network flows, as flowcut analyze fits it; too few of them fit nothing. */
        if (rc == 0)
            rc = fc__observe_new(ct, m, 0, &ob);
        if (rc == 0 && m->ninter > 0)
            rc = fc__selfcal_observed(m, iv, ob, &prof, note, sizeof note);
        if (rc == 0 && prof == NULL)
            rc = fc__err(FC_EINVAL, "%s", m->ninter > 0 ? note : "the trace has no inter-node flow to fit to");
        fc__observation_free(ob);
        if (ct != t)
            fc_trace_close(ct);
        if (rc < 0) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", fc_errmsg());
            fc__err(rc, "%s: cannot fit a platform profile to the trace (%s)%s",
                    o->platform_trace ? o->platform_trace : path, msg,
                    strstr(msg, "--platform") ? "" : "; give --platform");
            goto out;
        }
        if (o->platform_trace != NULL) {
            char fitted[1200];
            snprintf(fitted, sizeof fitted, "%s (from %s)", note, o->platform_trace);
            snprintf(note, sizeof note, "%.500s", fitted);
        }
    }
    /* A trace without intra-node messages (mapping B of the report's broadcast has none) cannot
     * say how fast a node moves data inside itself, and the profile would then take the network's
     * figures for it: a placement that brings partners together would gain nothing. Assume a
     * shared-memory copy instead: 1 us + 5 GB/s, far faster than any network here. */
    char assumed[96] = "";
    if (prof->nintra == 0) {
        if (fc__profile_add_segment(prof, 1, 0, UINT64_MAX, 1e-6, 1.0 / 5e9, 0) < 0) {
            fc__err(FC_ENOMEM, "out of memory");
            goto out;
        }
        snprintf(assumed, sizeof assumed, "; intra-node assumed 1 us + 5 GB/s (no intra-node figures)");
    }
    /* The flows the analysis does not class as network (waiting for the peer, no progress, the
     * ranks' turns at the cores of an oversubscribed machine, latency), classed as flowcut analyze
     * classes them under this platform, took a time the network does not set: the replay keeps
     * the part of their observed time the network does not explain (fc__replay_fix, and
     * fc__replay_split below). */
    {
        fc__match *tm = NULL;
        fc__observation *tob = NULL;
        rc = fc__match_trace(t, eager, &tm);
        if (rc == 0) {
            fc__colls *colls = NULL;
            rc = fc__colls_add(t, tm, &colls);
            fc__colls_free(colls);
        }
        if (rc == 0)
            rc = fc__observe_new(t, tm, 0, &tob);
        if (rc == 0) {
            fc__observe_classify(tob, tm, prof);
            rc = fc__replay_fix(rp, tm, tob);
        }
        fc__observation_free(tob);
        fc__match_free(tm);
        if (rc < 0) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", fc_errmsg());
            fc__err(rc, "%s: cannot class the trace's flows (%s)", path, msg);
            goto out;
        }
    }
    /* The flow cuts of a profile fitted to a trace are mostly assumed, and those it does fit come
     * from flows whose bandwidth was itself fitted under contention: a placement with other
     * conflicts would be judged by extrapolated cuts. Fair share needs no cut, so it is the model
     * unless a calibrated profile brings measured cuts. */
    if (model == NULL)
        model = o->platform != NULL && fc__model_usable(prof, FC_MODEL_FLOWCUT) ? "flowcut" : "fairshare";
    if (!fc__model_usable(prof, (unsigned)fc__model_parse(model))) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", fc_errmsg());
        fc__err(FC_EINVAL, "model %s: %s", model, msg);
        goto out;
    }
    fc__remap_opts ro = {.replay = {.profile = prof, .model = (unsigned)fc__model_parse(model), .eager = eager},
                         .nodes = (uint32_t)o->nodes, .slots = (uint32_t)o->slots, .exhaustive = o->exhaustive,
                         .top = (size_t)o->top, .budget = o->budget};
    /* What of the non-network flows' times the network explains under the observed placement,
     * and what is the ranks' own, which every placement keeps (replay.h). */
    if (fc__replay_split(rp, &ro.replay) < 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", fc_errmsg());
        fc__err(FC_EINVAL, "%s: %s", path, msg);
        goto out;
    }
    if (fc__remap_search(rp, &ro, &rm) < 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", fc_errmsg());
        fc__err(FC_EINVAL, "%s: %s", path, msg);
        goto out;
    }
    if (o->placement != NULL) {
        if ((given_pl = fc__placement_read_hydra(o->placement, rm)) == NULL)
            goto out;
        if (fc__remap_given(rp, &ro, rm, given_pl) < 0) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", fc_errmsg());
            fc__err(FC_EINVAL, "%s: %s", o->placement, msg);
            goto out;
        }
    }
    const char *const *names = (const char *const *)rm->node_names;
    if (o->hosts != NULL) {
        if ((nhosts = split_hosts(o->hosts, &hostv)) < rm->nodes) {
            fc__err(FC_EINVAL, "--hosts names %zu nodes, the placement needs %u", nhosts, rm->nodes);
            goto out;
        }
        names = (const char *const *)hostv;
    }
    if (o->output != NULL && (out = fopen(o->output, "w")) == NULL) {
        fc__err(FC_EIO, "%s: %s", o->output, strerror(errno));
        out = stdout;
        goto out;
    }
    char plat[600];
    snprintf(plat, sizeof plat, "%s%s", o->platform ? o->platform : note[0] ? note : "fitted to the trace", assumed);
    if (fmt < 0) {
        fc__report_remap_text(out, rp, rm, path, model, plat, names);
    } else {
        /* A launcher file applies, of the suggestions equivalent to the best (fc__remap_judge), the
         * one that moves fewest ranks; the JSON document holds them all. */
        fc__report_remap_check(stderr, rm);
        if (fmt != FC_LAUNCHER_JSON && rm->ncands == 0) {
            fc__err(FC_EINVAL, "no placement fits %u nodes x %u slots", rm->nodes, rm->slots);
            goto out;
        }
        if (html) {
            /* The page embeds the JSON document: the same data, drawn. */
            char *doc = NULL;
            size_t n = 0;
            FILE *ms = open_memstream(&doc, &n);
            rc = ms == NULL ? -1 : fc__launcher_write(ms, FC_LAUNCHER_JSON, rm, 0, names, path);
            if (ms != NULL && fclose(ms) != 0)
                rc = -1;
            if (rc < 0 || fc__report_html_remap(out, path, doc) < 0) {
                free(doc);
                fc__err(FC_EIO, "cannot write the html output");
                goto out;
            }
            free(doc);
        } else if ((rc = fc__launcher_write(out, (unsigned)fmt, rm, rm->fewest, names, path)) < 0) {
            if (rc != FC_EINVAL) /* FC_EINVAL: a placement the format cannot express, already said */
                fc__err(FC_EIO, "cannot write the %s output", o->format);
            goto out;
        }
    }
    status = 0;
out:
    if (out != stdout && fclose(out) != 0 && status == 0)
        status = fc__err(FC_EIO, "%s: %s", o->output, strerror(errno));
    free(hostv);
    free(given_pl);
    fc__remap_free(rm);
    fc__replay_free(rp);
    fc__intervals_free(iv);
    fc__match_free(m);
    fc__profile_free(prof);
    fc_trace_close(t);
    return status;
}
