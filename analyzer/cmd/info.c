/* analyzer/cmd/info.c: `flowcut info`, a summary of a trace (ranks, nodes, events and bytes per
 * kind, duration, partial ranks, warnings, MPI version, clock-sync quality), as text or JSON. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/reader.h>

#include "util/internal.h"
#include "analysis/analysis.h"

static const char usage[] =
    "usage: flowcut info [--json] TRACE\n"
    "Summarises TRACE (a trace directory or one rank file).\n"
    "  --json   print one JSON object instead of text\n"
    "  --help   print this help\n";

typedef struct summary {
    uint64_t events[FC_EV_MAX_], bytes[FC_EV_MAX_], total;
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

static int summarize(fc_trace *t, summary *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        fc_cursor *c;
        fc_record rec;
        int rc;
        if (r->nclocks > 0)
            s->synced++;
        if (fc_rank_clock_uncertainty(r) > s->max_unc)
            s->max_unc = fc_rank_clock_uncertainty(r);
        if (fc_cursor_open(t, i, &c) < 0)
            return -1;
        while ((rc = fc_cursor_next(c, &rec)) > 0) {
            s->events[rec.ev.kind]++;
            s->bytes[rec.ev.kind] += rec.ev.bytes;
            s->total++;
            if (!s->have_time || rec.t0 < s->first)
                s->first = rec.t0;
            if (!s->have_time || rec.t1 > s->last)
                s->last = rec.t1;
            s->have_time = 1;
        }
        fc_cursor_close(c);
        if (rc < 0)
            return -1;
    }
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
    fc_trace *t = arg;
    printf("%s{\"name\": ", first ? "" : ", ");
    fc__json_str(stdout, name);
    fputs(", \"ranks\": [", stdout);
    for (size_t k = 0; k < n; k++)
        printf("%s%" PRIu32, k ? ", " : "", fc_trace_rank(t, ix[k])->info.rank);
    fputs("]}", stdout);
}

static void node_text(const char *name, const size_t *ix, size_t n, int first, void *arg)
{
    fc_trace *t = arg;
    printf("  %s: rank%s ", name, n > 1 ? "s" : "");
    for (size_t k = 0; k < n; k++)
        printf("%s%" PRIu32, k ? "," : "", fc_trace_rank(t, ix[k])->info.rank);
    putchar('\n');
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

static void print_json(fc_trace *t, const summary *s)
{
    size_t n = fc_trace_nranks(t);
    printf("{\"ranks\": %zu, \"world_size\": %" PRIu32 ", \"missing_ranks\": %" PRIu32 ", \"nodes\": [", n,
           fc_trace_world_size(t), fc_trace_missing(t));
    each_node(t, node_json, t);
    printf("], \"partial\": %s, \"partial_ranks\": [", fc_trace_partial(t) ? "true" : "false");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        if (!r->partial)
            continue;
        printf("%s{\"rank\": %" PRIu32 ", \"reason\": ", first ? "" : ", ", r->info.rank);
        fc__json_str(stdout, r->partial_why);
        putchar('}');
        first = 0;
    }
    printf("], \"events_total\": %" PRIu64 ", \"events\": {", s->total);
    first = 1;
    for (unsigned k = 0; k < FC_EV_MAX_; k++)
        if (s->events[k]) {
            printf("%s\"%s\": %" PRIu64, first ? "" : ", ", fc_event_kind_name(k), s->events[k]);
            first = 0;
        }
    fputs("}, \"bytes\": {", stdout);
    first = 1;
    for (unsigned k = 0; k < FC_EV_MAX_; k++)
        if (s->events[k] && (fc_event_fields(k, FC_EVF_STATUS) & FC_FIELD_BYTES)) {
            printf("%s\"%s\": %" PRIu64, first ? "" : ", ", fc_event_kind_name(k), s->bytes[k]);
            first = 0;
        }
    printf("}, \"duration_s\": %.9f, \"mpi_version\": ", duration(s));
    fc__json_str(stdout, mpi_version(t));
    fputs(", \"collective_settings\": [", stdout);
    const fc_rank *ce = coll_env_rank(t);
    for (size_t o = 0; ce != NULL && o < ce->coll_env_len; o += strlen(ce->coll_env + o) + 1) {
        fputs(o ? ", " : "", stdout);
        fc__json_str(stdout, ce->coll_env + o);
    }
    putchar(']');
    printf(", \"clock\": {\"synced_ranks\": %zu, \"max_uncertainty_ns\": %" PRIu64 "}, \"warnings\": [",
           s->synced, s->max_unc);
    first = 1;
    for (size_t i = 0; i < n; i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        for (size_t w = 0; w < r->nwarnings; w++) {
            printf("%s{\"rank\": %" PRIu32 ", \"text\": ", first ? "" : ", ", r->info.rank);
            fc__json_str(stdout, r->warnings[w]);
            putchar('}');
            first = 0;
        }
    }
    fputs("], \"rank_info\": [", stdout);
    for (size_t i = 0; i < n; i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        printf("%s{\"rank\": %" PRIu32 ", \"node\": ", i ? ", " : "", r->info.rank);
        fc__json_str(stdout, node_of(r));
        fputs(", \"host\": ", stdout);
        fc__json_str(stdout, r->info.host);
        printf(", \"core\": %" PRId32 ", \"numa\": %" PRId32 ", \"pid\": %" PRIu32 ", \"threads\": %" PRIu32
               ", \"events\": %" PRIu64 ", \"partial\": %s, \"program\": ",
               r->info.core, r->info.numa, r->info.pid, r->threads, r->events, r->partial ? "true" : "false");
        fc__json_str(stdout, r->info.program);
        putchar('}');
    }
    fputs("]}\n", stdout);
}

/* Prints s on one line: control characters (MPI version strings hold tabs and newlines) become
 * spaces. */
