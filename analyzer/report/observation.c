/* analyzer/report/observation.c: what each flow's observed time is made of (model/observe.h) in
 * the reports: the breakdown per class in text and JSON, each flow's class and parts, and the
 * clock checks on sends and on the wire. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "util/internal.h"
#include "report/report.h"

static void json_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.9f", x);
    else
        fputs("null", f);
}

void fc__report_json_clock_more(FILE *f, const fc__analysis *a)
{
    const fc__match *m = a->match;
    const fc__observation *o = a->obs;
    fprintf(f, ", \"send_violations\": %" PRIu64 ", \"send_violations_beyond_uncertainty\": %" PRIu64
               ", \"send_worst_s\": ",
            m->send_violations, m->send_violations_beyond);
    json_num(f, m->send_violations ? m->worst_send_violation : 0.0);
    /* What the observation finds is null where it did not run (documented members are always
     * there). */
    if (o != NULL) {
        fprintf(f, ", \"contradicting_flows\": %" PRIu64 ", \"contradicting_worst_s\": ", o->contradicting);
        json_num(f, o->contradicting ? o->worst_contradiction_s : 0.0);
        if (o->contradicting)
            fprintf(f, ", \"contradicting_worst_flow\": %" PRIu64, o->worst_contradicting_flow);
        else
            fputs(", \"contradicting_worst_flow\": null", f);
    } else
        fputs(", \"contradicting_flows\": null, \"contradicting_worst_s\": null, \"contradicting_worst_flow\": null", f);
    if (o != NULL && o->have_platform) {
        fprintf(f, ", \"below_wire\": %" PRIu64 ", \"below_wire_worst_s\": ", o->below_wire);
        json_num(f, o->below_wire ? o->worst_below_s : 0.0);
        if (o->below_wire)
            fprintf(f, ", \"below_wire_worst_flow\": %" PRIu64, o->worst_below_flow);
        else
            fputs(", \"below_wire_worst_flow\": null", f);
    } else
        fputs(", \"below_wire\": null, \"below_wire_worst_s\": null, \"below_wire_worst_flow\": null", f);
}

void fc__report_json_flow_observation(FILE *f, const fc__analysis *a, uint64_t id)
{
    const fc__observation *o = a->obs;
    if (o == NULL || id >= o->n) {
        fputs(", \"observation\": null", f);
        return;
    }
    const fc__obs *b = &o->flow[id];
    fprintf(f, ", \"observation\": {\"class\": \"%s\", \"late_peer_s\": ", fc__obs_class_name(b->cls));
    json_num(f, b->late_peer);
    fputs(", \"no_progress_s\": ", f);
    json_num(f, b->no_progress);
    fputs(", \"wire_s\": ", f);
    json_num(f, b->wire);
    fputs(", \"rest_s\": ", f);
    json_num(f, b->rest);
    fputs(", \"nic_busy\": ", f);
    if (o->have_platform)
        json_num(f, b->busy);
    else
        fputs("null", f);
    fprintf(f, ", \"clock\": %s, \"judged\": %s}", b->clock ? "true" : "false",
            fc__report_judged(a, id) ? "true" : "false");
}

int fc__report_judged(const fc__analysis *a, size_t i)
{
    const fc__observation *o = a->obs;
    return o != NULL && i < o->n && i < a->match->ninter && o->judged[i] && !a->match->flows[i].coll;
}

size_t fc__report_count_judged(const fc__match *m, const fc__observation *o)
{
    size_t n = 0;
    for (size_t i = 0; o != NULL && i < o->n && i < m->ninter; i++)
        n += o->judged[i] && !m->flows[i].coll;
    return n;
}

size_t fc__report_njudged(const fc__analysis *a)
{
    return a->obs != NULL ? a->njudged : 0;
}

