/* analyzer/report/predictions.c: the predicted-versus-observed parts of the reports: which platform
 * profile the models used, each model's errors in the statistics of Martinasso & Mehaut's Table 3,
 * and the predicted time of every flow and the error of every interval, in text, JSON and CSV. */
#define _GNU_SOURCE 1
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "report/report.h"
#include "report/shared.h"

static void json_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.9g", x);
    else
        fputs("null", f);
}

static const char *node_name(const fc__match *m, uint32_t node)
{
    return node < m->nnodes ? m->nodes[node] : "?";
}

const char *fc__report_errors_withheld(const fc__analysis *a, char *buf, size_t n)
{
    const fc__observation *o = a->obs;
    size_t nj = fc__report_njudged(a);
    if (o == NULL || a->match->ninter == 0)
        return NULL;
    if (nj == 0 && o->njudged > 0)
        snprintf(buf, n, "no point-to-point %s to judge the models on (the collective calls are compared per call)",
                 o->all ? "flow" : "network flow");
    else if (nj == 0)
        snprintf(buf, n, "no %s to judge the models on", o->all ? "flow" : "network flow");
    else if (!o->all && nj < FC_SELFCAL_MIN_FLOWS)
        /* The observation says these times are not the network's: a figure over one or two flows
         * would read as a verdict on the models all the same. */
        snprintf(buf, n, "too few network flows (%zu) to judge the models on", nj);
    else
        return NULL;
    return buf;
}

void fc__report_json_prediction(FILE *f, const fc__analysis *a)
{
    const fc__prediction *pr = a->pred;
    if (pr == NULL) {
        fputs("  \"platform\": null,\n  \"errors\": null,\n", f); /* documented members are always there */
        return;
    }
    const fc__profile *p = pr->profile;
    fputs("  \"platform\": {\"file\": ", f);
    fc__json_str(f, pr->platform[0] ? pr->platform : NULL);
    fputs(", \"source\": ", f);
    fc__json_str(f, p->source);
    fputs(", \"note\": ", f);
    fc__json_str(f, pr->note);
    fputs(", \"inter\": [", f);
    for (size_t i = 0; i < p->ninter; i++) {
        fprintf(f, "%s{\"from_bytes\": %" PRIu64 ", \"latency_s\": ", i ? ", " : "", p->inter[i].lo);
        json_num(f, p->inter[i].latency);
        fputs(", \"per_byte_s\": ", f);
        json_num(f, p->inter[i].per_byte);
        putc('}', f);
    }
    fputs("], \"cuts\": [", f);
    for (size_t i = 0; i < p->ncuts; i++) {
        const fc__cut *c = &p->cuts[i];
        fprintf(f, "%s{\"kind\": \"%s\", \"k\": %" PRIu32 ", \"alpha\": [", i ? ", " : "", fc__conflict_name(c->kind),
                c->k);
        for (size_t q = 0; q < c->nalpha; q++) {
            fputs(q ? ", " : "", f);
            json_num(f, c->alpha[q]);
        }
        fputs("]}", f);
    }
    fputs("], \"skipped_models\": ", f);
    fc__json_str(f, pr->skipped[0] ? pr->skipped : NULL);
    fputs("},\n  \"errors\": {", f);
    char why[128];
    const char *withheld = fc__report_errors_withheld(a, why, sizeof why);
    for (unsigned j = 0; j < pr->nmodels; j++) {
        const fc__errors *e = &pr->err[j];
        /* No flow compared gives no figure, not an error of 0; nor do too few network flows,
         * as in the text report. */
        int fig = e->n > 0 && withheld == NULL;
        fprintf(f, "%s\"%s\": {\"flows\": %zu, \"mean_abs_pct\": ", j ? ", " : "", fc__model_name(pr->model[j]),
                e->n);
        json_num(f, fig ? e->mean_abs_pct : NAN);
        fputs(", \"global_pct\": ", f);
        json_num(f, fig ? e->global_pct : NAN);
        fputs(", \"p95_abs_pct\": ", f);
        json_num(f, fig ? e->p95_abs_pct : NAN);
        fputs(", \"max_abs_pct\": ", f);
        json_num(f, fig ? e->max_abs_pct : NAN);
        if (fig)
            fprintf(f, ", \"best_flow\": %" PRIu64 ", \"worst_flow\": %" PRIu64, e->best, e->worst);
        else
            fputs(", \"best_flow\": null, \"worst_flow\": null", f);
        fputs(", \"best_abs_pct\": ", f);
        json_num(f, fig ? e->best_abs_pct : NAN);
        fputs(", \"withheld\": ", f);
        fc__json_str(f, withheld);
        putc('}', f);
    }
    fputs("},\n", f);
}

