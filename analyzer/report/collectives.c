/* analyzer/report/collectives.c: what the reports say about the collective calls (collective/
 * calls.h): the JSON document's "collectives" member and collective wait states, and the text
 * report's collective lines. */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "util/internal.h"
#include "report/report.h"
#include "report/shared.h"
#include "model/model.h"

/* How the steps' times come about, in the words of calls.h, for both reports. */
static const char timing_note[] =
    "inferred, not observed: each rank's time in the call is split evenly among its steps of the "
    "algorithm; a step starts no earlier than the rank entered the call, its previous step ended and "
    "the steps that send it its inputs started; the last ends at the rank's exit";

static void json_num(FILE *f, double x)
{
    if (isfinite(x))
        fc__put_secs(f, x);
    else
        fputs("null", f);
}

void fc__report_json_coll_waits(FILE *f, const fc__analysis *a)
{
    const fc__colls *c = a->colls;
    const fc__match *m = a->match;
    static const char *const names[3] = {"wait_nxn_s", "late_broadcast_s", "early_reduce_s"};
    for (int k = 0; k < 3; k++) {
        const double *v = c == NULL ? NULL : k == 0 ? c->wait_nxn : k == 1 ? c->late_bcast : c->early_reduce;
        fprintf(f, "%s\"%s\": [", k ? ", " : "    ", names[k]);
        for (uint32_t r = 0; r < m->world; r++) {
            fputs(r ? ", " : "", f);
            json_num(f, v != NULL && r < c->world ? v[r] : 0.0);
        }
        putc(']', f);
    }
    fputs(",\n", f);
}

void fc__report_json_collectives(FILE *f, const fc__analysis *a)
{
    const fc__colls *c = a->colls;
    size_t ncalls = c ? c->ncalls : 0;
    fprintf(f, "  \"collectives\": {\"calls\": %zu, \"messages\": %" PRIu64 ", \"inter_node_messages\": %" PRIu64
               ", \"incomplete_calls\": %" PRIu64 ", \"timing\": ",
            ncalls, c ? c->flows : 0, c ? c->inter_flows : 0, c ? c->incomplete : 0);
    fc__json_str(f, timing_note);
    fputs(",\n    \"by_kind\": [", f);
    int first = 1;
    for (unsigned k = 0; c != NULL && k < FC_EV_MAX_; k++) {
        const fc__coll_kind_sum *s = &c->kinds[k];
        if (s->calls == 0)
            continue;
        fprintf(f, "%s{\"collective\": \"%s\", \"calls\": %" PRIu64 ", \"messages\": %" PRIu64
                   ", \"inter_node_messages\": %" PRIu64 ", \"inter_node_bytes\": %" PRIu64
                   ", \"intra_node_bytes\": %" PRIu64 "}",
                first ? "\n      " : ",\n      ", fc_event_kind_name(k), s->calls, s->flows, s->inter_flows,
                s->inter_bytes, s->intra_bytes);
        first = 0;
    }
    fputs(first ? "],\n    \"calls\": [" : "\n    ],\n    \"calls\": [", f);
    for (size_t i = 0; i < ncalls; i++) {
        const fc__coll_call *cl = &c->calls[i];
        const fc__coll_member *mem = c->members + cl->first;
        double enter = INFINITY, last = -INFINITY, longest = 0, sum = 0;
        for (size_t j = 0; j < cl->nmem; j++) {
            double d = mem[j].exit - mem[j].enter;
            enter = fmin(enter, mem[j].enter);
            last = fmax(last, mem[j].enter);
            longest = fmax(longest, d);
            sum += d;
        }
        fprintf(f, "%s{\"id\": %zu, \"collective\": \"%s\", \"algorithm\": ", i ? ",\n      " : "\n      ", i,
                fc_event_kind_name(cl->record_kind));
        fc__json_str(f, cl->alg ? fc__coll_alg_name(cl->alg) : NULL);
        fprintf(f, ", \"ranks\": %" PRIu32 ", \"present\": %zu, \"bytes\": %" PRIu64 ", \"messages\": %" PRIu64
                   ", \"inter_node_bytes\": %" PRIu64 ", \"enter\": ",
                cl->p, cl->nmem, cl->n, cl->nflows, cl->inter_bytes);
        json_num(f, cl->nmem ? enter : NAN);
        fputs(", \"entry_skew_s\": ", f);
        json_num(f, cl->nmem ? last - enter : NAN);
        fputs(", \"observed_max_s\": ", f);
        json_num(f, longest);
        fputs(", \"observed_mean_s\": ", f);
        json_num(f, cl->nmem ? sum / (double)cl->nmem : NAN);
        fputs(", \"wait_s\": ", f);
        json_num(f, cl->wait_s);
        fputs(", \"site\": ", f);
        fc__json_str(f, cl->nmem ? fc__report_site(a, mem[0].rank, mem[0].site) : NULL);
        const fc__coll_pred *cp = a->cpred;
        fputs(", \"observed_s\": ", f);
        json_num(f, cp ? cp->obs[i] : NAN);
        fputs(", \"predicted\": ", f);
        if (cp == NULL || isnan(cp->obs[i]))
            fputs("null", f);
        else
            for (unsigned j = 0; j < cp->nmodels; j++) {
                fprintf(f, "%s\"%s\": ", j ? ", " : "{", fc__model_name(cp->model[j]));
                json_num(f, cp->pred[j][i]);
                fputs(j + 1 == cp->nmodels ? "}" : "", f);
            }
        putc('}', f);
    }
    fputs(ncalls ? "\n    ]},\n" : "]},\n", f);
}

