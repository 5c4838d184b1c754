/* analyzer/report/html.c: the HTML report, one self-contained page: the page of html-page.html
 * with the analysis embedded as a JSON document, which the page's own script draws. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/internal.h"
#include "util/numfmt.h"
#include "report/report.h"
#include "report/shared.h"
#include "report/html.h"

/* Beyond FC__HTML_ALL_FLOWS flows: the worst intervals shown in full, the flows they hold (at most
 * WORST_FLOWS), an even sample of SAMPLE others, and up to MAX_BINS bins across the run. */
#define WORST 12
#define WORST_FLOWS 2500
#define SAMPLE 1500
#define MAX_BINS 400
#define NKINDS 5

/* Copies the JSON text s[0..n) into f where a script element holds it: '<', '>' and '&' occur in
 * JSON only inside strings, where \u escapes mean the same characters, so that no text of a trace
 * can close the element or open a comment, whatever it holds. */
static void put_escaped(FILE *f, const char *s, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep = s[i] == '<' ? "\\u003c" : s[i] == '>' ? "\\u003e" : s[i] == '&' ? "\\u0026" : NULL;
        if (rep == NULL)
            continue;
        fwrite(s + from, 1, i - from, f);
        fputs(rep, f);
        from = i + 1;
    }
    fwrite(s + from, 1, n - from, f);
}

/* The page around the data doc[0..n). */
static int put_page(FILE *f, const char *doc, size_t n)
{
    fputs(fc__html_head, f);
    fputs("<script type=\"application/json\" id=\"fc-data\">", f);
    put_escaped(f, doc, n);
    fputs("</script>\n", f);
    fputs(fc__html_tail, f);
    return fc__rp_finish(f);
}

static void json_secs(FILE *f, double x)
{
    if (isfinite(x))
        fc__put_secs(f, x);
    else
        fputs("null", f);
}

/* Interval i's largest conflict degree, from the flows' label histories: the lean intervals keep
 * no labels of their own. */
static int interval_max_k(const fc__analysis *a, uint32_t **out)
{
    size_t niv = fc__intervals_count(a->iv);
    uint32_t *mk = calloc(niv ? niv : 1, sizeof *mk);
    if (mk == NULL)
        return fc__err(FC_ENOMEM, "out of memory writing the HTML report");
    for (size_t id = 0; id < a->match->ninter; id++) {
        const fc__label_run *runs;
        size_t nruns;
        if (fc__intervals_history(a->iv, id, &runs, &nruns) < 0)
            continue;
        for (size_t r = 0; r < nruns; r++)
            if (runs[r].label.kind != FC_CONFLICT_NONE)
                for (size_t i = runs[r].first; i < runs[r].first + runs[r].count && i < niv; i++)
                    if (runs[r].label.k > mk[i])
                        mk[i] = runs[r].label.k;
    }
    *out = mk;
    return 0;
}

/* The WORST intervals as the text report ranks them: largest conflict, then most flows, then
 * longest; their indices in worst[0..*nworst), in time order. */
static void pick_worst(const fc__analysis *a, const uint32_t *mk, size_t *worst, size_t *nworst)
{
    size_t niv = fc__intervals_count(a->iv), n = 0;
    for (size_t i = 0; i < niv; i++) {
        const fc__interval *v = fc__intervals_get(a->iv, i);
        if (mk[i] < 2)
            continue;
        /* Insertion into the best WORST so far. */
        size_t p = n < WORST ? n++ : WORST;
        while (p > 0) {
            const fc__interval *w = fc__intervals_get(a->iv, worst[p - 1]);
            int better = mk[i] != mk[worst[p - 1]] ? mk[i] > mk[worst[p - 1]]
                         : v->nflows != w->nflows  ? v->nflows > w->nflows
                                                   : v->end - v->start > w->end - w->start;
            if (!better)
                break;
            if (p < WORST)
                worst[p] = worst[p - 1];
            p--;
        }
        if (p < WORST)
            worst[p] = i;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && worst[j] < worst[j - 1]; j--) {
            size_t t = worst[j];
            worst[j] = worst[j - 1];
            worst[j - 1] = t;
        }
    *nworst = n;
}