void fc__report_json_flow_predicted(FILE *f, const fc__analysis *a, uint64_t id)
{
    const fc__prediction *pr = a->pred;
    if (pr == NULL || id >= a->match->ninter) {
        fputs(", \"predicted\": null", f);
        return;
    }
    fputs(", \"predicted\": {", f);
    for (unsigned j = 0; j < pr->nmodels; j++) {
        fprintf(f, "%s\"%s\": ", j ? ", " : "", fc__model_name(pr->model[j]));
        json_num(f, pr->pred[j][id]);
    }
    putc('}', f);
}

void fc__report_json_interval_error(FILE *f, const fc__analysis *a, size_t v)
{
    const fc__prediction *pr = a->pred;
    if (pr == NULL) {
        fputs(", \"predicted_error_pct\": null", f);
        return;
    }
    char why[128];
    int withheld = fc__report_errors_withheld(a, why, sizeof why) != NULL; /* as the errors */
    fputs(", \"predicted_error_pct\": {", f);
    for (unsigned j = 0; j < pr->nmodels; j++) {
        fprintf(f, "%s\"%s\": ", j ? ", " : "", fc__model_name(pr->model[j]));
        json_num(f, withheld ? NAN : pr->iv_err[j][v]);
    }
    putc('}', f);
}

void fc__report_csv_predicted_header(FILE *f, const fc__analysis *a)
{
    const fc__prediction *pr = a->pred;
    for (unsigned j = 0; pr && j < pr->nmodels; j++)
        fprintf(f, ",predicted_%s", fc__model_name(pr->model[j]));
}

void fc__report_csv_predicted(FILE *f, const fc__analysis *a, const fc__flow *fl)
{
    const fc__prediction *pr = a->pred;
    for (unsigned j = 0; pr && j < pr->nmodels; j++) {
        putc(',', f);
        if (!fl->intra && isfinite(pr->pred[j][fl->id]))
            fprintf(f, "%.9f", pr->pred[j][fl->id]);
    }
}

/* ---- text ---------------------------------------------------------------------------------------- */

typedef struct ranked {
    size_t i;
    double err;
} ranked;

static int cmp_ranked(const void *x, const void *y)
{
    const ranked *p = x, *q = y;
    if (p->err != q->err)
        return p->err < q->err ? 1 : -1; /* largest error first */
    return (p->i > q->i) - (p->i < q->i);
}

static int ranked_below(const void *ctx, const ranked *x, const ranked *y)
{
    (void)ctx;
    return cmp_ranked(x, y) < 0;
}

FC__HEAP(rh, ranked, ranked_below)

/* Puts the first `show` of r[0..n) in cmp_ranked's order (a total order: ties go by index) in
 * r[0..show), sorted, as a sort of the whole array would. Only `show` rows are printed, so when
 * they are few the others are passed over through a heap of the ones kept (the last of them on
 * top): O(n log show) instead of sorting hundreds of thousands of flows and intervals. */
static void rank_first(ranked *r, size_t n, size_t show)
{
    if (show == 0 || show >= n / 2) {
        qsort(r, n, sizeof *r, cmp_ranked);
        return;
    }
    for (size_t i = 1; i < show; i++)
        rh_up(NULL, r, i);
    for (size_t i = show; i < n; i++)
        if (cmp_ranked(&r[i], &r[0]) < 0) {
            r[0] = r[i];
            rh_down(NULL, r, show, 0);
        }
    qsort(r, show, sizeof *r, cmp_ranked);
}

/* The model the per-flow and per-interval lists are ranked by: flowcut when it ran. */
static unsigned lead_model(const fc__prediction *pr)
{
    for (unsigned j = 0; j < pr->nmodels; j++)
        if (pr->model[j] == FC_MODEL_FLOWCUT)
            return j;
    return 0;
}

static void text_platform(FILE *f, const fc__prediction *pr)
{
    const fc__profile *p = pr->profile;
    if (pr->platform[0])
        fprintf(f, "platform:        %s (%s, %" PRIu32 " nodes x %" PRIu32 " ranks%s%s)\n", pr->platform, p->source,
                p->nodes, p->ranks_per_node, p->network[0] ? ", " : "", p->network);
    else
        fprintf(f, "platform:        %s\n", pr->note);
    const fc__segment *s = fc__profile_segment(p, 0, UINT64_MAX - 1);
    if (s != NULL)
        fprintf(f, "inter-node:      latency %.1f us, %.1f MB/s for large messages\n", s->latency * 1e6,
                1e-6 / s->per_byte);
    if (pr->skipped[0])
        fprintf(f, "not run:         %s\n", pr->skipped);
}