static const char *hb(char *buf, size_t n, double b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
    return buf;
}

void fc__report_text_collectives(FILE *f, const fc__analysis *a)
{
    const fc__colls *c = a->colls;
    if (c == NULL || c->ncalls == 0)
        return;
    char b1[32], b2[32];
    uint64_t inter = 0, intra = 0;
    for (unsigned k = 0; k < FC_EV_MAX_; k++) {
        inter += c->kinds[k].inter_bytes;
        intra += c->kinds[k].intra_bytes;
    }
    fprintf(f, "collectives:     %zu calls expanded into %" PRIu64 " messages (%" PRIu64
               " inter-node): %s between nodes, %s inside nodes\n",
            c->ncalls, c->flows, c->inter_flows, hb(b1, sizeof b1, (double)inter), hb(b2, sizeof b2, (double)intra));
    for (unsigned k = 0; k < FC_EV_MAX_; k++) {
        const fc__coll_kind_sum *s = &c->kinds[k];
        if (s->calls == 0)
            continue;
        /* The algorithms the calls of this kind ran. */
        char algs[160] = "";
        unsigned seen = 0;
        for (size_t i = 0; i < c->ncalls; i++) {
            const fc__coll_call *cl = &c->calls[i];
            if (cl->record_kind != k || (seen & (1u << cl->alg)))
                continue;
            seen |= 1u << cl->alg;
            size_t l = strlen(algs);
            snprintf(algs + l, sizeof algs - l, "%s%s", l ? ", " : "", cl->alg ? fc__coll_alg_name(cl->alg) : "not expanded");
        }
        fprintf(f, "  %-24s %6" PRIu64 " calls, %8" PRIu64 " messages, %10s between nodes, %10s inside (%s)\n",
                fc_event_kind_name(k), s->calls, s->flows, hb(b1, sizeof b1, (double)s->inter_bytes),
                hb(b2, sizeof b2, (double)s->intra_bytes), algs);
    }
    fprintf(f, "  collective steps' times are %s\n", timing_note);
}

void fc__report_json_errors_collective(FILE *f, const fc__analysis *a)
{
    const fc__coll_pred *cp = a->cpred;
    if (a->pred == NULL) {
        fputs("  \"errors_collective\": null,\n", f);
        return;
    }
    fputs("  \"errors_collective\": {", f);
    for (unsigned j = 0; j < a->pred->nmodels; j++) {
        const fc__errors *e = cp ? &cp->err[j] : NULL;
        size_t n = e ? e->n : 0;
        fprintf(f, "%s\"%s\": {\"calls\": %zu, \"mean_abs_pct\": ", j ? ", " : "", fc__model_name(a->pred->model[j]), n);
        json_num(f, n ? e->mean_abs_pct : NAN);
        fputs(", \"global_pct\": ", f);
        json_num(f, n ? e->global_pct : NAN);
        fputs(", \"p95_abs_pct\": ", f);
        json_num(f, n ? e->p95_abs_pct : NAN);
        fputs(", \"max_abs_pct\": ", f);
        json_num(f, n ? e->max_abs_pct : NAN);
        if (n)
            fprintf(f, ", \"best_call\": %" PRIu64 ", \"worst_call\": %" PRIu64 "}", e->best, e->worst);
        else
            fputs(", \"best_call\": null, \"worst_call\": null}", f);
    }
    fputs("},\n", f);
}

/* The calls of one call site (of the lowest member rank's record). */
typedef struct site_sum {
    uint32_t kind, rank;
    uint64_t site;
    size_t calls;
    double obs, pred[FC_NMODELS];
} site_sum;

/* The row of call cl's site among the n rows of v, added when new (v has room for every call). */
static site_sum *site_row(site_sum *v, size_t *n, const fc__coll_call *cl, const fc__coll_member *m0)
{
    size_t k = 0;
    while (k < *n && !(v[k].kind == cl->record_kind && v[k].rank == m0->rank && v[k].site == m0->site))
        k++;
    if (k == *n)
        v[(*n)++] = (site_sum){.kind = cl->record_kind, .rank = m0->rank, .site = m0->site};
    return &v[k];
}