static void print_line(const char *s)
{
    for (; *s; s++)
        putchar((unsigned char)*s < 0x20 ? ' ' : *s);
    putchar('\n');
}

static void print_text(fc_trace *t, const char *path, const summary *s)
{
    size_t n = fc_trace_nranks(t);
    printf("trace:       %s\n", path);
    printf("ranks:       %zu (world size %" PRIu32 ")\n", n, fc_trace_world_size(t));
    printf("nodes:       %zu\n", count_nodes(t));
    each_node(t, node_text, t);
    fputs("mpi:         ", stdout);
    print_line(mpi_version(t)[0] ? mpi_version(t) : "unknown");
    printf("duration:    %.9f s\n", duration(s));
    const fc_rank *ce = coll_env_rank(t);
    for (size_t o = 0; ce != NULL && o < ce->coll_env_len; o += strlen(ce->coll_env + o) + 1)
        printf("collectives: %s\n", ce->coll_env + o);
    printf("clock sync:  %zu of %zu ranks measured, max uncertainty %" PRIu64 " ns\n", s->synced, n, s->max_unc);
    printf("partial:     %s\n", fc_trace_partial(t) ? "yes" : "no");
    if (fc_trace_missing(t))
        printf("  %" PRIu32 " rank files missing\n", fc_trace_missing(t));
    for (size_t i = 0; i < n; i++)
        if (fc_trace_rank(t, i)->partial)
            printf("  rank %" PRIu32 ": %s\n", fc_trace_rank(t, i)->info.rank, fc_trace_rank(t, i)->partial_why);
    size_t nw = 0;
    for (size_t i = 0; i < n; i++)
        nw += fc_trace_rank(t, i)->nwarnings;
    printf("warnings:    %zu\n", nw);
    for (size_t i = 0; i < n; i++)
        for (size_t w = 0; w < fc_trace_rank(t, i)->nwarnings; w++)
        {
            printf("  rank %" PRIu32 ": ", fc_trace_rank(t, i)->info.rank);
            print_line(fc_trace_rank(t, i)->warnings[w]);
        }
    printf("events:      %" PRIu64 "\n", s->total);
    for (unsigned k = 0; k < FC_EV_MAX_; k++) {
        if (!s->events[k])
            continue;
        printf("  %-26s %12" PRIu64, fc_event_kind_name(k), s->events[k]);
        if (fc_event_fields(k, FC_EVF_STATUS) & FC_FIELD_BYTES)
            printf("  bytes %" PRIu64, s->bytes[k]);
        putchar('\n');
    }
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int json = 0, c, status = 1;
    fc_trace *t = NULL;
    summary *s = NULL;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = 1;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fprintf(stderr, "flowcut info: unknown or incomplete option '%s'\n%s", argv[optind - 1], usage);
            return 2;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "flowcut info: expects exactly one TRACE\n%s", usage);
        return 2;
    }
    if ((s = malloc(sizeof *s)) == NULL) {
        fprintf(stderr, "flowcut info: out of memory\n");
        return 1;
    }
    fc__analysis_init(); /* OTF2 input for fc_trace_open */
    if (fc_trace_open(argv[optind], &t) < 0 || summarize(t, s) < 0) {
        fprintf(stderr, "flowcut info: %s\n", fc_errmsg());
        goto out;
    }
    if (json)
        print_json(t, s);
    else
        print_text(t, argv[optind], s);
    status = fflush(stdout) == 0 ? 0 : 1;
out:
    fc_trace_close(t);
    free(s);
    return status;
}