/* Why the page gives no error figure, in the words of the text report's `predicted versus
 * observed` section, which gives none in the same cases: no flow that can judge a model, or fewer
 * than FC_SELFCAL_MIN_FLOWS network flows (one or two flows' errors would still read as a verdict
 * on the models). NULL when the page gives them, or has no prediction to judge at all. */
static const char *no_error_figure(const fc__analysis *a, char *buf, size_t len)
{
    const fc__observation *o = a->obs;
    if (a->pred == NULL || a->pred->nmodels == 0 || a->match->ninter == 0 || o == NULL)
        return NULL;
    size_t nj = fc__report_njudged(a);
    if (nj == 0 && o->njudged > 0)
        snprintf(buf, len, "no point-to-point %s to judge the models on (the collective calls are compared per "
                 "call): no error figure (JSON and CSV hold every flow's predictions)", o->all ? "flow" : "network flow");
    else if (nj == 0)
        snprintf(buf, len, "no %s to judge the models on: no error figure (--flows all counts every class but "
                 "below-wire; JSON and CSV hold every flow's predictions)", o->all ? "flow" : "network flow");
    else if (!o->all && nj < FC_SELFCAL_MIN_FLOWS)
        snprintf(buf, len, "too few network flows (%zu) to judge the models on: no error figure (--flows all counts "
                 "every class but below-wire; JSON and CSV hold every flow's predictions)", nj);
    else
        return NULL;
    return buf;
}

/* The members the page needs beyond the document's: what ran, the span, the traffic, the hot
 * nodes, the worst intervals and, for a long trace, the bins. keep[id] says which flows the
 * document lists. */
