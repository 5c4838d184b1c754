/* analyzer/cmd/export.c: `flowcut export --otf2 TRACE OUTDIR`, a flowcut trace (or an OTF2
 * archive) written as an OTF2 archive for Vampir, Scalasca and the rest of the Score-P tools, and
 * `flowcut export --chrome-trace TRACE FILE`, the same trace for Perfetto and chrome://tracing. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/reader.h>

#include "otf2/common.h"
#include "analysis/analysis.h"
#include "analysis/export.h"
#include "cmd/cli.h"

static const char usage[] =
    "usage: flowcut export --otf2 [--no-symbols] [--expand-polls] TRACE OUTDIR\n"
    "       flowcut export --chrome-trace TRACE FILE.json\n"
    "Writes TRACE (a trace directory, one rank file, or an OTF2 anchor file) as the OTF2 archive\n"
    "OUTDIR/traces.otf2 (with OUTDIR/traces.def and OUTDIR/traces/), laid out as Score-P writes\n"
    "MPI traces: open it in Vampir, or analyse it with `scout.mpi OUTDIR/traces.otf2`.\n"
    "OUTDIR is created when missing; an archive already in it is never overwritten.\n"
    "With --chrome-trace, writes FILE.json in the Trace Event Format for Perfetto (ui.perfetto.dev)\n"
    "and chrome://tracing: a process per node, a thread per rank, MPI calls as slices with their\n"
    "call sites, messages as arrows from send to receive, and the conflicts on a track of their own.\n"
    "  --otf2         write an OTF2 archive\n"
    "  --chrome-trace write a Trace Event Format file\n"
    "  --no-symbols   name call-site frames module+0xoffset instead of running addr2line\n"
    "  --expand-polls write every call of a run of polls the tracer folded, those between its first\n"
    "                 and last spread evenly (by default the run is its first and last calls, the\n"
    "                 last with the attribute flowcut::polls: the calls it stands for)\n"
    "  --help         print this help\n";

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"otf2", no_argument, NULL, 'o'},
        {"no-symbols", no_argument, NULL, 's'},
        {"expand-polls", no_argument, NULL, 'e'},
        {"chrome-trace", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int otf2 = 0, chrome = 0, c, status = 1;
    unsigned flags = 0;
    fc_trace *t = NULL;
    fc__otf2_stats st;
    fc__cli_init("export", usage);
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            otf2 = 1;
            break;
        case 's':
            flags |= FC_OTF2_NO_SYMBOLS;
            break;
        case 'e':
            flags |= FC_OTF2_EXPAND_POLLS;
            break;
        case 'c':
            chrome = 1;
            break;
        case 'h':
            return fc__cli_help();
        default:
            return fc__cli_bad_option(argv, c);
        }
    }
    if (otf2 == chrome)
        return fc__cli_usage("give one output format: --otf2 or --chrome-trace");
    if (argc - optind != 2)
        return fc__cli_usage(chrome ? "expects TRACE and FILE" : "expects TRACE and OUTDIR");
    if (chrome) {
        fc__chrome_stats cs;
        if (fc__export_chrome(argv[optind], argv[optind + 1], &cs) < 0)
            return fc__cli_failed();
        printf("%s: %" PRIu64 " MPI calls, %" PRIu64 " messages, %" PRIu64 " conflict slices\n", argv[optind + 1],
               cs.slices, cs.flows, cs.conflicts);
        return 0;
    }
    fc__analysis_init(); /* OTF2 input for fc_trace_open */
    if (fc_trace_open(argv[optind], &t) < 0) {
        fc__cli_failed();
        return 1;
    }
    fc__cli_trace_warnings(t);
    if (fc__otf2_export(t, argv[optind + 1], flags, &st) < 0) {
        fc__cli_failed();
        goto out;
    }
    printf("%s/traces.otf2: %" PRIu64 " locations, %" PRIu64 " calls, %" PRIu64 " OTF2 events, %" PRIu64
           " communicators, %" PRIu64 " calling contexts\n",
           argv[optind + 1], st.locations, st.calls, st.events, st.comms, st.contexts);
    if (fc_trace_partial(t))
        fprintf(stderr, "flowcut export: warning: %s is partial; ranks that ended without MPI_Finalize "
                        "got an empty one at their last event\n", argv[optind]);
    status = 0;
out:
    fc_trace_close(t);
    return status;
}
