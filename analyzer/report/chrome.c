/* analyzer/report/chrome.c: a trace in the Trace Event Format that Perfetto and chrome://tracing
 * open: one process per node, one thread per rank, each MPI call a slice with its call site, each
 * matched message a flow arrow from the call that sent it to the call that completed its receive,
 * and the conflicts of the intervals on a track of their own. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/internal.h"
#include "report/report.h"
#include "report/shared.h"

/* The calls of one rank, in time order: where the flow arrows are bound. */
typedef struct calls {
    int64_t *t0, *t1; /* ns since the origin */
    size_t n, cap;
} calls;

typedef struct chrome {
    FILE *f;
    const fc__analysis *a;
    int64_t origin;
    size_t events; /* written so far: a comma before each but the first */
    uint32_t conflict_pid;
    unsigned char *used; /* conflict threads with a slice: node * 3 + class */
    fc__chrome_stats *st;
} chrome;

static void begin(chrome *c)
{
    fputs(c->events++ ? ",\n" : "\n", c->f);
}

/* Microseconds with ns resolution, as the format's ts and dur are. */
static void put_us(FILE *f, double us)
{
    fprintf(f, "%.3f", isfinite(us) ? us : 0.0);
}

static uint32_t node_pid(const fc__match *m, uint32_t rank)
{
    uint32_t n = rank < m->world ? m->rank_node[rank] : FC_NODE_NONE;
    return n < m->nnodes ? n + 1 : (uint32_t)m->nnodes + 2;
}

static int add_call(calls *k, int64_t t0, int64_t t1)
{
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 256;
        int64_t *a = realloc(k->t0, cap * sizeof *a);
        if (a == NULL)
            return FC_ENOMEM;
        k->t0 = a;
        if ((a = realloc(k->t1, cap * sizeof *a)) == NULL)
            return FC_ENOMEM;
        k->t1 = a;
        k->cap = cap;
    }
    k->t0[k->n] = t0;
    k->t1[k->n++] = t1 > t0 ? t1 : t0;
    return 0;
}

/* Time t (seconds since the origin) moved inside the call of k that holds it, in seconds: an
 * arrow bound there lies inside that slice in every viewer, 1 ns off its edges when the call lasts
 * longer than 2 ns. A send binds to the call that starts at t rather than one that ends there, a
 * receive's completion to the call that ends at t rather than one that starts there. t itself
 * when no call holds it. */