void fc__report_json_observation(FILE *f, const fc__analysis *a)
{
    const fc__observation *o = a->obs;
    if (o == NULL) {
        fputs("  \"observation\": null,\n", f);
        return;
    }
    fprintf(f, "  \"observation\": {\"flows\": %zu, \"judged\": %zu, \"statistics_over\": \"%s\", \"platform\": %s, "
               "\"platform_note\": ",
            o->n, fc__report_njudged(a), o->all ? "all" : "network", o->have_platform ? "true" : "false");
    fc__json_str(f, o->platform_note[0] ? o->platform_note : NULL);
    fputs(", \"classes\": {", f);
    for (unsigned c = 0; c < FC_OBS_NCLASSES; c++) {
        fprintf(f, "%s\"%s\": {\"flows\": %" PRIu64 ", \"observed_s\": ", c ? ", " : "", fc__obs_class_name(c),
                o->count[c]);
        json_num(f, o->observed_s[c]);
        fputs(", \"late_peer_s\": ", f);
        json_num(f, o->late_peer_s[c]);
        fputs(", \"no_progress_s\": ", f);
        json_num(f, o->no_progress_s[c]);
        fputs(", \"wire_s\": ", f);
        json_num(f, o->wire_s[c]);
        fputs(", \"rest_s\": ", f);
        json_num(f, o->rest_s[c]);
        putc('}', f);
    }
    fputs("}, \"hosts\": [", f);
    for (size_t h = 0; h < o->nhosts; h++) {
        const fc__obs_host *x = &o->hosts[h];
        fputs(h ? ", {\"name\": " : "{\"name\": ", f);
        fc__json_str(f, x->name);
        fprintf(f, ", \"ranks\": %" PRIu32 ", \"nodes\": %" PRIu32 ", \"cores\": ", x->ranks, x->nodes);
        if (x->cores)
            fprintf(f, "%" PRIu32, x->cores);
        else
            fputs("null", f);
        fprintf(f, ", \"oversubscribed\": %s}", x->cores && x->ranks > x->cores ? "true" : "false");
    }
    fputs("]},\n", f);
}

void fc__report_text_counted(FILE *f, const fc__analysis *a)
{
    const fc__observation *o = a->obs;
    if (o == NULL)
        return;
    fprintf(f, "  counted: the %zu %s of %zu inter-node flows (classes: observed times below)\n", o->njudged,
            o->all ? "flows of every class but below-wire" : "network flows", o->n);
}

void fc__report_text_observation(FILE *f, const fc__analysis *a)
{
    const fc__observation *o = a->obs;
    if (o == NULL || o->n == 0)
        return;
    fputs("\n== observed times (what each flow's time is made of) ==\n", f);
    fprintf(f, "%-15s %7s %7s %14s %11s %11s %11s %11s\n", "class", "flows", "share", "observed s", "late-peer",
            "no-progr.", "wire", "rest");
    double total = 0;
    for (unsigned c = 0; c < FC_OBS_NCLASSES; c++)
        total += o->observed_s[c];
    for (unsigned c = 0; c < FC_OBS_NCLASSES; c++) {
        if (o->count[c] == 0)
            continue;
        fprintf(f, "%-15s %7" PRIu64 " %6.1f%% %14.6f %10.1f%% %10.1f%% %10.1f%% %10.1f%%\n", fc__obs_class_name(c),
                o->count[c], 100.0 * (double)o->count[c] / (double)o->n, o->observed_s[c],
                o->observed_s[c] > 0 ? 100 * o->late_peer_s[c] / o->observed_s[c] : 0.0,
                o->observed_s[c] > 0 ? 100 * o->no_progress_s[c] / o->observed_s[c] : 0.0,
                o->observed_s[c] > 0 ? 100 * o->wire_s[c] / o->observed_s[c] : 0.0,
                o->observed_s[c] > 0 ? 100 * o->rest_s[c] / o->observed_s[c] : 0.0);
    }
    fprintf(f, "(the parts in per cent of each class's observed time; %.6f s in all)\n", total);
    for (size_t h = 0; h < o->nhosts; h++) {
        const fc__obs_host *x = &o->hosts[h];
        if (x->cores && x->ranks > x->cores)
            fprintf(f, "oversubscribed:  %s ran %" PRIu32 " ranks (%" PRIu32 " node%s) on %" PRIu32 " core%s\n",
                    x->name, x->ranks, x->nodes, x->nodes == 1 ? "" : "s", x->cores, x->cores == 1 ? "" : "s");
    }
    if (!o->cores_known)
        fputs("cores:           not recorded for every rank (no affinity list): those ranks are taken to have a "
              "core each\n",
              f);
    if (!o->have_platform)
        fprintf(f, "no platform:     %s; without wire times, flows are told apart by waiting, oversubscription "
                   "and protocol only\n",
                o->platform_note[0] ? o->platform_note : "none given");
    else if (o->platform_note[0])
        fprintf(f, "no platform:     %s; the classes are those under the platform it fitted\n", o->platform_note);
    uint64_t net = o->count[FC_OBS_NETWORK];
    size_t coll = o->njudged - fc__report_njudged(a);
    if (o->all)
        fprintf(f, "judged:          %zu flows of every class but below-wire (--flows all)", fc__report_njudged(a));
    else
        fprintf(f, "judged:          the %zu network flows (--flows all for every class)",
                fc__report_njudged(a));
    if (coll)
        fprintf(f, "; %zu more are collectives' steps, compared per collective call", coll);
    putc('\n', f);
    if (net < FC_SELFCAL_MIN_FLOWS)
        fprintf(f, "too few network flows (%" PRIu64 ") to judge the models: this trace's times are set by "
                   "waiting, oversubscription or latency, not by the network\n",
                net);
}

