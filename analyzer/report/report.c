/* analyzer/report/report.c: the JSON document of an analysis, and the helpers the writers above
 * it share (a flow's main conflict, the warnings, flows in order of id). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "util/internal.h"
#include "util/numfmt.h"
#include "report/report.h"
#include "conflict/sweep.h"
#include "report/shared.h"

void fc__report_flow_main(const fc__analysis *a, uint64_t id, fc__label *main, double *conflict_s)
{
    const fc__label_run *runs = NULL;
    size_t nruns = 0;
    if (id >= a->match->ninter || fc__intervals_history(a->iv, id, &runs, &nruns) < 0)
        nruns = 0;
    fc__runs_main(runs, nruns, main, conflict_s);
}

/* Formats one warning line into buf and hands it to fn. */
static void warn(void (*fn)(const char *, void *), void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warn(void (*fn)(const char *, void *), void *arg, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* A warning is one line, whatever the rank's WARN text held. */
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    fn(buf, arg);
}

/* Why the rank file of world rank w was skipped, or NULL when it was not. */
static const char *skipped_why(const fc_trace *t, uint32_t w)
{
    for (size_t i = 0; i < fc_trace_nskipped(t); i++)
        if (fc_trace_skipped(t, i)->rank == w)
            return fc_trace_skipped(t, i)->why;
    return NULL;
}

void fc__report_warnings(const fc__analysis *a, void (*fn)(const char *line, void *arg), void *arg)
{
    const fc__match *m = a->match;
    if (m->unmatched_sends || m->unmatched_recvs)
        warn(fn, arg, "%" PRIu64 " unmatched send%s and %" PRIu64 " unmatched receive%s: left out of the flows",
             m->unmatched_sends, m->unmatched_sends == 1 ? "" : "s", m->unmatched_recvs,
             m->unmatched_recvs == 1 ? "" : "s");
    if (m->clock_violations)
        warn(fn, arg,
             "%" PRIu64 " receive%s completed before the matching send started (clock condition); worst by "
             "%.9f s on the message %" PRIu32 " -> %" PRIu32 " sent at %.9f s; %" PRIu64
             " beyond the clocks' uncertainty",
             m->clock_violations, m->clock_violations == 1 ? "" : "s", m->worst_violation, m->worst_src,
             m->worst_dst, m->worst_send, m->clock_violations_beyond);
    fc__report_observation_warnings(a, fn, arg);
    if (m->tracer_waits)
        /* Taking them out of the observation would move every later event of the rank, and its
         * peers' with it: that is a replay of the run, which flowcut remap makes. */
        warn(fn, arg,
             "the tracer made its ranks wait %" PRIu64 " time%s for a free buffer chunk, %.9f s in all (rank %" PRIu32
             " the longest, %.9f s): the observed times and wait states include them, only flowcut remap's "
             "replay takes them out (a larger FLOWCUT_BUFFER avoids them)",
             m->tracer_waits, m->tracer_waits == 1 ? "" : "s", m->tracer_wait_s, m->tracer_wait_rank,
             m->tracer_wait_rank_s);
    for (uint32_t r = 0; r < m->world; r++) {
        long i = fc_trace_find(a->trace, r);
        const char *why = i < 0 ? skipped_why(a->trace, r) : NULL;
        if (why != NULL)
            warn(fn, arg, "rank %" PRIu32 " left out, its rank file not read (%s): its messages are unmatched", r, why);
        else if (i < 0)
            warn(fn, arg, "rank %" PRIu32 " has no trace file: its messages are unmatched", r);
        else if (fc_trace_rank(a->trace, (size_t)i)->partial)
            warn(fn, arg, "rank %" PRIu32 " is partial: %s", r, fc_trace_rank(a->trace, (size_t)i)->partial_why);
    }
    for (size_t i = 0; i < fc_trace_nranks(a->trace); i++) {
        const fc_rank *rk = fc_trace_rank(a->trace, i);
        for (size_t w = 0; w < rk->nwarnings; w++)
            warn(fn, arg, "rank %" PRIu32 ": %s", rk->info.rank, rk->warnings[w]);
    }
    const fc__colls *c = a->colls;
    if (c != NULL && c->incomplete) {
        const fc__coll_call *cl = &c->calls[c->first_incomplete];
        warn(fn, arg,
             "%" PRIu64 " collective call%s with members missing or disagreeing: expanded for the ranks present "
             "(the first: %s #%zu of %" PRIu32 " ranks, %zu present, %" PRIu32 " records of another call left out)",
             c->incomplete, c->incomplete == 1 ? "" : "s", fc_event_kind_name(cl->record_kind), c->first_incomplete,
             cl->p, cl->nmem, cl->dropped);
    }
    if (c != NULL && c->ncalls && a->mpi_assumed)
        warn(fn, arg,
             "the trace does not name its MPI library: its %zu collective call%s are expanded with the algorithms "
             "MPICH 4.0.2 selects, an assumption (the library that ran may have used others)",
             c->ncalls, c->ncalls == 1 ? "" : "s");
    if (c != NULL && c->unsupported)
        warn(fn, arg,
             "%s (and %" PRIu32 " more) forces a collective algorithm flowcut does not model: MPICH's default "
             "selection stands in for it",
             c->unsupported_text, c->unsupported - 1);
    for (unsigned k = 0; c != NULL && k < FC_EV_MAX_; k++)
        if (c->inter_records[k])
            warn(fn, arg,
                 "%s on an inter-communicator (%" PRIu64 " record%s on its members): not expanded into "
                 "messages (flowcut has no model of MPICH's inter-communicator algorithm for it)",
                 fc_event_kind_name(k), c->inter_records[k], c->inter_records[k] == 1 ? "" : "s");
    if (c != NULL && c->unexpanded) {
        const fc__coll_call *cl = &c->calls[c->first_unexpanded];
        warn(fn, arg,
             "%" PRIu64 " collective call%s with an algorithm flowcut has no model of: not expanded into messages "
             "(the first: %s #%zu, %s on %" PRIu32 " ranks)",
             c->unexpanded, c->unexpanded == 1 ? "" : "s", fc_event_kind_name(cl->record_kind), c->first_unexpanded,
             fc__coll_alg_name(cl->alg), cl->p);
    }
    if (c != NULL && c->nbr_unknown)
        warn(fn, arg,
             "%" PRIu64 " neighbourhood collective record%s on communicators the trace gives no topology for (a "
             "trace of format 2.5 or older): not expanded into messages",
             c->nbr_unknown, c->nbr_unknown == 1 ? "" : "s");
    if (m->ninter == 0)
        warn(fn, arg, "no inter-node traffic: every message%s stays inside its node, so there is nothing to label "
                      "or predict",
             c != NULL && c->ncalls ? " and every step of the collectives" : "");
}

static void count_one(const char *line, void *arg)
{
    (void)line;
    ++*(size_t *)arg;
}

size_t fc__report_nwarnings(const fc__analysis *a)
{
    size_t n = 0;
    fc__report_warnings(a, count_one, &n);
    return n;
}

/* ---- JSON -------------------------------------------------------------------------------------- */


/* Seconds with ns resolution; JSON has no NaN or infinity, so those become null. */
static void json_secs(FILE *f, double x)
{
    if (isfinite(x))
        fc__put_secs(f, x);
    else
        fputs("null", f);
}

const char *fc__rp_node_name(const fc__match *m, uint32_t node)
{
    return node < m->nnodes ? m->nodes[node] : NULL;
}

/* Seconds into the buffer, null when not finite, as json_secs writes them. */
static void ob_secs(fc__obuf *o, double x)
{
    if (isfinite(x))
        fc__ob_secs(o, x);
    else
        FC__OB_LIT(o, "null");
}

/* The flows and the intervals are nearly all of a JSON document: they go through the buffered
 * writer of numfmt.h, which writes the same bytes as stdio would at a fraction of its cost per
 * piece. The predictions (report/predictions.c) write to the stream: the buffer is flushed first. */
static void json_flow(fc__obuf *o, const fc__analysis *a, const fc__flow *fl, const fc__label_run *runs,
                      size_t nruns)
{
    const fc__match *m = a->match;
    FC__OB_LIT(o, "{\"id\": ");
    fc__ob_u64(o, fl->id);
    FC__OB_LIT(o, ", \"src_rank\": ");
    fc__ob_u64(o, fl->src_rank);
    FC__OB_LIT(o, ", \"dst_rank\": ");
    fc__ob_u64(o, fl->dst_rank);
    FC__OB_LIT(o, ", \"src_node\": ");
    fc__ob_json_str(o, fc__rp_node_name(m, fl->src_node));
    FC__OB_LIT(o, ", \"dst_node\": ");
    fc__ob_json_str(o, fc__rp_node_name(m, fl->dst_node));
    FC__OB_LIT(o, ", \"bytes\": ");
    fc__ob_u64(o, fl->bytes);
    FC__OB_LIT(o, ", \"start\": ");
    ob_secs(o, fl->start);
    FC__OB_LIT(o, ", \"end\": ");
    ob_secs(o, fl->end);
    FC__OB_LIT(o, ", \"observed\": ");
    ob_secs(o, fl->observed);
    if (fl->rendezvous)
        FC__OB_LIT(o, ", \"rendezvous\": true, \"tag\": ");
    else
        FC__OB_LIT(o, ", \"rendezvous\": false, \"tag\": ");
    fc__ob_i64(o, fl->tag);
    FC__OB_LIT(o, ", \"send_site\": ");
    fc__ob_json_str(o, fc__report_site(a, fl->src_rank, fl->send_site));
    FC__OB_LIT(o, ", \"recv_site\": ");
    fc__ob_json_str(o, fc__report_site(a, fl->dst_rank, fl->recv_site));
    if (fl->coll) {
        FC__OB_LIT(o, ", \"collective\": ");
        fc__ob_json_str(o, fc_event_kind_name(fl->coll));
        FC__OB_LIT(o, ", \"algorithm\": ");
        fc__ob_json_str(o, fc__coll_alg_name(fl->coll_alg));
        FC__OB_LIT(o, ", \"step\": ");
        fc__ob_u64(o, fl->coll_step);
    } else
        FC__OB_LIT(o, ", \"collective\": null, \"algorithm\": null, \"step\": null");
    if (!fl->intra) {
        FC__OB_LIT(o, ", \"conflict\": [");
        for (size_t r = 0; r < nruns; r++) {
            const fc__label *l = &runs[r].label;
            if (r)
                FC__OB_LIT(o, ", ");
            FC__OB_LIT(o, "{\"start\": ");
            ob_secs(o, runs[r].start);
            FC__OB_LIT(o, ", \"end\": ");
            ob_secs(o, runs[r].end);
            FC__OB_LIT(o, ", \"kind\": \"");
            const char *kn = fc__conflict_name(l->kind);
            fc__ob_put(o, kn, strlen(kn));
            FC__OB_LIT(o, "\", \"node\": ");
            fc__ob_json_str(o, l->kind == FC_CONFLICT_NONE ? NULL : fc__rp_node_name(m, l->node));
            FC__OB_LIT(o, ", \"k\": ");
            fc__ob_u64(o, l->k);
            fc__ob_char(o, '}');
        }
        fc__ob_char(o, ']');
        /* Members not computed are null, written without leaving the buffer (the streamed
         * document's path). */
        if (a->pred != NULL) {
            fc__ob_flush(o);
            fc__report_json_flow_predicted(o->f, a, fl->id);
        } else
            FC__OB_LIT(o, ", \"predicted\": null");
        if (a->obs != NULL) {
            fc__ob_flush(o);
            fc__report_json_flow_observation(o->f, a, fl->id);
        } else
            FC__OB_LIT(o, ", \"observation\": null");
    }
    fc__ob_char(o, '}');
}

/* The flow with the label history of the stored intervals (a->iv). */
static void json_flow_stored(fc__obuf *o, const fc__analysis *a, const fc__flow *fl)
{
    const fc__label_run *runs = NULL;
    size_t nruns = 0;
    if (fl->intra || fc__intervals_history(a->iv, fl->id, &runs, &nruns) < 0)
        nruns = 0;
    json_flow(o, a, fl, runs, nruns);
}

/* Interval number i of the document, [start, end) with the ids[0..n) active (ascending) and its
 * conflicts c[0..nc) (sorted by node then kind), after a comma unless it is the first. */
static void json_interval(fc__obuf *o, const fc__analysis *a, size_t i, double start, double end, const uint64_t *ids,
                          size_t n, const fc__conflict *c, size_t nc)
{
    if (i)
        fc__ob_char(o, ',');
    FC__OB_LIT(o, "\n    {\"start\": ");
    ob_secs(o, start);
    FC__OB_LIT(o, ", \"end\": ");
    ob_secs(o, end);
    FC__OB_LIT(o, ", \"flows\": [");
    for (size_t j = 0; j < n; j++) {
        if (j)
            FC__OB_LIT(o, ", ");
        fc__ob_u64(o, ids[j]);
    }
    FC__OB_LIT(o, "], \"conflicts\": [");
    for (size_t j = 0; j < nc; j++) {
        /* A mixed conflict is one conflict with two roles: it is named "mixed" here, its flows
         * being {entering, leaving}. */
        if (j)
            FC__OB_LIT(o, ", ");
        FC__OB_LIT(o, "{\"node\": ");
        fc__ob_json_str(o, fc__rp_node_name(a->match, c[j].node));
        FC__OB_LIT(o, ", \"kind\": \"");
        const char *kn = c[j].kind == FC_CONFLICT_MIXED_IN ? "mixed" : fc__conflict_name(c[j].kind);
        fc__ob_put(o, kn, strlen(kn));
        FC__OB_LIT(o, "\", \"k\": ");
        fc__ob_u64(o, c[j].k);
        FC__OB_LIT(o, ", \"flows\": [");
        for (uint32_t q = 0; q < c[j].k; q++) {
            if (q)
                FC__OB_LIT(o, ", ");
            fc__ob_u64(o, c[j].flows[q]);
        }
        FC__OB_LIT(o, "]}");
    }
    fc__ob_char(o, ']');
    if (a->pred != NULL) {
        fc__ob_flush(o);
        fc__report_json_interval_error(o->f, a, i);
    } else
        FC__OB_LIT(o, ", \"predicted_error_pct\": null");
    fc__ob_char(o, '}');
}

/* The end of the intervals array, which holds n of them. */
static void json_intervals_end(fc__obuf *o, size_t n)
{
    if (n)
        FC__OB_LIT(o, "\n  ],\n");
    else
        FC__OB_LIT(o, "],\n");
}

/* Writes the intervals array of a->match's flows (below, with the stream's interval writer).
 * Returns 0, FC_ENOMEM or FC_EINVAL (message in fc_errmsg). */
static int json_intervals(fc__obuf *o, const fc__analysis *a);

/* Flow-seconds under a label (kind, k), from the stored intervals or from a stream's sums. */
typedef struct json_times {
    double (*time)(const void *arg, uint32_t kind, uint32_t k);
    const void *arg;
    uint32_t max_k; /* the largest k of any label */
} json_times;

static double stored_time(const void *arg, uint32_t kind, uint32_t k)
{
    return fc__intervals_time(arg, kind, k);
}

/* One "kind": {"flow_s": x, "by_k": {...}} member of totals, summing the kinds given. */
static void json_total(FILE *f, const json_times *tm, const char *name, uint32_t k1, uint32_t k2, int by_k)
{
    uint32_t maxk = tm->max_k;
    double sum = 0;
    int first = 1;
    for (uint32_t k = 1; k <= maxk; k++)
        sum += tm->time(tm->arg, k1, k) + (k2 != k1 ? tm->time(tm->arg, k2, k) : 0);
    fprintf(f, "\"%s\": {\"flow_s\": ", name);
    json_secs(f, sum);
    if (by_k) {
        fputs(", \"by_k\": {", f);
        for (uint32_t k = 2; k <= maxk; k++) {
            double t = tm->time(tm->arg, k1, k) + (k2 != k1 ? tm->time(tm->arg, k2, k) : 0);
            if (t <= 0)
                continue;
            fprintf(f, "%s\"%" PRIu32 "\": ", first ? "" : ", ", k);
            json_secs(f, t);
            first = 0;
        }
        putc('}', f);
    }
    putc('}', f);
}

static void json_warning(const char *line, void *arg)
{
    FILE *f = ((void **)arg)[0];
    size_t *n = ((void **)arg)[1];
    fputs((*n)++ ? ",\n    " : "\n    ", f);
    fc__json_str(f, line);
}

static void json_head(FILE *f, const fc__analysis *a)
{
    const fc__match *m = a->match;
    int first = 1;
    fputs("{\n  \"flowcut_analyze\": 1,\n  \"trace\": ", f);
    fc__json_str(f, a->trace_path);
    fprintf(f, ",\n  \"ranks\": %" PRIu32 ", \"partial\": %s, \"partial_ranks\": [", m->world,
            fc_trace_partial(a->trace) ? "true" : "false");
    for (uint32_t r = 0; r < m->world; r++) {
        long i = fc_trace_find(a->trace, r);
        const fc_rank *rk = i < 0 ? NULL : fc_trace_rank(a->trace, (size_t)i);
        if (rk != NULL && !rk->partial)
            continue;
        fprintf(f, "%s{\"rank\": %" PRIu32 ", \"reason\": ", first ? "" : ", ", r);
        const char *why = rk ? rk->partial_why : skipped_why(a->trace, r);
        fc__json_str(f, why ? why : "no trace file");
        putc('}', f);
        first = 0;
    }
    fputs("],\n  \"nodes\": [", f);
    for (size_t n = 0; n < m->nnodes; n++) {
        fputs(n ? ", {\"name\": " : "{\"name\": ", f);
        fc__json_str(f, m->nodes[n]);
        fputs(", \"ranks\": [", f);
        first = 1;
        for (uint32_t r = 0; r < m->world; r++)
            if (m->rank_node[r] == n) {
                fprintf(f, "%s%" PRIu32, first ? "" : ", ", r);
                first = 0;
            }
        fputs("]}", f);
    }
    fprintf(f, "],\n  \"eager_threshold\": %" PRIu64 ", \"eager_threshold_source\": ", m->eager_threshold);
    fc__json_str(f, a->eager_source);
    fputs(",\n", f);
}

/* The members known once every message is matched: the clock violations and the message counts. */
static void json_counts(FILE *f, const fc__analysis *a)
{
    const fc__match *m = a->match;
    fprintf(f, "  \"clock\": {\"violations\": %" PRIu64 ", \"violations_beyond_uncertainty\": %" PRIu64
               ", \"worst_s\": ",
            m->clock_violations, m->clock_violations_beyond);
    json_secs(f, m->clock_violations ? m->worst_violation : 0.0);
    fc__report_json_clock_more(f, a);
    fprintf(f, "},\n  \"messages\": {\"matched\": %zu, \"inter_node\": %zu, \"intra_node\": %zu, "
               "\"unmatched_sends\": %" PRIu64 ", \"unmatched_recvs\": %" PRIu64 "},\n",
            m->nflows, m->ninter, m->nflows - m->ninter, m->unmatched_sends, m->unmatched_recvs);
}

static void json_tail(FILE *f, const fc__analysis *a, const json_times *tm)
{
    const fc__match *m = a->match;
    json_counts(f, a);
    fputs("  \"totals\": {", f);
    json_total(f, tm, "none", FC_CONFLICT_NONE, FC_CONFLICT_NONE, 0);
    fputs(", ", f);
    json_total(f, tm, "outgoing", FC_CONFLICT_OUTGOING, FC_CONFLICT_OUTGOING, 1);
    fputs(", ", f);
    json_total(f, tm, "incoming", FC_CONFLICT_INCOMING, FC_CONFLICT_INCOMING, 1);
    fputs(", ", f);
    json_total(f, tm, "mixed", FC_CONFLICT_MIXED_IN, FC_CONFLICT_MIXED_OUT, 1);
    fputs("},\n  \"wait_states\": {\"late_sender_s\": [", f);
    for (uint32_t r = 0; r < m->world; r++) {
        fputs(r ? ", " : "", f);
        json_secs(f, m->late_sender[r]);
    }
    fputs("], \"late_receiver_s\": [", f);
    for (uint32_t r = 0; r < m->world; r++) {
        fputs(r ? ", " : "", f);
        json_secs(f, m->late_receiver[r]);
    }
    fputs("],\n", f);
    fc__report_json_coll_waits(f, a);
    fputs("    \"sites\": [", f);
    for (size_t i = 0; i < m->nsites; i++) {
        const fc__wait_site *s = &m->sites[i];
        fprintf(f, "%s{\"rank\": %" PRIu32 ", \"site\": ", i ? ",\n      " : "\n      ", s->rank);
        fc__json_str(f, fc__report_site(a, s->rank, s->site));
        fputs(", \"late_sender_s\": ", f);
        json_secs(f, s->late_sender);
        fputs(", \"late_receiver_s\": ", f);
        json_secs(f, s->late_receiver);
        putc('}', f);
    }
    fputs("]},\n  \"unmatched\": [", f);
    for (size_t i = 0; i < m->nunmatched; i++) {
        const fc__unmatched *u = &m->unmatched[i];
        fprintf(f, "%s{\"rank\": %" PRIu32 ", \"peer\": ", i ? ",\n    " : "\n    ", u->rank);
        if (u->peer >= 0)
            fprintf(f, "%" PRId64, u->peer);
        else
            fputs("null", f);
        fprintf(f, ", \"tag\": %" PRId64 ", \"bytes\": %" PRIu64 ", \"kind\": \"%s\", \"reason\": ", u->tag, u->bytes,
                u->send ? "send" : "recv");
        fc__json_str(f, fc__unmatched_reason(u->reason));
        putc('}', f);
    }
    fputs("],\n", f);
    fc__report_json_collectives(f, a);
    fc__report_json_errors_collective(f, a);
    fputs("  \"warnings\": [", f);
    size_t nw = 0;
    void *arg[2] = {f, &nw};
    fc__report_warnings(a, json_warning, arg);
    fputs(nw ? "\n  ]\n}\n" : "]\n}\n", f);
}

int fc__rp_finish(FILE *f)
{
    if (fflush(f) != 0 || ferror(f))
        return fc__err(FC_EIO, "writing the report: %s", strerror(errno ? errno : EIO));
    return 0;
}

/* The document's members come in the order a streamed document can write them (fc__json_stream):
 * what is known when matching starts, the intervals (as the sweep finds them), the flows and the
 * intra-node messages (which wait in temporary files), then what is known only at the end. */
int fc__report_json(FILE *f, const fc__analysis *a)
{
    const fc__match *m = a->match;
    json_head(f, a);
    fc__report_json_prediction(f, a);
    fc__report_json_observation(f, a);
    fc__obuf *o = malloc(sizeof *o); /* 64 KiB: not on the stack */
    if (o == NULL)
        return fc__err(FC_ENOMEM, "writing the report: out of memory");
    fc__ob_init(o, f);
    int rc = json_intervals(o, a);
    if (rc < 0) {
        fc__ob_flush(o); /* what was written stays written */
        free(o);
        return rc;
    }
    FC__OB_LIT(o, "  \"flows\": [");
    for (size_t i = 0; i < m->ninter; i++) {
        if (i)
            fc__ob_char(o, ',');
        FC__OB_LIT(o, "\n    ");
        json_flow_stored(o, a, &m->flows[i]);
    }
    if (m->ninter)
        FC__OB_LIT(o, "\n  ],\n  \"intra\": [");
    else
        FC__OB_LIT(o, "],\n  \"intra\": [");
    for (size_t i = m->ninter; i < m->nflows; i++) {
        if (i > m->ninter)
            fc__ob_char(o, ',');
        FC__OB_LIT(o, "\n    ");
        json_flow_stored(o, a, &m->flows[i]);
    }
    if (m->nflows > m->ninter)
        FC__OB_LIT(o, "\n  ],\n");
    else
        FC__OB_LIT(o, "],\n");
    fc__ob_flush(o);
    free(o);
    json_times tm = {stored_time, a->iv, fc__intervals_max_k(a->iv)};
    json_tail(f, a, &tm);
    return fc__rp_finish(f);
}

/* The pieces of the JSON document that the HTML page embeds (report/html.c): the members known
 * first, one flow as the document writes it, and the members known last with the closing brace. */
void fc__rp_json_head(FILE *f, const fc__analysis *a)
{
    json_head(f, a);
}

void fc__rp_json_flow(fc__obuf *o, const fc__analysis *a, const fc__flow *fl)
{
    json_flow_stored(o, a, fl);
}

void fc__rp_json_tail(FILE *f, const fc__analysis *a)
{
    json_times tm = {stored_time, a->iv, fc__intervals_max_k(a->iv)};
    json_tail(f, a, &tm);
}

int fc__rp_order_init(idorder *o, void (*put)(void *, const fc__flow *, const fc__label_run *, size_t), void *arg)
{
    o->cap = 1024;
    o->base = 0;
    o->put = put;
    o->arg = arg;
    return (o->ring = calloc(o->cap, sizeof *o->ring)) == NULL ? FC_ENOMEM : 0;
}

void fc__rp_order_free(idorder *o)
{
    for (size_t i = 0; o->ring != NULL && i < o->cap; i++)
        if (o->ring[i].runs != o->ring[i].inl)
            free(o->ring[i].runs);
    free(o->ring);
    o->ring = NULL;
}

/* Hands fl to put now if it is the next id, with every held flow that follows; else holds it.
 * Returns 0 or FC_ENOMEM (message set). */
int fc__rp_order_flow(idorder *o, const fc__flow *fl, const fc__label_run *runs, size_t nruns)
{
    if (fl->id == o->base) {
        o->put(o->arg, fl, runs, nruns);
        o->base++;
        for (held *h; (h = &o->ring[o->base & (o->cap - 1)])->used && h->fl.id == o->base; o->base++) {
            o->put(o->arg, &h->fl, h->runs, h->nruns);
            if (h->runs != h->inl)
                free(h->runs);
            h->runs = NULL;
            h->used = 0;
        }
        return 0;
    }
    if (fl->id - o->base >= o->cap) {
        size_t ncap = o->cap;
        while (fl->id - o->base >= ncap)
            ncap *= 2;
        held *r = calloc(ncap, sizeof *r);
        if (r == NULL)
            return fc__err(FC_ENOMEM, "out of memory ordering the flows of the report");
        for (size_t i = 0; i < o->cap; i++)
            if (o->ring[i].used) {
                held *h = &r[o->ring[i].fl.id & (ncap - 1)];
                *h = o->ring[i];
                if (o->ring[i].runs == o->ring[i].inl)
                    h->runs = h->inl;
            }
        free(o->ring);
        o->ring = r;
        o->cap = ncap;
    }
    held *h = &o->ring[fl->id & (o->cap - 1)];
    h->runs = h->inl;
    if (nruns > sizeof h->inl / sizeof h->inl[0] && (h->runs = malloc(nruns * sizeof *h->runs)) == NULL)
        return fc__err(FC_ENOMEM, "out of memory ordering the flows of the report");
    if (nruns > 0)
        memcpy(h->runs, runs, nruns * sizeof *h->runs);
    h->used = 1;
    h->fl = *fl;
    h->nruns = nruns;
    return 0;
}

/* ---- JSON, streamed ------------------------------------------------------------------------- */

/* One active flow of an interval, to be put in order of id. */
typedef struct jact {
    uint64_t id;
    fc__label lab;
} jact;

/* One conflict of an interval: its flows at off in the stream's ids. */
typedef struct jconf {
    uint32_t kind, node, k;
    size_t off;
} jconf;

struct fc__json_stream {
    FILE *out, *ftmp, *itmp; /* ftmp: the flows, in order of id; itmp: the intra-node messages */
    fc__obuf *ob, *fb, *ib;  /* the buffers in front of out, ftmp and itmp */
    fc__analysis a;
    size_t niv;              /* intervals written */
    idorder order;           /* the flows, on their way to ftmp */
    /* Flow-seconds by label, time[k * 5 + kind] for k < ktop, summed in the order the stored
     * intervals sum them (interval by interval), so that the totals are the same numbers. */
    double *time;
    size_t ktop;
    uint32_t max_k;
    /* Scratch of one interval. */
    jact *act;
    size_t cact;
    jconf *conf;
    size_t nconf, cconf;
    uint64_t *ids;
    size_t nids, cids;
    fc__conflict *cv;
    size_t ccv;
};

static double stream_time(const void *arg, uint32_t kind, uint32_t k)
{
    const fc__json_stream *js = arg;
    return k < js->ktop ? js->time[(size_t)k * 5 + kind] : 0;
}

static int jact_less(const jact *x, const jact *y)
{
    return x->id < y->id;
}

static int cmp_jact(const void *x, const void *y)
{
    uint64_t a = ((const jact *)x)->id, b = ((const jact *)y)->id;
    return (a > b) - (a < b);
}

static int cmp_jconf(const void *x, const void *y)
{
    const jconf *a = x, *b = y;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return (a->kind > b->kind) - (a->kind < b->kind);
}

static int jconf_less(const jconf *x, const jconf *y)
{
    return cmp_jconf(x, y) < 0;
}

FC__ISORT(sort_jact, jact, jact_less)
FC__ISORT(sort_jconf, jconf, jconf_less)

static int js_start(void *arg, const fc__match *m)
{
    fc__json_stream *js = arg;
    js->a.match = m;
    /* Everything the head says is known now: ranks, nodes, the eager threshold. */
    json_head(js->out, &js->a);
    fc__report_json_prediction(js->out, &js->a); /* null members: a stream has no predictions */
    fc__report_json_observation(js->out, &js->a);
    FC__OB_LIT(js->ob, "  \"intervals\": [");
    return 0;
}

/* An intra-node message, numbered from 0 among them: one line of the temporary file, renumbered
 * once the inter-node count is known (fc__json_stream_finish). */
static int js_intra(void *arg, const fc__flow *fl)
{
    fc__json_stream *js = arg;
    json_flow(js->ib, &js->a, fl, NULL, 0);
    fc__ob_char(js->ib, '\n');
    return 0;
}

static int keep_jconf(void *arg, const fc__conflict *c)
{
    fc__json_stream *js = arg;
    if (fc__reserve(&js->conf, &js->cconf, js->nconf + 1, sizeof *js->conf) ||
        fc__reserve(&js->ids, &js->cids, js->nids + c->k, sizeof *js->ids))
        return FC_ENOMEM;
    js->conf[js->nconf++] = (jconf){c->kind, c->node, c->k, js->nids};
    memcpy(js->ids + js->nids, c->flows, c->k * sizeof *c->flows);
    js->nids += c->k;
    return 0;
}

/* An interval of the sweep (sweep.h): written at once, as fc__intervals_build would store it. */
static int js_interval(void *arg, const fc__sweep *s, size_t index, double start, double end)
{
    fc__json_stream *js = arg;
    size_t n = fc__sweep_nactive(s);
    if (fc__reserve(&js->act, &js->cact, n, sizeof *js->act) ||
        fc__reserve(&js->ids, &js->cids, n, sizeof *js->ids))
        return fc__err(FC_ENOMEM, "out of memory writing the JSON intervals");
    for (size_t j = 0; j < n; j++) {
        js->act[j] = (jact){fc__sweep_flow(s, j)->id, *fc__sweep_label(s, j)};
        if (js->act[j].lab.k >= js->ktop) {
            size_t ntop = 2 * (size_t)js->act[j].lab.k + 2;
            double *t = realloc(js->time, ntop * 5 * sizeof *t);
            if (t == NULL)
                return fc__err(FC_ENOMEM, "out of memory writing the JSON intervals");
            memset(t + js->ktop * 5, 0, (ntop - js->ktop) * 5 * sizeof *t);
            js->time = t;
            js->ktop = ntop;
        }
        if (js->act[j].lab.k > js->max_k)
            js->max_k = js->act[j].lab.k;
    }
    if (n <= FC__ISORT_MAX)
        sort_jact(js->act, n);
    else
        fc__sort(js->act, n, sizeof *js->act, cmp_jact);
    for (size_t j = 0; j < n; j++) {
        js->ids[j] = js->act[j].id;
        js->time[(size_t)js->act[j].lab.k * 5 + js->act[j].lab.kind] += end - start;
    }
    /* The conflicts' flow lists go after the active ids in the same array. */
    js->nids = n;
    js->nconf = 0;
    int rc = fc__sweep_conflicts(s, keep_jconf, js);
    if (rc)
        return rc == FC_ENOMEM ? fc__err(rc, "out of memory writing the JSON intervals") : rc;
    if (js->nconf > FC__ISORT_MAX)
        fc__sort(js->conf, js->nconf, sizeof *js->conf, cmp_jconf);
    else if (js->nconf > 1)
        sort_jconf(js->conf, js->nconf);
    if (fc__reserve(&js->cv, &js->ccv, js->nconf, sizeof *js->cv))
        return fc__err(FC_ENOMEM, "out of memory writing the JSON intervals");
    for (size_t j = 0; j < js->nconf; j++)
        js->cv[j] = (fc__conflict){js->conf[j].kind, js->conf[j].node, js->conf[j].k, js->ids + js->conf[j].off};
    json_interval(js->ob, &js->a, index, start, end, js->ids, n, js->cv, js->nconf);
    js->niv = index + 1;
    return 0;
}

/* The intervals of an analysis whose flows are all matched are swept again and written as a
 * stream writes them, rather than read from a->iv: a full build (fc__intervals_build) would hold
 * every interval's flows and conflicts at once, which for a long trace takes gigabytes, where the
 * sweep holds the flows in flight. Only js's interval scratch and the writer's fields are used. */
static int json_intervals(fc__obuf *o, const fc__analysis *a)
{
    fc__json_stream *js = calloc(1, sizeof *js);
    if (js == NULL)
        return fc__err(FC_ENOMEM, "out of memory writing the JSON intervals");
    js->ob = o;
    js->a = *a;
    FC__OB_LIT(o, "  \"intervals\": [");
    fc__sweep_ops ops = {.arg = js, .interval = js_interval};
    int rc = a->sweep(a, &ops);
    if (rc == 0)
        json_intervals_end(o, js->niv);
    void *all[] = {js->time, js->act, js->conf, js->ids, js->cv};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    free(js);
    return rc;
}

/* Writes flow fl (the next id) to the flows' temporary file. */
static void js_put_flow(void *arg, const fc__flow *fl, const fc__label_run *runs, size_t nruns)
{
    fc__json_stream *js = arg;
    if (fl->id)
        fc__ob_char(js->fb, ',');
    FC__OB_LIT(js->fb, "\n    ");
    json_flow(js->fb, &js->a, fl, runs, nruns);
}

/* A flow has passed its end (sweep.h): it is written once every lower id has been. */
static int js_done(void *arg, const fc__flow *fl, const fc__label_run *runs, size_t nruns)
{
    fc__json_stream *js = arg;
    for (size_t r = 0; r < nruns; r++)
        if (runs[r].label.k > js->max_k)
            js->max_k = runs[r].label.k;
    return fc__rp_order_flow(&js->order, fl, runs, nruns);
}

int fc__json_stream_new(FILE *out, const fc__analysis *a, fc__json_stream **out_js)
{
    fc__json_stream *js = calloc(1, sizeof *js);
    *out_js = NULL;
    if (js == NULL)
        return fc__err(FC_ENOMEM, "out of memory starting the JSON report");
    js->out = out;
    js->a = *a;
    js->a.pred = NULL;
    js->a.iv = NULL;
    int no_order = fc__rp_order_init(&js->order, js_put_flow, js);
    js->ob = calloc(1, sizeof *js->ob); /* empty until initialised: fc__json_stream_free flushes them */
    js->fb = calloc(1, sizeof *js->fb);
    js->ib = calloc(1, sizeof *js->ib);
    if (no_order || js->ob == NULL || js->fb == NULL || js->ib == NULL || (js->ftmp = tmpfile()) == NULL ||
        (js->itmp = tmpfile()) == NULL) {
        fc__json_stream_free(js);
        return fc__err(FC_ENOMEM, "cannot start the JSON report: out of memory or no temporary file");
    }
    fc__ob_init(js->ob, out);
    fc__ob_init(js->fb, js->ftmp);
    fc__ob_init(js->ib, js->itmp);
    *out_js = js;
    return 0;
}

fc__stream_writer fc__json_stream_writer(fc__json_stream *js)
{
    return (fc__stream_writer){.arg = js,
                               .start = js_start,
                               .ops = {.arg = js, .interval = js_interval, .flow_done = js_done},
                               .intra = js_intra};
}

/* Copies what tmp holds to out; with renumber, each line is an entry `{"id": K, ...}` that becomes
 * one of the array's, its id K + add. Returns 0 or FC_EIO. */
static int js_copy(FILE *out, FILE *tmp, int renumber, uint64_t add)
{
    static const char idkey[] = "{\"id\": ";
    char buf[65536];
    int at_start = 1, first = 1;
    size_t got;
    if (fflush(tmp) != 0 || ferror(tmp) || fseek(tmp, 0, SEEK_SET) != 0)
        return fc__err(FC_EIO, "the JSON report's temporary file: %s", strerror(errno ? errno : EIO));
    if (!renumber) {
        while ((got = fread(buf, 1, sizeof buf, tmp)) > 0)
            fwrite(buf, 1, got, out);
    } else {
        while (fgets(buf, sizeof buf, tmp) != NULL) {
            char *rest = buf;
            size_t len = strlen(buf);
            int eol = len > 0 && buf[len - 1] == '\n';
            if (eol)
                buf[--len] = '\0';
            if (at_start) {
                uint64_t k = 0;
                if (strncmp(buf, idkey, sizeof idkey - 1) == 0)
                    k = strtoull(buf + sizeof idkey - 1, &rest, 10);
                fprintf(out, "%s\n    %s%" PRIu64, first ? "" : ",", idkey, add + k);
                first = 0;
            }
            fputs(rest, out);
            at_start = eol; /* an entry longer than buf comes in pieces */
        }
    }
    if (ferror(tmp))
        return fc__err(FC_EIO, "the JSON report's temporary file: %s", strerror(errno ? errno : EIO));
    return 0;
}

void fc__json_stream_colls(fc__json_stream *js, const fc__colls *colls)
{
    js->a.colls = colls;
}

int fc__json_stream_finish(fc__json_stream *js, fc__match *m)
{
    int rc;
    js->a.match = m;
    json_intervals_end(js->ob, js->niv);
    fc__ob_flush(js->ob);
    fc__ob_flush(js->fb);
    fc__ob_flush(js->ib);
    fputs("  \"flows\": [", js->out);
    if ((rc = js_copy(js->out, js->ftmp, 0, 0)) < 0)
        return rc;
    fputs(m->ninter ? "\n  ],\n  \"intra\": [" : "],\n  \"intra\": [", js->out);
    if ((rc = js_copy(js->out, js->itmp, 1, m->ninter)) < 0)
        return rc;
    fputs(m->nflows > m->ninter ? "\n  ],\n" : "],\n", js->out);
    json_times tm = {stream_time, js, js->max_k};
    json_tail(js->out, &js->a, &tm);
    return fc__rp_finish(js->out);
}

void fc__json_stream_free(fc__json_stream *js)
{
    if (js == NULL)
        return;
    if (js->ob != NULL) /* what was written is not lost when the analysis stops short */
        fc__ob_flush(js->ob);
    if (js->ftmp != NULL)
        fclose(js->ftmp);
    if (js->itmp != NULL)
        fclose(js->itmp);
    fc__rp_order_free(&js->order);
    void *all[] = {js->ob, js->fb, js->ib, js->time, js->act, js->conf, js->ids, js->cv};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    free(js);
}