static double bind_at(const calls *k, double t, int completion)
{
    int64_t ns = (int64_t)llround(t * 1e9);
    size_t lo = 0, hi = k != NULL ? k->n : 0;
    while (lo < hi) { /* the first call starting after ns */
        size_t mid = lo + (hi - lo) / 2;
        if (k->t0[mid] <= ns + 1)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* The calls of a rank's threads interleave: look back over a few for one still running. */
    for (int strict = 1; strict >= 0; strict--)
        for (size_t i = lo; i-- > 0 && lo - i <= 64;) {
            int64_t a = k->t0[i], b = k->t1[i];
            int holds = b >= ns - 1;
            if (strict)
                holds = completion ? a < ns && holds : b > ns + 1 || b == a;
            if (!holds)
                continue;
            int64_t in = ns < a ? a : ns > b ? b : ns;
            if (b - a > 2)
                in = in < a + 1 ? a + 1 : in > b - 1 ? b - 1 : in;
            return (double)in / 1e9;
        }
    return t;
}

static int slices(chrome *c, fc_trace *t, calls *per_rank)
{
    const fc__match *m = c->a->match;
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *rk = fc_trace_rank(t, i);
        uint32_t r = rk->info.rank;
        fc_cursor *cur;
        fc_record rec;
        int rc = fc_cursor_open(t, i, &cur);
        if (rc < 0)
            return rc;
        while ((rc = fc_cursor_next(cur, &rec)) > 0) {
            const char *kind = fc_event_kind_name(rec.ev.kind);
            if (kind == NULL || strncmp(kind, "MPI_", 4) != 0)
                continue; /* completions and starts are parts of calls, not calls */
            begin(c);
            fprintf(c->f, "{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
                          ",\"ts\":",
                    kind, node_pid(m, r), r);
            put_us(c->f, (double)(rec.t0 - c->origin) / 1e3);
            fputs(",\"dur\":", c->f);
            put_us(c->f, rec.t1 > rec.t0 ? (double)(rec.t1 - rec.t0) / 1e3 : 0.0);
            fputs(",\"args\":{\"site\":", c->f);
            fc__json_str(c->f, fc__report_site(c->a, r, rec.ev.site));
            unsigned fields = fc_event_fields(rec.ev.kind, rec.ev.flags);
            if ((fields & FC_FIELD_PEER) && rec.peer >= 0)
                fprintf(c->f, ",\"peer\":%" PRId64, rec.peer);
            if (fields & FC_FIELD_TAG)
                fprintf(c->f, ",\"tag\":%" PRId64, rec.ev.tag);
            if (fields & FC_FIELD_BYTES)
                fprintf(c->f, ",\"bytes\":%" PRIu64, rec.ev.bytes);
            fputs("}}", c->f);
            c->st->slices++;
            if (r < m->world && add_call(&per_rank[r], rec.t0 - c->origin, rec.t1 - c->origin) < 0) {
                fc_cursor_close(cur);
                return fc__err(FC_ENOMEM, "out of memory writing the Chrome trace");
            }
        }
        fc_cursor_close(cur);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Flow v1 events: "s" inside the call that sent, "f" (bound to its enclosing slice) inside the
 * call that completed the receive. */
static void arrows(chrome *c, const calls *per_rank)
{
    const fc__match *m = c->a->match;
    for (size_t i = 0; i < m->nflows; i++) {
        const fc__flow *fl = &m->flows[i];
        const calls *src = fl->src_rank < m->world ? &per_rank[fl->src_rank] : NULL;
        const calls *dst = fl->dst_rank < m->world ? &per_rank[fl->dst_rank] : NULL;
        begin(c);
        fprintf(c->f, "{\"ph\":\"s\",\"cat\":\"%s\",\"name\":\"message\",\"id\":%" PRIu64 ",\"pid\":%" PRIu32
                      ",\"tid\":%" PRIu32 ",\"ts\":",
                fl->intra ? "intra-node" : "inter-node", fl->id, node_pid(m, fl->src_rank), fl->src_rank);
        put_us(c->f, bind_at(src, fl->send_start, 0) * 1e6);
        fprintf(c->f, ",\"args\":{\"bytes\":%" PRIu64 ",\"tag\":%" PRId64 "}}", fl->bytes, fl->tag);
        begin(c);
        fprintf(c->f, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"%s\",\"name\":\"message\",\"id\":%" PRIu64
                      ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":",
                fl->intra ? "intra-node" : "inter-node", fl->id, node_pid(m, fl->dst_rank), fl->dst_rank);
        put_us(c->f, bind_at(dst, fl->recv_end, 1) * 1e6);
        fputs("}", c->f);
        c->st->flows++;
    }
}

/* The conflict track: one thread per node and conflict class (outgoing, incoming, mixed). A slice
 * covers consecutive intervals in which the thread's conflict stays the same (the same k; for
 * mixed, the same number of entering-leaving pairs), so that a conflict that lasts while flows
 * start and end elsewhere is one slice, not one per interval. */
#define SLICE_FLOWS 32

typedef struct conflict_slice {
    int open;
    uint32_t state, cur; /* k, or the mixed pairs: of the slice, and of the current interval */
    size_t touched;      /* the current interval's number + 1 when it has this thread's conflict */
    double start, end;
    size_t intervals;
    uint64_t flows[SLICE_FLOWS]; /* of the slice, the first SLICE_FLOWS */
    uint32_t nflows;
    int more;                     /* flows left out of flows[] */
    uint64_t cflows[SLICE_FLOWS]; /* of the current interval (the sweep's conflicts are lent) */
    uint32_t ncflows;
    int cmore;
} conflict_slice;

typedef struct conflict_track {
    chrome *c;
    conflict_slice *sl;  /* per thread: node * 3 + class */
    uint32_t *open, nopen; /* threads with an open slice */
    uint32_t *now, nnow;   /* threads the current interval touches */
    size_t index;
} conflict_track;

static uint32_t conflict_class(uint32_t kind)
{
    return kind == FC_CONFLICT_OUTGOING ? 0 : kind == FC_CONFLICT_INCOMING ? 1 : 2;
}

/* Adds the ids v[0..n) that are not in set[0..*len) yet, up to SLICE_FLOWS; *more when some do
 * not fit. */
static void add_flows(uint64_t *set, uint32_t *len, int *more, const uint64_t *v, size_t n)
{
    for (size_t q = 0; q < n; q++) {
        uint32_t i = 0;
        while (i < *len && set[i] != v[q])
            i++;
        if (i < *len)
            continue;
        if (*len < SLICE_FLOWS)
            set[(*len)++] = v[q];
        else
            *more = 1;
    }
}

static void put_slice(conflict_track *tr, uint32_t tid)
{
    chrome *c = tr->c;
    conflict_slice *sl = &tr->sl[tid];
    uint32_t cls = tid % 3;
    static const char *const names[] = {"outgoing", "incoming", "mixed"};
    c->used[tid] = 1;
    begin(c);
    if (cls == 2)
        fprintf(c->f, "{\"ph\":\"X\",\"cat\":\"conflict\",\"name\":\"mixed k=2%s", sl->state > 1 ? " x" : "");
    else
        fprintf(c->f, "{\"ph\":\"X\",\"cat\":\"conflict\",\"name\":\"%s k=", names[cls]);
    if (cls != 2 || sl->state > 1)
        fprintf(c->f, "%" PRIu32, sl->state);
    fprintf(c->f, "\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":", c->conflict_pid, tid);
    put_us(c->f, sl->start * 1e6);
    fputs(",\"dur\":", c->f);
    put_us(c->f, (sl->end - sl->start) * 1e6);
    fputs(",\"args\":{\"node\":", c->f);
    fc__json_str(c->f, fc__rp_node_name(c->a->match, tid / 3));
    fprintf(c->f, ",\"intervals\":%zu,\"flows\":[", sl->intervals);
    for (uint32_t q = 0; q < sl->nflows; q++)
        fprintf(c->f, "%s%" PRIu64, q ? "," : "", sl->flows[q]);
    fprintf(c->f, "]%s}}", sl->more ? ",\"more_flows\":true" : "");
    c->st->conflicts++;
    sl->open = 0;
}

static int note_conflict(void *arg, const fc__conflict *cf)
{
    conflict_track *tr = arg;
    if (cf->node >= tr->c->a->match->nnodes)
        return 0;
    uint32_t tid = cf->node * 3 + conflict_class(cf->kind);
    conflict_slice *sl = &tr->sl[tid];
    if (sl->touched != tr->index + 1) {
        sl->touched = tr->index + 1;
        sl->cur = 0;
        sl->ncflows = 0;
        sl->cmore = 0;
        tr->now[tr->nnow++] = tid;
    }
    add_flows(sl->cflows, &sl->ncflows, &sl->cmore, cf->flows, cf->k);
    sl->cur = conflict_class(cf->kind) == 2 ? sl->cur + 1 : cf->k;
    return 0;
}

static int conflict_interval(void *arg, const fc__sweep *s, size_t index, double start, double end)
{
    conflict_track *tr = arg;
    tr->index = index;
    tr->nnow = 0;
    int rc = fc__sweep_conflicts(s, note_conflict, tr);
    if (rc < 0)
        return rc;
    /* Slices the interval does not continue end; those it does grow; the rest open. */
    uint32_t keep = 0;
    for (uint32_t i = 0; i < tr->nopen; i++) {
        conflict_slice *sl = &tr->sl[tr->open[i]];
        if (sl->touched == index + 1 && sl->state == sl->cur && sl->end == start)
            tr->open[keep++] = tr->open[i];
        else
            put_slice(tr, tr->open[i]);
    }
    tr->nopen = keep;
    for (uint32_t i = 0; i < tr->nnow; i++) {
        conflict_slice *sl = &tr->sl[tr->now[i]];
        if (!sl->open) {
            sl->open = 1;
            sl->state = sl->cur;
            sl->start = start;
            sl->intervals = 0;
            sl->nflows = 0;
            sl->more = 0;
            tr->open[tr->nopen++] = tr->now[i];
        }
        sl->end = end;
        sl->intervals++;
        add_flows(sl->flows, &sl->nflows, &sl->more, sl->cflows, sl->ncflows);
        sl->more |= sl->cmore;
    }
    return 0;
}

static void meta(chrome *c, const char *what, uint32_t pid, int64_t tid, const char *name, int64_t sort)
{
    begin(c);
    fprintf(c->f, "{\"ph\":\"M\",\"name\":\"%s_name\",\"pid\":%" PRIu32, what, pid);
    if (tid >= 0)
        fprintf(c->f, ",\"tid\":%" PRId64, tid);
    fputs(",\"args\":{\"name\":", c->f);
    fc__json_str(c->f, name);
    fputs("}}", c->f);
    begin(c);
    fprintf(c->f, "{\"ph\":\"M\",\"name\":\"%s_sort_index\",\"pid\":%" PRIu32, what, pid);
    if (tid >= 0)
        fprintf(c->f, ",\"tid\":%" PRId64, tid);
    fprintf(c->f, ",\"args\":{\"sort_index\":%" PRId64 "}}", sort);
}

int fc__report_chrome(FILE *f, fc_trace *t, const fc__analysis *a, fc__chrome_stats *st)
{
    const fc__match *m = a->match;
    chrome c = {.f = f, .a = a, .origin = fc_trace_origin(t), .conflict_pid = (uint32_t)m->nnodes + 1, .st = st};
    calls *per_rank = calloc(m->world ? m->world : 1, sizeof *per_rank);
    char name[64 + 256];
    int rc = 0;
    memset(st, 0, sizeof *st);
    if (per_rank == NULL || (c.used = calloc(m->nnodes * 3 + 1, 1)) == NULL) {
        rc = fc__err(FC_ENOMEM, "out of memory writing the Chrome trace");
        goto out;
    }
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"flowcut export --chrome-trace\",\"trace\":", f);
    fc__json_str(f, a->trace_path);
    fputs("},\n\"traceEvents\":[", f);
    for (size_t n = 0; n < m->nnodes; n++) {
        snprintf(name, sizeof name, "node %s", m->nodes[n]);
        meta(&c, "process", (uint32_t)n + 1, -1, name, (int64_t)n);
    }
    for (uint32_t r = 0; r < m->world; r++) {
        snprintf(name, sizeof name, "rank %" PRIu32, r);
        meta(&c, "thread", node_pid(m, r), r, name, r);
    }
    if ((rc = slices(&c, t, per_rank)) < 0)
        goto out;
    arrows(&c, per_rank);
    size_t nthreads = m->nnodes * 3;
    conflict_track tr = {.c = &c};
    if ((tr.sl = calloc(nthreads + 1, sizeof *tr.sl)) == NULL || (tr.open = calloc(nthreads + 1, sizeof *tr.open)) == NULL ||
        (tr.now = calloc(nthreads + 1, sizeof *tr.now)) == NULL) {
        rc = fc__err(FC_ENOMEM, "out of memory writing the Chrome trace");
        goto conflicts_out;
    }
    fc__sweep_ops ops = {.arg = &tr, .interval = conflict_interval};
    if ((rc = a->sweep(a, &ops)) < 0)
        goto conflicts_out;
    for (uint32_t i = 0; i < tr.nopen; i++)
        put_slice(&tr, tr.open[i]);
conflicts_out:
    free(tr.sl);
    free(tr.open);
    free(tr.now);
    if (rc < 0)
        goto out;
    meta(&c, "process", c.conflict_pid, -1, "conflicts", (int64_t)m->nnodes + 1);
    static const char *const cls[] = {"outgoing", "incoming", "mixed"};
    for (size_t n = 0; n < m->nnodes; n++)
        for (uint32_t k = 0; k < 3; k++)
            if (c.used[n * 3 + k]) {
                snprintf(name, sizeof name, "%s at %s", cls[k], m->nodes[n]);
                meta(&c, "thread", c.conflict_pid, (int64_t)(n * 3 + k), name, (int64_t)(n * 3 + k));
            }
    fputs("\n]}\n", f);
    rc = fc__rp_finish(f);
out:
    for (uint32_t r = 0; per_rank != NULL && r < m->world; r++) {
        free(per_rank[r].t0);
        free(per_rank[r].t1);
    }
    free(per_rank);
    free(c.used);
    return rc;
}
