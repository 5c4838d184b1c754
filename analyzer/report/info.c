/* analyzer/report/info.c: `flowcut info`'s summary of a trace (ranks, nodes, events and bytes per
 * kind, duration, partial ranks, warnings, MPI version, clock-sync quality), as text or JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/reader.h>
#include "util/internal.h"
#include "report/report.h"

/* Where the node callbacks write. */
typedef struct out_arg {
    fc_trace *t;
    FILE *f;
} out_arg;

typedef struct summary {
    uint64_t events[FC_EV_MAX_], bytes[FC_EV_MAX_], total;
    /* The calls the program made, per MPI function: its records, plus each run of polls the
     * tracer folded into its first call (format.h, POLLS) counted for all its calls. */
    uint64_t calls[FC_EV_MAX_], ncalls;
    int have_time;
    int64_t first, last; /* aligned ns */
    uint64_t max_unc;
    size_t synced;       /* ranks with a clock measurement */
} summary;

/* The node a rank ran on: its node name, else its host name. */
static const char *node_of(const fc_rank *r)
{
    return r->info.node[0] ? r->info.node : r->info.host[0] ? r->info.host : "unknown";
}

/* An MPI function's kind, as opposed to the tracer's sub-records and records of its own. */
static int is_call(unsigned k)
{
    const char *name = fc_event_kind_name(k);
    return name != NULL && strncmp(name, "MPI_", 4) == 0;
}

static int summarize(fc_trace *t, summary *s)
{
    memset(s, 0, sizeof *s);
    /* Per thread, the kind of its latest record: a POLLS record extends the call just before it
     * in its own thread, while the cursor interleaves the threads. */
    uint16_t *last = NULL;
    size_t nlast = 0;
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        fc_cursor *c;
        fc_record rec;
        int rc;
        if (nlast > 0)
            memset(last, 0, nlast * sizeof *last);
        if (r->nclocks > 0)
            s->synced++;
        if (fc_rank_clock_uncertainty(r) > s->max_unc)
            s->max_unc = fc_rank_clock_uncertainty(r);
        if (fc_cursor_open(t, i, &c) < 0) {
            free(last);
            return -1;
        }
        while ((rc = fc_cursor_next(c, &rec)) > 0) {
            unsigned k = rec.ev.kind, th = rec.ev.thread;
            s->events[k]++;
            s->bytes[k] += rec.ev.bytes;
            s->total++;
            if (th >= nlast) {
                size_t n = th + 1 > 2 * nlast ? th + 1 : 2 * nlast;
                uint16_t *g = realloc(last, n * sizeof *g);
                if (g == NULL) {
                    fc_cursor_close(c);
                    free(last);
                    return fc__err(FC_ENOMEM, "out of memory");
                }
                memset(g + nlast, 0, (n - nlast) * sizeof *g);
                last = g, nlast = n;
            }
            if (k == FC_EV_POLLS && last[th] != 0 && rec.ev.bytes > 1) {
                s->calls[last[th]] += rec.ev.bytes - 1; /* the run's first is a record of its own */
                s->ncalls += rec.ev.bytes - 1;
            } else if (is_call(k)) {
                s->calls[k]++;
                s->ncalls++;
            }
            if (is_call(k))
                last[th] = (uint16_t)k;
            if (!s->have_time || rec.t0 < s->first)
                s->first = rec.t0;
            if (!s->have_time || rec.t1 > s->last)
                s->last = rec.t1;
            s->have_time = 1;
        }
        fc_cursor_close(c);
        if (rc < 0) {
            free(last);
            return -1;
        }
    }
    free(last);
    return 0;
}


/* Calls fn for each node with the indices of its rank files, in order of first appearance. */
static void each_node(fc_trace *t, void (*fn)(const char *name, const size_t *ix, size_t n, int first, void *arg),
                      void *arg)
{
    size_t n = fc_trace_nranks(t), *ix = malloc((n ? n : 1) * sizeof *ix);
    char *done = calloc(n ? n : 1, 1);
    int first = 1;
    if (ix == NULL || done == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        const char *name = node_of(fc_trace_rank(t, i));
        size_t k = 0;
        for (size_t j = i; j < n; j++)
            if (!done[j] && strcmp(node_of(fc_trace_rank(t, j)), name) == 0) {
                done[j] = 1;
                ix[k++] = j;
            }
        fn(name, ix, k, first, arg);
        first = 0;
    }
out:
    free(ix);
    free(done);
}