static int put_html_member(FILE *f, const fc__analysis *a, const char *remap_json, unsigned char **keep_out)
{
    const fc__match *m = a->match;
    size_t nf = m->ninter, niv = fc__intervals_count(a->iv);
    int sampled = nf > FC__HTML_ALL_FLOWS, rc = 0;
    uint32_t *mk = NULL;
    double *hot = NULL, *bins = NULL;
    unsigned char *keep = calloc(nf ? nf : 1, 1);
    size_t worst[WORST], nworst = 0, nb = 0;

    if (keep == NULL || (hot = calloc(m->nnodes ? m->nnodes * NKINDS : 1, sizeof *hot)) == NULL) {
        rc = fc__err(FC_ENOMEM, "out of memory writing the HTML report");
        goto out;
    }
    if ((rc = interval_max_k(a, &mk)) < 0)
        goto out;
    pick_worst(a, mk, worst, &nworst);

    double t0 = INFINITY, t1 = -INFINITY;
    for (size_t i = 0; i < nf; i++) {
        if (isfinite(m->flows[i].start) && m->flows[i].start < t0)
            t0 = m->flows[i].start;
        if (isfinite(m->flows[i].end) && m->flows[i].end > t1)
            t1 = m->flows[i].end;
    }
    if (!(t1 > t0)) {
        t0 = isfinite(t0) ? t0 : 0;
        t1 = t0 + 1e-6;
    }
    if (sampled) {
        nb = MAX_BINS;
        size_t cap = 200000 / (m->nnodes ? m->nnodes * NKINDS : 1);
        if (nb > cap)
            nb = cap < 20 ? 20 : cap;
        if ((bins = calloc(m->nnodes * NKINDS * nb + 1, sizeof *bins)) == NULL) {
            rc = fc__err(FC_ENOMEM, "out of memory writing the HTML report");
            goto out;
        }
    }
    double width = (t1 - t0) / (nb ? (double)nb : 1.0);

    /* Hot nodes and bins from the label histories; the flows to list. */
    size_t stride = sampled ? (nf + SAMPLE - 1) / SAMPLE : 1, nworstflows = 0;
    for (size_t id = 0; id < nf; id++) {
        const fc__flow *fl = &m->flows[id];
        const fc__label_run *runs;
        size_t nruns;
        if (!sampled || id % stride == 0)
            keep[id] = 1;
        if (fc__intervals_history(a->iv, id, &runs, &nruns) < 0)
            nruns = 0;
        for (size_t r = 0; r < nruns; r++) {
            const fc__label *l = &runs[r].label;
            double len = runs[r].end - runs[r].start;
            if (!(len > 0) || l->kind >= NKINDS)
                continue;
            /* The hot nodes count the flows the text report's do (the judged ones, when the
             * flows' times are classed). */
            if (l->kind != FC_CONFLICT_NONE && l->node < m->nnodes && (a->obs == NULL || a->obs->judged[id]))
                hot[l->node * NKINDS + l->kind] += len;
            if (bins != NULL && fl->src_node < m->nnodes) {
                /* The mean number of flows under this label in each bin it overlaps. */
                double *row = &bins[(fl->src_node * NKINDS + l->kind) * nb];
                size_t b0 = (size_t)fmax(0, floor((runs[r].start - t0) / width));
                for (size_t b = b0; b < nb; b++) {
                    double lo = t0 + (double)b * width, hi = lo + width;
                    if (lo >= runs[r].end)
                        break;
                    double ov = fmin(hi, runs[r].end) - fmax(lo, runs[r].start);
                    if (ov > 0)
                        row[b] += ov / width;
                }
            }
        }
        if (sampled && nworstflows < WORST_FLOWS)
            for (size_t w = 0; w < nworst; w++) {
                const fc__interval *v = fc__intervals_get(a->iv, worst[w]);
                if (fl->start < v->end && fl->end > v->start) {
                    if (!keep[id])
                        nworstflows++;
                    keep[id] = 1;
                    break;
                }
            }
    }

    fputs("  \"html\": {\"version\": 1, \"program\": ", f);
    const fc_rank *r0 = fc_trace_nranks(a->trace) ? fc_trace_rank(a->trace, 0) : NULL;
    fc__json_str(f, r0 != NULL ? r0->info.program : "");
    fputs(", \"argv\": [", f);
    for (uint32_t i = 0; r0 != NULL && i < r0->info.argc; i++) {
        fputs(i ? ", " : "", f);
        fc__json_str(f, r0->info.argv[i]);
    }
    char why[200];
    fputs("], \"no_error_figure\": ", f);
    fc__json_str(f, no_error_figure(a, why, sizeof why));
    fprintf(f, ", \"remap_only\": false, \"flows_total\": %zu, \"sampled\": %s, \"t0\": ", nf, sampled ? "true" : "false");
    json_secs(f, t0);
    fputs(", \"t1\": ", f);
    json_secs(f, t1);
    fputs(",\n    \"traffic\": [", f);
    for (size_t i = 0; i < m->ntraffic; i++)
        fprintf(f, "%s{\"src\": %" PRIu32 ", \"dst\": %" PRIu32 ", \"bytes\": %.17g, \"messages\": %" PRIu64 "}",
                i ? ", " : "", m->traffic[i].src, m->traffic[i].dst, m->traffic[i].bytes, m->traffic[i].count);
    fputs("],\n    \"hot_nodes\": [", f);
    for (size_t n = 0; n < m->nnodes; n++) {
        fprintf(f, "%s{\"node\": %zu", n ? ", " : "", n);
        for (uint32_t k = 1; k < NKINDS; k++) {
            fprintf(f, ", \"%s\": ", fc__conflict_name(k));
            json_secs(f, hot[n * NKINDS + k]);
        }
        putc('}', f);
    }
    fputs("],\n    \"worst\": [", f);
    for (size_t w = 0; w < nworst; w++) {
        const fc__interval *v = fc__intervals_get(a->iv, worst[w]);
        fprintf(f, "%s{\"index\": %zu, \"start\": ", w ? ", " : "", worst[w]);
        json_secs(f, v->start);
        fputs(", \"end\": ", f);
        json_secs(f, v->end);
        fprintf(f, ", \"k\": %" PRIu32 ", \"flows\": %zu}", mk[worst[w]], v->nflows);
    }
    fprintf(f, "], \"intervals\": %zu,\n    \"bins\": ", niv);
    if (bins == NULL)
        fputs("null", f);
    else {
        fprintf(f, "{\"start\": ");
        json_secs(f, t0);
        fputs(", \"width\": ", f);
        fprintf(f, "%.17g, \"count\": %zu, \"rows\": [", width, nb);
        for (size_t n = 0; n < m->nnodes; n++) {
            fprintf(f, "%s\n      {\"node\": %zu, \"kinds\": {", n ? "," : "", n);
            int first = 1;
            for (uint32_t k = 0; k < NKINDS; k++) {
                const double *row = &bins[(n * NKINDS + k) * nb];
                size_t b = 0;
                while (b < nb && row[b] == 0)
                    b++;
                if (b == nb)
                    continue;
                fprintf(f, "%s\"%s\": [", first ? "" : ", ", fc__conflict_name(k));
                for (b = 0; b < nb; b++)
                    fprintf(f, "%s%.4g", b ? "," : "", row[b]);
                putc(']', f);
                first = 0;
            }
            fputs("}}", f);
        }
        fputs("]}", f);
    }
    fputs(",\n    \"remap\": ", f);
    fc__json_str(f, remap_json);
    fputs("},\n", f);
out:
    free(mk);
    free(hot);
    free(bins);
    if (rc < 0)
        free(keep);
    else
        *keep_out = keep;
    return rc;
}

