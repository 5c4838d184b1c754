/* analyzer/cmd/dump.c: `flowcut dump`, every event of a trace, one line each, merged across
 * ranks by clock-aligned time (line format: fc_record_format in reader.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/reader.h>
#include "analysis/analysis.h"
#include "cmd/cli.h"

static const char usage[] =
    "usage: flowcut dump [--rank N] [--kind NAME] [--no-sites] TRACE\n"
    "Prints every event of TRACE (a trace directory or one rank file), one per line, in time order:\n"
    "  time=S rank=R thread=T kind=NAME [peer=] [tag=] [comm=] [bytes=] [bytes2=] [req=] [newcomm=]\n"
    "  [dur=] [flags=] [site=]\n"
    "time is in seconds since rank 0's first event, on rank 0's clock.\n"
    "  --rank N      only the events of world rank N\n"
    "  --kind NAME   only the events of this kind (MPI_Send, COMPLETE, ...)\n"
    "  --no-sites    do not print call sites (and do not run addr2line)\n"
    "  --help        print this help\n";

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"rank", required_argument, NULL, 'r'}, {"kind", required_argument, NULL, 'k'},
        {"no-sites", no_argument, NULL, 's'},   {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long rank = -1;
    int kind = -1, sites = 1, c, status = 1, rc;
    char *end;
    fc_trace *t = NULL;
    fc_symbols *syms = NULL;
    fc_merge *m = NULL;
    fc__cli_init("dump", usage);
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            rank = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || rank < 0 || rank > UINT32_MAX)
                return fc__cli_usage("--rank needs a world rank (a number >= 0), not '%s'", optarg);
            break;
        case 'k':
            if ((kind = fc_event_kind_from_name(optarg)) < 0)
                return fc__cli_usage("unknown event kind '%s' (examples: MPI_Send, COMPLETE)", optarg);
            break;
        case 's':
            sites = 0;
            break;
        case 'h':
            return fc__cli_help();
        default:
            return fc__cli_bad_option(argv, c);
        }
    }
    if (argc - optind != 1)
        return fc__cli_usage("expects exactly one TRACE");
    fc__analysis_init(); /* OTF2 input for fc_trace_open */
    if (fc_trace_open(argv[optind], &t) < 0) {
        fc__cli_failed();
        return 1;
    }
    fc__cli_trace_warnings(t);
    size_t only = 0;
    if (rank >= 0) {
        long i = fc_trace_find(t, (uint32_t)rank);
        if (i < 0) {
            fprintf(stderr, "flowcut dump: %s has no rank %ld\n", argv[optind], rank);
            status = 2;
            goto out;
        }
        only = (size_t)i;
    }
    if (sites && fc_symbols_create(t, 0, &syms) < 0)
        goto fail;
    if (fc_merge_open(t, rank >= 0 ? &only : NULL, rank >= 0 ? 1 : 0, &m) < 0)
        goto fail;
    int64_t origin = fc_trace_origin(t);
    fc_record rec;
    char line[1024];
    while ((rc = fc_merge_next(m, &rec)) > 0) {
        if (kind >= 0 && rec.ev.kind != (unsigned)kind)
            continue;
        const char *site = NULL;
        if (syms != NULL && rec.ev.site != 0) {
            long i = fc_trace_find(t, rec.rank);
            site = fc_symbols_chain(syms, (size_t)i, rec.ev.site);
            if (site == NULL)
                site = "unknown";
        }
        size_t n = fc_record_format(&rec, origin, site, line, sizeof line);
        if (n >= sizeof line) {
            char *big = malloc(n + 1);
            if (big == NULL) {
                fprintf(stderr, "flowcut dump: out of memory\n");
                goto out;
            }
            fc_record_format(&rec, origin, site, big, n + 1);
            puts(big);
            free(big);
        } else {
            puts(line);
        }
    }
    if (rc < 0)
        goto fail;
    if (fflush(stdout) != 0) {
        perror("flowcut dump: writing the output");
        goto out;
    }
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        if (r->partial && (rank < 0 || r->info.rank == (uint32_t)rank))
            fprintf(stderr, "flowcut dump: warning: rank %u is partial: %s\n", r->info.rank, r->partial_why);
    }
    if (rank < 0 && fc_trace_missing(t) > 0)
        fprintf(stderr, "flowcut dump: warning: %u of %u rank files are missing\n", fc_trace_missing(t),
                fc_trace_world_size(t));
    status = 0;
    goto out;
fail:
    fflush(stdout);
    fc__cli_failed();
out:
    fc_merge_close(m);
    fc_symbols_free(syms);
    fc_trace_close(t);
    return status;
}