static void node_json(const char *name, const size_t *ix, size_t n, int first, void *arg)
{
    const out_arg *o = arg;
    fc_trace *t = o->t;
    FILE *f = o->f;
    fprintf(f, "%s{\"name\": ", first ? "" : ", ");
    fc__json_str(f, name);
    fputs(", \"ranks\": [", f);
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%s%" PRIu32, k ? ", " : "", fc_trace_rank(t, ix[k])->info.rank);
    fputs("]}", f);
}

static void node_text(const char *name, const size_t *ix, size_t n, int first, void *arg)
{
    const out_arg *o = arg;
    fc_trace *t = o->t;
    FILE *f = o->f;
    fprintf(f, "  %s: rank%s ", name, n > 1 ? "s" : "");
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%s%" PRIu32, k ? "," : "", fc_trace_rank(t, ix[k])->info.rank);
    fputc('\n', f);
}

static size_t count_nodes(fc_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        size_t j = 0;
        while (j < i && strcmp(node_of(fc_trace_rank(t, j)), node_of(fc_trace_rank(t, i))) != 0)
            j++;
        n += j == i;
    }
    return n;
}

static const char *mpi_version(fc_trace *t)
{
    for (size_t i = 0; i < fc_trace_nranks(t); i++)
        if (fc_trace_rank(t, i)->info.mpi_version[0])
            return fc_trace_rank(t, i)->info.mpi_version;
    return "";
}

/* The first rank's recorded MPIR_CVAR_* collective settings (FC_RK_COLL_ENV), or NULL. */
static const fc_rank *coll_env_rank(fc_trace *t)
{
    for (size_t i = 0; i < fc_trace_nranks(t); i++)
        if (fc_trace_rank(t, i)->coll_env != NULL)
            return fc_trace_rank(t, i);
    return NULL;
}

static double duration(const summary *s)
{
    return s->have_time ? (double)(s->last - s->first) / 1e9 : 0.0;
}

/* The skipped rank file of world rank w, or NULL. */
static const fc_skipped *skipped_of(const fc_trace *t, uint32_t w)
{
    for (size_t i = 0; i < fc_trace_nskipped(t); i++)
        if (fc_trace_skipped(t, i)->rank == w)
            return fc_trace_skipped(t, i);
    return NULL;
}

/* The warning about a skipped rank file, in buf. */
static const char *skipped_text(const fc_skipped *k, char *buf, size_t len)
{
    snprintf(buf, len, "rank file not read, rank left out: %s", k->why);
    return buf;
}

/* A JSON object of val by event kind name, for the kinds with a non-zero count in `present` (and
 * with a byte count when bytes_only). */
static void kind_map(FILE *f, const uint64_t *val, const uint64_t *present, int bytes_only)
{
    int first = 1;
    fputc('{', f);
    for (unsigned k = 0; k < FC_EV_MAX_; k++)
        if (present[k] && (!bytes_only || (fc_event_fields(k, FC_EVF_STATUS) & FC_FIELD_BYTES))) {
            fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", fc_event_kind_name(k), val[k]);
            first = 0;
        }
    fputc('}', f);
}

