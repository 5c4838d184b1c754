/* analyzer/report/text.c: the text report of an analysis, made to be read on a terminal: the run,
 * the traffic between nodes, the time spent in each conflict, the worst intervals and flows, hot
 * nodes, the call sites involved, wait states and warnings. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "util/internal.h"
#include "report/report.h"
#include "report/shared.h"
#include "conflict/summary.h"

/* Matrices wider than this many nodes do not fit a terminal: the traffic becomes a list. */
#define MATRIX_MAX 10
/* Label runs shown under each of the worst flows, and conflicts under each worst interval. */
#define HISTORY_MAX 6

static void heading(FILE *f, const char *title)
{
    fprintf(f, "\n== %s ==\n", title);
}

/* Bytes in binary units, e.g. "4.0 MiB", into buf. */
static const char *hbytes(char *buf, size_t n, double b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    while (b >= 1024 && u + 1 < sizeof unit / sizeof unit[0]) {
        b /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%.0f B", b);
    else
        snprintf(buf, n, "%.1f %s", b, unit[u]);
    return buf;
}

static const char *node_name(const fc__match *m, uint32_t node)
{
    return node < m->nnodes ? m->nodes[node] : "?";
}

/* "incoming@node1 k=2", or "none". */
static const char *label_text(char *buf, size_t n, const fc__match *m, const fc__label *l)
{
    if (l->kind == FC_CONFLICT_NONE)
        snprintf(buf, n, "none");
    else
        snprintf(buf, n, "%s@%s k=%" PRIu32, fc__conflict_name(l->kind), node_name(m, l->node), l->k);
    return buf;
}

static size_t limit(const fc__analysis *a, size_t n)
{
    return a->top && a->top < n ? a->top : n;
}

static void more(FILE *f, const fc__analysis *a, size_t n, const char *what)
{
    if (a->top && n > a->top)
        fprintf(f, "  ... %zu more %s (--top)\n", n - a->top, what);
}

static void text_run(FILE *f, const fc__analysis *a)
{
    const fc__match *m = a->match;
    heading(f, "run");
    fprintf(f, "trace:           %s\n", a->trace_path);
    fprintf(f, "ranks:           %" PRIu32 " (%zu rank files)\n", m->world, fc_trace_nranks(a->trace));
    fprintf(f, "nodes:           %zu\n", m->nnodes);
    fprintf(f, "partial:         %s\n", fc_trace_partial(a->trace) ? "yes (analysed as far as it goes; see warnings)" : "no");
    fprintf(f, "eager threshold: %" PRIu64 " bytes, from %s\n", m->eager_threshold, a->eager_source);
    fprintf(f, "messages:        %zu matched: %zu inter-node flows, %zu intra-node; %" PRIu64 " unmatched sends, %" PRIu64
               " unmatched receives\n",
            m->nflows, m->ninter, m->nflows - m->ninter, m->unmatched_sends, m->unmatched_recvs);
    fc__report_text_collectives(f, a);
    fprintf(f, "intervals:       %zu\n", a->sum->nintervals);
    fprintf(f, "clock:           %" PRIu64 " violations (%" PRIu64 " beyond uncertainty)", m->clock_violations,
            m->clock_violations_beyond);
    /* Named by its ranks and send time, which every analysis knows (a streamed one gives
     * intra-node messages no id). */
    if (m->clock_violations)
        fprintf(f, ", worst %.9f s on the message %" PRIu32 " -> %" PRIu32 " sent at %.9f s", m->worst_violation,
                m->worst_src, m->worst_dst, m->worst_send);
    putc('\n', f);
}

/* The busiest pairs first, then in order of source and destination (the list's order). */
static int cmp_pair(const void *x, const void *y)
{
    const fc__traffic *a = *(const fc__traffic *const *)x, *b = *(const fc__traffic *const *)y;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int text_nodes(FILE *f, const fc__analysis *a)
{
    const fc__match *m = a->match;
    size_t nn = m->nnodes;
    char b[32];
    /* Each node's ranks, and its intra-node traffic, gathered in one pass each: a node at a time
     * over every rank took nodes x ranks steps, 67 M for 16384 ranks on 4096 nodes. */
    uint32_t *first = calloc(nn + 1, sizeof *first), *ranks = malloc((m->world + 1) * sizeof *ranks);
    const fc__traffic **intra = calloc(nn + 1, sizeof *intra);
    if (first == NULL || ranks == NULL || intra == NULL) {
        free(first);
        free(ranks);
        free(intra);
        return FC_ENOMEM;
    }
    for (uint32_t r = 0; r < m->world; r++)
        if (m->rank_node[r] < nn)
            first[m->rank_node[r] + 1]++;
    for (size_t n = 0; n < nn; n++)
        first[n + 1] += first[n];
    for (uint32_t r = 0; r < m->world; r++)
        if (m->rank_node[r] < nn)
            ranks[first[m->rank_node[r]]++] = r;
    for (size_t n = nn; n > 0; n--) /* back to where each node's ranks start */
        first[n] = first[n - 1];
    first[0] = 0;
    for (size_t i = 0; i < m->ntraffic; i++)
        if (m->traffic[i].src == m->traffic[i].dst)
            intra[m->traffic[i].src] = &m->traffic[i];
    heading(f, "nodes");
    for (size_t n = 0; n < nn; n++) {
        fprintf(f, "  %-16s ranks ", m->nodes[n]);
        for (uint32_t j = first[n]; j < first[n + 1]; j++)
            fprintf(f, "%s%" PRIu32, j > first[n] ? "," : "", ranks[j]);
        fprintf(f, "   intra-node: %" PRIu64 " messages, %s\n", intra[n] ? intra[n]->count : 0,
                hbytes(b, sizeof b, intra[n] ? intra[n]->bytes : 0));
    }
    free(first);
    free(ranks);
    free(intra);
    heading(f, "inter-node traffic (bytes / messages, row = source node)");
    if (nn <= MATRIX_MAX) {
        const fc__traffic *cell[MATRIX_MAX][MATRIX_MAX] = {{NULL}};
        for (size_t i = 0; i < m->ntraffic; i++)
            cell[m->traffic[i].src][m->traffic[i].dst] = &m->traffic[i];
        int coll = a->colls != NULL && a->colls->inter_flows > 0;
        fprintf(f, "  %-16s", "from \\ to");
        for (size_t d = 0; d < nn; d++)
            fprintf(f, " %18.18s", m->nodes[d]);
        if (coll) /* how much of each row the collectives moved */
            fprintf(f, " %18s", "of which coll.");
        putc('\n', f);
        for (size_t s = 0; s < nn; s++) {
            fprintf(f, "  %-16.16s", m->nodes[s]);
            for (size_t d = 0; d < nn; d++) {
                char c[48];
                const fc__traffic *t = cell[s][d];
                if (s == d)
                    snprintf(c, sizeof c, "-");
                else
                    snprintf(c, sizeof c, "%s / %" PRIu64, hbytes(b, sizeof b, t ? t->bytes : 0), t ? t->count : 0);
                fprintf(f, " %18s", c);
            }
            if (coll) {
                char c[48];
                double cb = 0;
                uint64_t cn = 0;
                for (size_t d = 0; d < nn; d++)
                    if (d != s && cell[s][d] != NULL) {
                        cb += cell[s][d]->coll_bytes;
                        cn += cell[s][d]->coll_count;
                    }
                snprintf(c, sizeof c, "%s / %" PRIu64, hbytes(b, sizeof b, cb), cn);
                fprintf(f, " %18s", c);
            }
            putc('\n', f);
        }
    } else {
        /* The busiest pairs first: the list is cut by --top. */
        size_t pairs = 0;
        const fc__traffic **ix = malloc((m->ntraffic + 1) * sizeof *ix);
        if (ix == NULL)
            return FC_ENOMEM;
        for (size_t i = 0; i < m->ntraffic; i++)
            if (m->traffic[i].src != m->traffic[i].dst)
                ix[pairs++] = &m->traffic[i];
        qsort(ix, pairs, sizeof *ix, cmp_pair);
        int coll = a->colls != NULL && a->colls->inter_flows > 0;
        for (size_t q = 0; q < limit(a, pairs); q++) {
            fprintf(f, "  %-16s -> %-16s %12s %10" PRIu64, m->nodes[ix[q]->src], m->nodes[ix[q]->dst],
                    hbytes(b, sizeof b, ix[q]->bytes), ix[q]->count);
            if (coll) /* the collectives' share of the pair */
                fprintf(f, "   of which coll. %s / %" PRIu64, hbytes(b, sizeof b, ix[q]->coll_bytes), ix[q]->coll_count);
            putc('\n', f);
        }
        free(ix);
        more(f, a, pairs, "node pairs");
    }
    return 0;
}

static void text_conflicts(FILE *f, const fc__analysis *a)
{
    static const struct {
        const char *name;
        uint32_t k1, k2;
    } kinds[] = {{"none", FC_CONFLICT_NONE, FC_CONFLICT_NONE},
                 {"outgoing", FC_CONFLICT_OUTGOING, FC_CONFLICT_OUTGOING},
                 {"incoming", FC_CONFLICT_INCOMING, FC_CONFLICT_INCOMING},
                 {"mixed", FC_CONFLICT_MIXED_IN, FC_CONFLICT_MIXED_OUT}};
    const fc__summary *sum = a->sum;
    uint32_t maxk = sum->max_k;
    double total = 0;
    for (size_t i = 0; i < 4; i++)
        for (uint32_t k = 1; k <= maxk; k++)
            total += fc__summary_time(sum, kinds[i].k1, k) +
                     (kinds[i].k2 != kinds[i].k1 ? fc__summary_time(sum, kinds[i].k2, k) : 0);
    heading(f, "time in conflicts (flow-seconds: each flow counts for the time it is active)");
    fc__report_text_counted(f, a);
    fprintf(f, "  %-10s %4s %16s %7s\n", "kind", "k", "flow-s", "share");
    for (size_t i = 0; i < 4; i++)
        for (uint32_t k = 1; k <= maxk; k++) {
            double t = fc__summary_time(sum, kinds[i].k1, k) +
                       (kinds[i].k2 != kinds[i].k1 ? fc__summary_time(sum, kinds[i].k2, k) : 0);
            if (t > 0)
                fprintf(f, "  %-10s %4" PRIu32 " %16.9f %6.1f%%\n", kinds[i].name, k, t, total > 0 ? 100 * t / total : 0);
        }
    fprintf(f, "  %-10s %4s %16.9f %6.1f%%\n", "total", "", total, total > 0 ? 100.0 : 0);
}

/* The worst intervals (largest conflict, then most flows, then longest), from the summary. */
static void text_intervals(FILE *f, const fc__analysis *a)
{
    const fc__summary *sum = a->sum;
    heading(f, "worst intervals (largest conflict, then most flows)");
    fprintf(f, "  %6s %14s %14s %14s %6s  %s\n", "#", "start", "end", "length", "flows", "conflicts");
    for (size_t q = 0; q < limit(a, sum->nworst); q++) {
        const fc__sum_interval *in = &sum->worst[q];
        const fc__conflict *c = in->conf;
        size_t nc = in->nconf;
        fprintf(f, "  %6zu %14.9f %14.9f %14.9f %6zu  %s\n", in->index, in->start, in->end, in->end - in->start,
                in->nflows, nc ? "" : "none");
        for (size_t j = 0; j < nc && (j < HISTORY_MAX || !a->top); j++) {
            fprintf(f, "  %59s%s@%s k=%" PRIu32 " flows", "",
                    c[j].kind == FC_CONFLICT_MIXED_IN ? "mixed" : fc__conflict_name(c[j].kind),
                    node_name(a->match, c[j].node), c[j].k);
            for (uint32_t k = 0; k < c[j].k; k++)
                fprintf(f, "%s%" PRIu64, k ? "," : " ", c[j].flows[k]);
            putc('\n', f);
        }
        if (a->top && nc > HISTORY_MAX)
            fprintf(f, "  %59s... %zu more conflicts (the JSON has them)\n", "", nc - HISTORY_MAX);
    }
    more(f, a, sum->nintervals, "intervals");
}

/* The worst flows (longest observed time per byte), from the summary. */
static void text_flows(FILE *f, const fc__analysis *a)
{
    const fc__match *m = a->match;
    const fc__summary *sum = a->sum;
    char b[32], l[128];
    heading(f, "worst flows (longest observed time per byte)");
    fc__report_text_counted(f, a);
    fprintf(f, "  %6s %-24s %-24s %11s %14s %12s %9s\n", "flow", "from rank@node", "to rank@node", "bytes", "observed s",
            "MB/s", "conflict");
    for (size_t q = 0; q < limit(a, sum->nwflows); q++) {
        const fc__sum_flow *w = &sum->wflows[q];
        const fc__flow *fl = &w->flow;
        char src[64], dst[64];
        snprintf(src, sizeof src, "%" PRIu32 "@%s", fl->src_rank, node_name(m, fl->src_node));
        snprintf(dst, sizeof dst, "%" PRIu32 "@%s", fl->dst_rank, node_name(m, fl->dst_node));
        fprintf(f, "  %6" PRIu64 " %-24s %-24s %11s %14.9f %12.3f %8.1f%%\n", fl->id, src, dst,
                hbytes(b, sizeof b, (double)fl->bytes), fl->observed,
                fl->observed > 0 ? (double)fl->bytes / fl->observed / 1e6 : 0.0,
                fl->observed > 0 ? 100 * w->conflict_s / fl->observed : 0.0);
        /* A long-lived flow can change label at every boundary: its history is cut like a list. */
        for (size_t r = 0; r < w->nruns && (r < HISTORY_MAX || !a->top); r++)
            fprintf(f, "  %6s   %14.9f .. %14.9f  %s\n", "", w->runs[r].start, w->runs[r].end,
                    label_text(l, sizeof l, m, &w->runs[r].label));
        if (a->top && w->nruns > HISTORY_MAX)
            fprintf(f, "  %6s   ... %zu more label changes (--top 0 shows all; the JSON has them)\n", "",
                    w->nruns - HISTORY_MAX);
    }
    more(f, a, sum->nflows, "flows");
}

static void text_hot_nodes(FILE *f, const fc__analysis *a)
{
    const fc__match *m = a->match;
    const fc__summary *sum = a->sum;
    heading(f, "hot nodes (flow-seconds in conflicts at the node)");
    fc__report_text_counted(f, a);
    fprintf(f, "  %-16s %16s %16s %16s %16s\n", "node", "total", "outgoing", "incoming", "mixed");
    for (size_t q = 0; q < limit(a, sum->nnodes); q++) {
        const fc__sum_row *h = &sum->nodes[q];
        fprintf(f, "  %-16s %16.9f %16.9f %16.9f %16.9f\n", node_name(m, h->node), h->total, h->out, h->in, h->mixed);
    }
    if (sum->nnodes == 0)
        fputs("  (no conflicts)\n", f);
    more(f, a, sum->nnodes, "nodes");
}

static void text_sites(FILE *f, const fc__analysis *a)
{
    const fc__summary *sum = a->sum;
    heading(f, "call sites of the conflicted flows");
    fc__report_text_counted(f, a);
    fprintf(f, "  %6s %-5s %7s %16s %16s %16s %16s  %s\n", "rank", "side", "flows", "conflict flow-s", "outgoing",
            "incoming", "mixed", "site");
    for (size_t q = 0; q < limit(a, sum->nsites); q++) {
        const fc__sum_row *v = &sum->sites[q];
        const char *s = fc__report_site(a, v->rank, v->site);
        char id[32];
        snprintf(id, sizeof id, v->site ? "site %" PRIu64 : "(not recorded)", v->site);
        fprintf(f, "  %6" PRIu32 " %-5s %7" PRIu64 " %16.9f %16.9f %16.9f %16.9f  %s\n", v->rank,
                v->send ? "send" : "recv", v->flows, v->total, v->out, v->in, v->mixed, s ? s : id);
    }
    if (sum->nsites == 0)
        fputs("  (no conflicted flows)\n", f);
    more(f, a, sum->nsites, "call sites");
}

static int cmp_wait(const void *x, const void *y)
{
    const fc__wait_site *a = x, *b = y;
    double ta = a->late_sender + a->late_receiver, tb = b->late_sender + b->late_receiver;
    if (ta != tb)
        return ta > tb ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->site < b->site ? -1 : a->site > b->site;
}

static int text_waits(FILE *f, const fc__analysis *a)
{
    const fc__match *m = a->match;
    fc__wait_site *v = malloc((m->nsites + 1) * sizeof *v);
    size_t n = 0;
    if (v == NULL)
        return FC_ENOMEM;
    heading(f, "wait states (seconds)");
    fprintf(f, "  %6s %-16s %16s %16s\n", "rank", "node", "late sender", "late receiver");
    for (uint32_t r = 0; r < m->world; r++)
        fprintf(f, "  %6" PRIu32 " %-16s %16.9f %16.9f\n", r,
                m->rank_node[r] == FC_NODE_NONE ? "(no file)" : node_name(m, m->rank_node[r]), m->late_sender[r],
                m->late_receiver[r]);
    const fc__colls *c = a->colls;
    if (c != NULL && c->ncalls > 0) {
        fprintf(f, "\n  collective waits\n  %6s %16s %16s %16s\n", "rank", "wait at NxN", "late broadcast",
                "early reduce");
        for (uint32_t r = 0; r < m->world && r < c->world; r++)
            fprintf(f, "  %6" PRIu32 " %16.9f %16.9f %16.9f\n", r, c->wait_nxn[r], c->late_bcast[r], c->early_reduce[r]);
        fc__report_text_coll_wait_sites(f, a);
    }
    for (size_t i = 0; i < m->nsites; i++)
        if (m->sites[i].late_sender + m->sites[i].late_receiver > 0)
            v[n++] = m->sites[i];
    fc__sort(v, n, sizeof *v, cmp_wait);
    fputs("\n  top call sites\n", f);
    fprintf(f, "  %6s %16s %8s %16s %8s  %s\n", "rank", "late sender", "calls", "late receiver", "calls", "site");
    for (size_t q = 0; q < limit(a, n); q++) {
        const char *s = fc__report_site(a, v[q].rank, v[q].site);
        char id[32];
        snprintf(id, sizeof id, v[q].site ? "site %" PRIu64 : "(not recorded)", v[q].site);
        fprintf(f, "  %6" PRIu32 " %16.9f %8" PRIu64 " %16.9f %8" PRIu64 "  %s\n", v[q].rank, v[q].late_sender,
                v[q].n_late_sender, v[q].late_receiver, v[q].n_late_receiver, s ? s : id);
    }
    if (n == 0)
        fputs("  (no waiting)\n", f);
    more(f, a, n, "call sites");
    free(v);
    return 0;
}

static void text_warning(const char *line, void *arg)
{
    fprintf(arg, "  - %s\n", line);
}

static void text_unmatched(FILE *f, const fc__analysis *a)
{
    const fc__match *m = a->match;
    heading(f, "warnings");
    if (fc__report_nwarnings(a) == 0) {
        fputs("  (none)\n", f);
        return;
    }
    fc__report_warnings(a, text_warning, f);
    for (size_t i = 0; i < limit(a, m->nunmatched); i++) {
        const fc__unmatched *u = &m->unmatched[i];
        char peer[32];
        if (u->peer >= 0)
            snprintf(peer, sizeof peer, "%" PRId64, u->peer);
        else
            snprintf(peer, sizeof peer, "any");
        fprintf(f, "    unmatched %s: rank %" PRIu32 " peer %s tag %" PRId64 " bytes %" PRIu64 " at %.9f s: %s\n",
                u->send ? "send" : "recv", u->rank, peer, u->tag, u->bytes, u->post, fc__unmatched_reason(u->reason));
    }
    more(f, a, m->nunmatched, "unmatched messages");
}

int fc__report_text(FILE *f, const fc__analysis *a)
{
    int rc;
    fputs("flowcut analyze report\n", f);
    text_run(f, a);
    if ((rc = text_nodes(f, a)) < 0)
        return fc__err(rc, "out of memory writing the report");
    text_conflicts(f, a);
    text_intervals(f, a);
    text_flows(f, a);
    text_hot_nodes(f, a);
    fc__report_text_observation(f, a);
    if ((rc = fc__report_text_prediction(f, a)) < 0 || (rc = fc__report_text_coll_prediction(f, a)) < 0)
        return fc__err(rc, "out of memory writing the report");
    text_sites(f, a);
    if ((rc = text_waits(f, a)) < 0)
        return fc__err(rc, "out of memory writing the report");
    text_unmatched(f, a);
    if (fflush(f) != 0 || ferror(f))
        return fc__err(FC_EIO, "writing the report: %s", strerror(errno ? errno : EIO));
    return 0;
}