int fc__report_text_prediction(FILE *f, const fc__analysis *a)
{
    const fc__prediction *pr = a->pred;
    const fc__match *m = a->match;
    if (pr == NULL)
        return 0;
    fputs("\n== predicted versus observed ==\n", f);
    text_platform(f, pr);
    if (pr->nmodels == 0 || m->ninter == 0) {
        fputs("no inter-node flow to predict\n", f);
        return 0;
    }
    char why[128];
    if (fc__report_errors_withheld(a, why, sizeof why) != NULL) {
        /* Every flow was predicted, but too few can judge a model of the network. */
        fprintf(f, "%s: no error figure (--flows all counts every class but below-wire; JSON and CSV hold every "
                   "flow's predictions)\n",
                why);
        return 0;
    }
    fprintf(f, "%-10s %6s %12s %12s %10s %10s  %-14s %-14s\n", "model", "flows", "mean |err|", "global err", "p95",
            "max", "best flow", "worst flow");
    for (unsigned j = 0; j < pr->nmodels; j++) {
        const fc__errors *e = &pr->err[j];
        char best[40], worst[40];
        snprintf(best, sizeof best, "%" PRIu64 " (%.1f%%)", e->best, e->best_abs_pct);
        snprintf(worst, sizeof worst, "%" PRIu64 " (%.1f%%)", e->worst, e->max_abs_pct);
        fprintf(f, "%-10s %6zu %11.1f%% %11.1f%% %9.1f%% %9.1f%%  %-14s %-14s\n", fc__model_name(pr->model[j]), e->n,
                e->mean_abs_pct, e->global_pct, e->p95_abs_pct, e->max_abs_pct, e->n ? best : "-",
                e->n ? worst : "-");
    }
    if (a->obs != NULL)
        fprintf(f, "(each figure over the %zu %s%s of %zu inter-node flows; predictions are made for every flow)\n",
                fc__report_njudged(a), a->obs->all ? "flows of every class but below-wire" : "network flows",
                fc__report_njudged(a) < a->obs->njudged ? " between point-to-point messages" : "", m->ninter);
    unsigned lead = lead_model(pr);
    ranked *r = malloc((m->ninter ? m->ninter : 1) * sizeof *r);
    if (r == NULL)
        return FC_ENOMEM;
    size_t nr = 0;
    /* As the error statistics: the flows they count. */
    for (size_t i = 0; i < m->ninter; i++)
        if (!m->flows[i].coll && m->flows[i].observed > 0 && isfinite(pr->pred[lead][i]) &&
            (a->obs == NULL || fc__report_judged(a, i))) /* as the error statistics */
            r[nr++] = (ranked){i, fabs(pr->pred[lead][i] - m->flows[i].observed) / m->flows[i].observed};
    if (nr == 0 && m->ninter > 0) {
        /* Every inter-node flow is a collective's step, whose time is inferred: the calls are
         * compared below instead. */
        fputs("(no point-to-point flow between nodes: the collective calls are compared below)\n", f);
        free(r);
        return 0;
    }
    size_t show = a->top && a->top < nr ? a->top : nr;
    rank_first(r, nr, show);
    fprintf(f, "\nflows where %s and the observation part most (seconds):\n", fc__model_name(pr->model[lead]));
    fprintf(f, "%6s  %-21s %10s %10s", "flow", "src > dst", "bytes", "observed");
    for (unsigned j = 0; j < pr->nmodels; j++)
        fprintf(f, " %10s", fc__model_name(pr->model[j]));
    putc('\n', f);
    for (size_t q = 0; q < show; q++) {
        const fc__flow *fl = &m->flows[r[q].i];
        char route[64];
        snprintf(route, sizeof route, "%s > %s", node_name(m, fl->src_node), node_name(m, fl->dst_node));
        fprintf(f, "%6" PRIu64 "  %-21s %10" PRIu64 " %10.6f", fl->id, route, fl->bytes, fl->observed);
        for (unsigned j = 0; j < pr->nmodels; j++)
            fprintf(f, " %10.6f", pr->pred[j][fl->id]);
        putc('\n', f);
    }
    if (a->top && nr > a->top)
        fprintf(f, "  ... %zu more flows (--top)\n", nr - a->top);
    size_t niv = fc__intervals_count(a->iv);
    ranked *ri = realloc(r, (niv ? niv : 1) * sizeof *r);
    if (ri == NULL) {
        free(r);
        return FC_ENOMEM;
    }
    r = ri;
    nr = 0;
    for (size_t v = 0; v < niv; v++)
        if (isfinite(pr->iv_err[lead][v]))
            r[nr++] = (ranked){v, pr->iv_err[lead][v]};
    show = a->top && a->top < nr ? a->top : nr;
    rank_first(r, nr, show);
    fprintf(f, "\nintervals whose flows %s predicts worst (mean |error| of the flows active in them):\n",
            fc__model_name(pr->model[lead]));
    for (size_t q = 0; q < show; q++) {
        const fc__interval *in = fc__intervals_get(a->iv, r[q].i);
        fprintf(f, "  [%.6f, %.6f] s  %zu flows  ", in->start, in->end, in->nflows);
        for (unsigned j = 0; j < pr->nmodels; j++)
            fprintf(f, " %s %.1f%%", fc__model_name(pr->model[j]), pr->iv_err[j][r[q].i]);
        putc('\n', f);
    }
    if (a->top && nr > a->top)
        fprintf(f, "  ... %zu more intervals (--top)\n", nr - a->top);
    free(r);
    return 0;
}