/* The flows from..to-1 of the match (those keep marks, when given) as the items of a JSON array
 * whose "[" is written, closed with "],". */
static void flow_items(fc__obuf *o, const fc__analysis *a, size_t from, size_t to, const unsigned char *keep)
{
    int first = 1;
    for (size_t i = from; i < to; i++) {
        if (keep != NULL && !keep[i])
            continue;
        if (first)
            FC__OB_LIT(o, "\n    ");
        else
            FC__OB_LIT(o, ",\n    ");
        fc__rp_json_flow(o, a, &a->match->flows[i]);
        first = 0;
    }
    if (first)
        FC__OB_LIT(o, "],\n");
    else
        FC__OB_LIT(o, "\n  ],\n");
}

int fc__report_html(FILE *f, const fc__analysis *a, const char *remap_json)
{
    const fc__match *m = a->match;
    char *doc = NULL;
    size_t n = 0;
    unsigned char *keep = NULL;
    fc__obuf *o = NULL;
    int rc;
    FILE *ms = open_memstream(&doc, &n);
    if (ms == NULL)
        return fc__err(FC_ENOMEM, "writing the HTML report: %s", strerror(errno));
    /* The document of report.c, its intervals left out (the page draws the flows) and, for a long
     * trace, only the flows it shows and no intra-node message. */
    fc__rp_json_head(ms, a);
    fc__report_json_prediction(ms, a);
    fc__report_json_observation(ms, a);
    if ((rc = put_html_member(ms, a, remap_json, &keep)) < 0)
        goto out;
    if ((o = malloc(sizeof *o)) == NULL) {
        rc = fc__err(FC_ENOMEM, "writing the HTML report: out of memory");
        goto out;
    }
    fc__ob_init(o, ms);
    FC__OB_LIT(o, "  \"flows\": [");
    flow_items(o, a, 0, m->ninter, keep);
    /* The intra-node messages with the flows they go with: all of them, or none of a long trace. */
    FC__OB_LIT(o, "  \"intra\": [");
    flow_items(o, a, m->ninter, m->ninter <= FC__HTML_ALL_FLOWS ? m->nflows : m->ninter, NULL);
    fc__ob_flush(o);
    fc__rp_json_tail(ms, a);
out:
    free(o);
    free(keep);
    if (fclose(ms) != 0 && rc == 0)
        rc = fc__err(FC_ENOMEM, "writing the HTML report: %s", strerror(errno));
    if (rc == 0)
        rc = put_page(f, doc, n);
    free(doc);
    return rc;
}

int fc__report_html_remap(FILE *f, const char *trace, const char *remap_json)
{
    char *doc = NULL;
    size_t n = 0;
    FILE *ms = open_memstream(&doc, &n);
    if (ms == NULL)
        return fc__err(FC_ENOMEM, "writing the HTML report: %s", strerror(errno));
    fputs("{\n  \"trace\": ", ms);
    fc__json_str(ms, trace);
    fputs(",\n  \"html\": {\"version\": 1, \"remap_only\": true, \"remap\": ", ms);
    fc__json_str(ms, remap_json);
    fputs("}\n}\n", ms);
    int rc = fclose(ms) != 0 ? fc__err(FC_ENOMEM, "writing the HTML report: %s", strerror(errno)) : 0;
    if (rc == 0)
        rc = put_page(f, doc, n);
    free(doc);
    return rc;
}
