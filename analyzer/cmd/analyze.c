/* analyzer/cmd/analyze.c: `flowcut analyze`, which matches the messages of a trace, splits the
 * inter-node flows into intervals labelled with their conflicts, predicts every flow's time with
 * the contention models, and writes the report as text, JSON, CSV or an HTML page. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "model/model.h"
#include "analysis/analyze.h"
#include "cmd/cli.h"

static const char usage[] =
    "usage: flowcut analyze [--format text|json|csv|html] [-o FILE] [--eager BYTES] [--top N]\n"
    "                       [--platform PROFILE] [--model flowcut|maxrate|fairshare|linear|all|none]\n"
    "                       [--flows network|all] [--remap REMAP.json] TRACE\n"
    "Analyses the point-to-point communications of TRACE (a trace directory or one rank file):\n"
    "flows between nodes, their conflicts over time, each model's predicted time of every flow\n"
    "against the observed one, wait states and warnings.\n"
    "  --format F     text (default, for a terminal), json (complete), csv (one row per message)\n"
    "                 or html (one self-contained page to open in a browser)\n"
    "  -o FILE        write the report to FILE instead of standard output\n"
    "  --eager BYTES  eager/rendezvous threshold: messages of BYTES or more use rendezvous\n"
    "                 (default: the profile's, else 262144, MPICH ch4:ucx over UCX 1.13)\n"
    "  --platform P   the platform profile written by flowcut-calibrate; without it the models\n"
    "                 use a profile fitted to the trace's own network flows\n"
    "  --model M      the contention model to predict with, all (default: all the profile serves),\n"
    "                 or none to leave predictions out (faster on long traces)\n"
    "  --flows F      the flows the models' error statistics count: network (default: those whose\n"
    "                 time is set by moving their bytes) or all (every class but below-wire)\n"
    "  --top N        rows of each long list of the text report (default 10, 0 for all)\n"
    "  --remap FILE   html: show the placements of FILE, which `flowcut remap --format json` wrote\n"
    "  --help         print this help\n";

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"eager", required_argument, NULL, 'e'},
                                         {"top", required_argument, NULL, 't'},
                                         {"platform", required_argument, NULL, 'p'},
                                         {"model", required_argument, NULL, 'm'},
                                         {"flows", required_argument, NULL, 'F'},
                                         {"remap", required_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    fc__analyze_opts o = {.format = "text", .model = "all", .top = 10, .progress = fc__cli_progress,
                          .opened = fc__cli_trace_warnings};
    uint64_t top = 10;
    int c;

    fc__cli_init("analyze", usage);
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0 && strcmp(optarg, "csv") != 0 &&
                strcmp(optarg, "html") != 0)
                return fc__cli_usage("unknown format '%s' (text, json, csv or html)", optarg);
            o.format = optarg;
            break;
        case 'o':
            o.output = optarg;
            break;
        case 'e':
            if (fc__cli_count(optarg, &o.eager) < 0 || o.eager == 0)
                return fc__cli_usage("--eager wants a positive number of bytes, not '%s'", optarg);
            break;
        case 't':
            if (fc__cli_count(optarg, &top) < 0 || top > SIZE_MAX)
                return fc__cli_usage("--top wants a number, not '%s'", optarg);
            o.top = (size_t)top;
            break;
        case 'p':
            o.platform = optarg;
            break;
        case 'm':
            if (strcmp(optarg, "all") != 0 && strcmp(optarg, "none") != 0 && fc__model_parse(optarg) < 0)
                return fc__cli_usage("unknown model '%s' (flowcut, maxrate, fairshare, linear, all or none)", optarg);
            o.model = optarg;
            break;
        case 'F':
            if (strcmp(optarg, "network") != 0 && strcmp(optarg, "all") != 0)
                return fc__cli_usage("--flows wants network or all, not '%s'", optarg);
            o.all_flows = strcmp(optarg, "all") == 0;
            break;
        case 'r':
            o.remap = optarg;
            break;
        case 'h':
            return fc__cli_help();
        default:
            return fc__cli_bad_option(argv, c);
        }
    }
    if (argc - optind != 1)
        return fc__cli_usage("expects exactly one TRACE");
    if (o.remap != NULL && strcmp(o.format, "html") != 0)
        return fc__cli_usage("--remap goes with --format html");
    o.trace = argv[optind];
    return fc__analyze(&o) < 0 ? fc__cli_failed() : 0;
}