static void print_json(FILE *f, fc_trace *t, const summary *s)
{
    char line[1024];
    out_arg oa = {t, f};
    size_t n = fc_trace_nranks(t);
    fprintf(f, "{\"ranks\": %zu, \"world_size\": %" PRIu32 ", \"missing_ranks\": %" PRIu32 ", \"nodes\": [", n,
           fc_trace_world_size(t), fc_trace_missing(t));
    each_node(t, node_json, &oa);
    fprintf(f, "], \"partial\": %s, \"partial_ranks\": [", fc_trace_partial(t) ? "true" : "false");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        if (!r->partial)
            continue;
        fprintf(f, "%s{\"rank\": %" PRIu32 ", \"reason\": ", first ? "" : ", ", r->info.rank);
        fc__json_str(f, r->partial_why);
        fputc('}', f);
        first = 0;
    }
    fputs("], \"ranks_missing\": [", f);
    first = 1;
    for (uint32_t w = 0; w < fc_trace_world_size(t); w++) {
        if (fc_trace_find(t, w) >= 0)
            continue;
        const fc_skipped *k = skipped_of(t, w);
        fprintf(f, "%s{\"rank\": %" PRIu32 ", \"file\": ", first ? "" : ", ", w);
        if (k != NULL)
            fc__json_str(f, k->file);
        else
            fputs("null", f);
        fputs(", \"reason\": ", f);
        fc__json_str(f, k != NULL ? k->why : "no trace file");
        fputc('}', f);
        first = 0;
    }
    fputs("], \"ranks_partial\": [", f);
    first = 1;
    for (size_t i = 0; i < n; i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        if (!r->partial)
            continue;
        fprintf(f, "%s{\"rank\": %" PRIu32 ", \"file\": ", first ? "" : ", ", r->info.rank);
        fc__json_str(f, r->file);
        fputs(", \"reason\": ", f);
        fc__json_str(f, r->partial_why);
        fputc('}', f);
        first = 0;
    }
    fprintf(f, "], \"events_total\": %" PRIu64 ", \"events\": ", s->total);
    kind_map(f, s->events, s->events, 0);
    fprintf(f, ", \"calls_total\": %" PRIu64 ", \"calls\": ", s->ncalls);
    kind_map(f, s->calls, s->calls, 0);
    fputs(", \"bytes\": ", f);
    kind_map(f, s->bytes, s->events, 1);
    fprintf(f, ", \"duration_s\": %.9f, \"mpi_version\": ", duration(s));
    fc__json_str(f, mpi_version(t));
    fputs(", \"collective_settings\": [", f);
    const fc_rank *ce = coll_env_rank(t);
    for (size_t o = 0; ce != NULL && o < ce->coll_env_len; o += strlen(ce->coll_env + o) + 1) {
        fputs(o ? ", " : "", f);
        fc__json_str(f, ce->coll_env + o);
    }
    fputc(']', f);
    fprintf(f, ", \"clock\": {\"synced_ranks\": %zu, \"max_uncertainty_ns\": %" PRIu64 "}, \"warnings\": [",
           s->synced, s->max_unc);
    first = 1;
    for (size_t i = 0; i < fc_trace_nskipped(t); i++) {
        const fc_skipped *k = fc_trace_skipped(t, i);
        fprintf(f, "%s{\"rank\": %" PRIu32 ", \"text\": ", first ? "" : ", ", k->rank);
        fc__json_str(f, skipped_text(k, line, sizeof line));
        fputc('}', f);
        first = 0;
    }
    for (size_t i = 0; i < n; i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        for (size_t w = 0; w < r->nwarnings; w++) {
            fprintf(f, "%s{\"rank\": %" PRIu32 ", \"text\": ", first ? "" : ", ", r->info.rank);
            fc__json_str(f, r->warnings[w]);
            fputc('}', f);
            first = 0;
        }
    }
    fputs("], \"rank_info\": [", f);
    for (size_t i = 0; i < n; i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        fprintf(f, "%s{\"rank\": %" PRIu32 ", \"node\": ", i ? ", " : "", r->info.rank);
        fc__json_str(f, node_of(r));
        fprintf(f, ", \"slot\": %" PRIu32 ", \"host\": ", r->info.slot);
        fc__json_str(f, r->info.host);
        fprintf(f, ", \"core\": %" PRId32 ", \"numa\": %" PRId32 ", \"pid\": %" PRIu32 ", \"threads\": %" PRIu32
               ", \"events\": %" PRIu64 ", \"partial\": %s, \"program\": ",
               r->info.core, r->info.numa, r->info.pid, r->threads, r->events, r->partial ? "true" : "false");
        fc__json_str(f, r->info.program);
        fputc('}', f);
    }
    fputs("]}\n", f);
}