static void warn(void (*fn)(const char *, void *), void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warn(void (*fn)(const char *, void *), void *arg, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fn(buf, arg);
}

void fc__report_observation_warnings(const fc__analysis *a, void (*fn)(const char *line, void *arg), void *arg)
{
    const fc__match *m = a->match;
    const fc__observation *o = a->obs;
    if (m->send_violations)
        warn(fn, arg,
             "%" PRIu64 " send%s that wait%s for the receive completed before the receive was posted (clock "
             "condition); worst by %.9f s on the message %" PRIu32 " -> %" PRIu32 "; %" PRIu64
             " beyond the clocks' uncertainty",
             m->send_violations, m->send_violations == 1 ? "" : "s", m->send_violations == 1 ? "s" : "",
             m->worst_send_violation, m->worst_send_src,
             m->worst_send_dst, m->send_violations_beyond);
    if (o != NULL && o->below_wire) {
        const fc__flow *w = &m->flows[o->worst_below_flow];
        warn(fn, arg,
             "%" PRIu64 " flow%s faster than the wire allows at the platform's rate (clock problem, left out of "
             "the statistics); worst: flow %" PRIu64 " (%" PRIu32 " -> %" PRIu32 ", %" PRIu64
             " bytes) observed %.9f s, %.9f s short of its data time",
             o->below_wire, o->below_wire == 1 ? "" : "s", w->id, w->src_rank, w->dst_rank, w->bytes, w->observed,
             o->worst_below_s);
    }
    if (o != NULL && a->pred == NULL && o->platform_note[0])
        /* Self-calibration declined: the models are left out, which a reader of the warnings
         * alone must learn too. */
        warn(fn, arg, "%s", o->platform_note);
    if (o != NULL && o->contradicting) {
        const fc__flow *w = &m->flows[o->worst_contradicting_flow];
        warn(fn, arg,
             "%" PRIu64 " flow%s whose ends contradict the clocks beyond their uncertainty (classed below-wire, left "
             "out of the statistics); worst: flow %" PRIu64 " (%" PRIu32 " -> %" PRIu32 ", %" PRIu64 " bytes), by %.9f s",
             o->contradicting, o->contradicting == 1 ? "" : "s", w->id, w->src_rank, w->dst_rank, w->bytes,
             o->worst_contradiction_s);
    }
}