static int cmp_site_sum(const void *x, const void *y)
{
    const site_sum *a = x, *b = y;
    if (a->obs != b->obs)
        return a->obs > b->obs ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

int fc__report_text_coll_prediction(FILE *f, const fc__analysis *a)
{
    const fc__coll_pred *cp = a->cpred;
    const fc__colls *c = a->colls;
    if (cp == NULL || c == NULL || cp->npredicted == 0)
        return 0;
    fprintf(f, "\ncollective calls (%zu predicted: each model replays the call's messages from the ranks' "
               "entries; observed: first entry to last exit):\n",
            cp->npredicted);
    fprintf(f, "%-10s %6s %12s %12s %10s %10s\n", "model", "calls", "mean |err|", "global err", "p95", "max");
    for (unsigned j = 0; j < cp->nmodels; j++) {
        const fc__errors *e = &cp->err[j];
        fprintf(f, "%-10s %6zu %11.1f%% %11.1f%% %9.1f%% %9.1f%%\n", fc__model_name(cp->model[j]), e->n,
                e->mean_abs_pct, e->global_pct, e->p95_abs_pct, e->max_abs_pct);
    }
    /* How much of the observed time the models are given: every replay starts each member at
     * its observed entry, so the members' entry skew (first to last entry) is in the prediction
     * as observed; what the models predict is the time after the last member entered. */
    double skew = 0, obs = 0, after[FC_NMODELS] = {0};
    for (size_t i = 0; i < c->ncalls; i++) {
        const fc__coll_call *cl = &c->calls[i];
        const fc__coll_member *mem = c->members + cl->first;
        if (isnan(cp->obs[i]) || !(cp->obs[i] > 0) || cl->nmem == 0)
            continue;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t j = 0; j < cl->nmem; j++)
            lo = fmin(lo, mem[j].enter), hi = fmax(hi, mem[j].enter);
        skew += hi - lo;
        obs += cp->obs[i];
        for (unsigned j = 0; j < cp->nmodels; j++)
            after[j] += fmax(0, cp->pred[j][i] - (hi - lo));
    }
    if (obs > 0) {
        fprintf(f, "entry skew:      %.1f%% of the observed time (the ranks' entries are given to every model); of the "
                   "%.6f s after the last rank entered, predicted:",
                100 * skew / obs, obs - skew);
        for (unsigned j = 0; j < cp->nmodels; j++)
            fprintf(f, " %s %.1f%%", fc__model_name(cp->model[j]), obs > skew ? 100 * after[j] / (obs - skew) : 0.0);
        putc('\n', f);
    }
    site_sum *v = calloc(c->ncalls + 1, sizeof *v);
    size_t n = 0;
    if (v == NULL)
        return FC_ENOMEM;
    for (size_t i = 0; i < c->ncalls; i++) {
        const fc__coll_call *cl = &c->calls[i];
        if (isnan(cp->obs[i]) || cl->nmem == 0)
            continue;
        site_sum *row = site_row(v, &n, cl, &c->members[cl->first]);
        row->calls++;
        row->obs += cp->obs[i];
        for (unsigned j = 0; j < cp->nmodels; j++)
            row->pred[j] += cp->pred[j][i];
    }
    qsort(v, n, sizeof *v, cmp_site_sum);
    fprintf(f, "\nper call site (seconds in all its calls; the site of the lowest rank):\n");
    fprintf(f, "%-24s %6s %10s", "collective", "calls", "observed");
    for (unsigned j = 0; j < cp->nmodels; j++)
        fprintf(f, " %10s", fc__model_name(cp->model[j]));
    fputs("  site\n", f);
    size_t show = a->top && a->top < n ? a->top : n;
    for (size_t k = 0; k < show; k++) {
        const char *s = fc__report_site(a, v[k].rank, v[k].site);
        fprintf(f, "%-24s %6zu %10.6f", fc_event_kind_name(v[k].kind), v[k].calls, v[k].obs);
        for (unsigned j = 0; j < cp->nmodels; j++)
            fprintf(f, " %10.6f", v[k].pred[j]);
        fprintf(f, "  %s\n", s ? s : "(not recorded)");
    }
    if (show < n)
        fprintf(f, "  ... %zu more call sites (--top)\n", n - show);
    free(v);
    return 0;
}

void fc__report_text_coll_wait_sites(FILE *f, const fc__analysis *a)
{
    const fc__colls *c = a->colls;
    site_sum *v = c ? calloc(c->ncalls + 1, sizeof *v) : NULL;
    size_t n = 0;
    if (v == NULL)
        return; /* the per-rank table above has said the essential */
    for (size_t i = 0; i < c->ncalls; i++) {
        const fc__coll_call *cl = &c->calls[i];
        if (cl->nmem == 0 || !(cl->wait_s > 0))
            continue;
        site_sum *row = site_row(v, &n, cl, &c->members[cl->first]);
        row->calls++;
        row->obs += cl->wait_s; /* the waits, ranked as the observed times are */
    }
    qsort(v, n, sizeof *v, cmp_site_sum);
    fprintf(f, "\n  collective calls that waited most (seconds over their ranks; the site of the lowest rank)\n");
    size_t show = a->top && a->top < n ? a->top : n;
    for (size_t k = 0; k < show; k++) {
        const char *s = fc__report_site(a, v[k].rank, v[k].site);
        fprintf(f, "  %-24s %6zu calls %16.9f  %s\n", fc_event_kind_name(v[k].kind), v[k].calls, v[k].obs,
                s ? s : "(not recorded)");
    }
    if (n == 0)
        fputs("  (no collective waited)\n", f);
    free(v);
}