/* Prints s on one line: control characters (MPI version strings hold tabs and newlines) become
 * spaces. */
static void print_line(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
    fputc('\n', f);
}

static void print_text(FILE *f, fc_trace *t, const char *path, const summary *s)
{
    out_arg oa = {t, f};
    size_t n = fc_trace_nranks(t);
    fprintf(f, "trace:       %s\n", path);
    fprintf(f, "ranks:       %zu (world size %" PRIu32 ")\n", n, fc_trace_world_size(t));
    fprintf(f, "nodes:       %zu\n", count_nodes(t));
    each_node(t, node_text, &oa);
    fputs("mpi:         ", f);
    print_line(f, mpi_version(t)[0] ? mpi_version(t) : "unknown");
    fprintf(f, "duration:    %.9f s\n", duration(s));
    const fc_rank *ce = coll_env_rank(t);
    for (size_t o = 0; ce != NULL && o < ce->coll_env_len; o += strlen(ce->coll_env + o) + 1)
        fprintf(f, "collectives: %s\n", ce->coll_env + o);
    fprintf(f, "clock sync:  %zu of %zu ranks measured, max uncertainty %" PRIu64 " ns\n", s->synced, n, s->max_unc);
    fprintf(f, "partial:     %s\n", fc_trace_partial(t) ? "yes" : "no");
    if (fc_trace_missing(t))
        fprintf(f, "  %" PRIu32 " rank files missing\n", fc_trace_missing(t));
    for (size_t i = 0; i < n; i++)
        if (fc_trace_rank(t, i)->partial)
            fprintf(f, "  rank %" PRIu32 ": %s\n", fc_trace_rank(t, i)->info.rank, fc_trace_rank(t, i)->partial_why);
    size_t nw = fc_trace_nskipped(t);
    char line[1024];
    for (size_t i = 0; i < n; i++)
        nw += fc_trace_rank(t, i)->nwarnings;
    fprintf(f, "warnings:    %zu\n", nw);
    for (size_t i = 0; i < fc_trace_nskipped(t); i++) {
        fprintf(f, "  rank %" PRIu32 ": ", fc_trace_skipped(t, i)->rank);
        print_line(f, skipped_text(fc_trace_skipped(t, i), line, sizeof line));
    }
    for (size_t i = 0; i < n; i++)
        for (size_t w = 0; w < fc_trace_rank(t, i)->nwarnings; w++) {
            fprintf(f, "  rank %" PRIu32 ": ", fc_trace_rank(t, i)->info.rank);
            print_line(f, fc_trace_rank(t, i)->warnings[w]);
        }
    fprintf(f, "events:      %" PRIu64 " (%" PRIu64 " MPI calls)\n", s->total, s->ncalls);
    /* An MPI function's line counts the calls the program made; a folded run of polls is one
     * record that stands for many (its record count follows). */
    for (unsigned k = 0; k < FC_EV_MAX_; k++) {
        if (!s->events[k])
            continue;
        const char *name = fc_event_kind_name(k);
        fprintf(f, "  %-26s %12" PRIu64, name ? name : "?", is_call(k) ? s->calls[k] : s->events[k]);
        if (fc_event_fields(k, FC_EVF_STATUS) & FC_FIELD_BYTES)
            fprintf(f, "  bytes %" PRIu64, s->bytes[k]);
        if (is_call(k) && s->calls[k] != s->events[k])
            fprintf(f, "  calls in %" PRIu64 " records (runs of polls folded)", s->events[k]);
        if (k == FC_EV_POLLS)
            fputs("  runs of polls folded (their calls are counted above)", f);
        fputc('\n', f);
    }
}

int fc__report_info(FILE *f, fc_trace *t, const char *path, int json)
{
    summary *s = malloc(sizeof *s);
    if (s == NULL)
        return fc__err(FC_ENOMEM, "out of memory");
    int rc = summarize(t, s);
    if (rc == 0) {
        if (json)
            print_json(f, t, s);
        else
            print_text(f, t, path, s);
    }
    free(s);
    return rc;
}
