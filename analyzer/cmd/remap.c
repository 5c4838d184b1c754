/* analyzer/cmd/remap.c: `flowcut remap`, which replays a traced run under other placements of
 * its ranks on nodes, reports the best few with what they gain, and writes the best one for a
 * launcher (Hydra, Open MPI, Slurm, Cray) or everything as JSON. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "model/model.h"
#include "remap/remap.h"
#include "analysis/remap.h"
#include "cmd/cli.h"

static const char usage[] =
    "usage: flowcut remap [--platform PROFILE] [--model M] [--nodes N --slots S]\n"
    "                     [--format text|hydra|openmpi|slurm|cray|json|html] [-o FILE] [--top K]\n"
    "                     [--hosts NAME,NAME,...] [--eager BYTES] [--exhaustive|--local]\n"
    "                     [--budget N] [--placement HOSTFILE] [--platform-trace T] TRACE\n"
    "       flowcut remap --check SUGGESTION TRACE\n"
    "Replays the traced run under other placements of its ranks on nodes and suggests the best.\n"
    "The first line always compares the replay of the observed placement with the observed run.\n"
    "  --platform P   platform profile from flowcut-calibrate (default: fitted to the trace)\n"
    "  --platform-trace T  fit the profile to trace T instead (e.g. a ping-pong traced on the\n"
    "                 same nodes: its flows are uncontended, where the remapped run's may not be)\n"
    "  --model M      flowcut, fairshare, maxrate or linear (default: flowcut with a --platform\n"
    "                 profile that has flow cuts, else fairshare)\n"
    "  --nodes N      nodes of the next run (default: the trace's)\n"
    "  --slots S      ranks per node (default: the most any node held in the trace)\n"
    "  --format F     text (default): the report; hydra, openmpi, slurm or cray: the best\n"
    "                 suggestion for that launcher (the report's check line goes to stderr);\n"
    "                 json: the current placement and every suggestion\n"
    "                 html: the same as a page to open in a browser\n"
    "  -o FILE        write to FILE instead of standard output\n"
    "  --top K        suggestions to report (default 5)\n"
    "  --hosts LIST   names of the next allocation's nodes, in place of the trace's, in order\n"
    "  --eager BYTES  eager/rendezvous threshold (default: the profile's, else 262144)\n"
    "  --exhaustive   replay every placement (default up to 12 ranks)\n"
    "  --local        local search only, even for small runs\n"
    "  --budget N     replays allowed to the local search (default 20000)\n"
    "  --placement F  also replay the placement of the Hydra machinefile F (lines NODE or NODE:N,\n"
    "                 ranks in order; node names as in the trace) and report it\n"
    "  --check F      compare where each rank of TRACE ran with the launcher file F that flowcut\n"
    "                 remap wrote (any format): one line per rank elsewhere, exit 1 if any\n"
    "  --help         print this help\n";

/* A positive whole number for option opt, or 0 after a usage message. */
static uint64_t positive(const char *s, const char *opt)
{
    uint64_t v;
    if (fc__cli_count(s, &v) < 0 || v == 0) {
        fc__cli_usage("%s wants a positive whole number", opt);
        return 0;
    }
    return v;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"platform", required_argument, NULL, 'p'}, {"model", required_argument, NULL, 'm'},
        {"nodes", required_argument, NULL, 'n'},    {"slots", required_argument, NULL, 's'},
        {"format", required_argument, NULL, 'f'},   {"output", required_argument, NULL, 'o'},
        {"top", required_argument, NULL, 't'},      {"hosts", required_argument, NULL, 'H'},
        {"eager", required_argument, NULL, 'e'},    {"exhaustive", no_argument, NULL, 'x'},
        {"local", no_argument, NULL, 'l'},          {"budget", required_argument, NULL, 'b'},
        {"placement", required_argument, NULL, 'P'}, {"platform-trace", required_argument, NULL, 'T'},
        {"check", required_argument, NULL, 'C'},     {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    fc__remap_run_opts o = {.format = "text", .top = 5, .exhaustive = -1, .opened = fc__cli_trace_warnings};
    uint64_t *count = NULL;
    const char *name = NULL, *check = NULL;
    int c, others = 0;

    fc__cli_init("remap", usage);
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        count = NULL;
        switch (c) {
        case 'p': o.platform = optarg; break;
        case 'm':
            if (fc__model_parse(optarg) < 0)
                return fc__cli_usage("unknown model '%s' (flowcut, fairshare, maxrate or linear)", optarg);
            o.model = optarg;
            break;
        case 'n': count = &o.nodes, name = "--nodes"; break;
        case 's': count = &o.slots, name = "--slots"; break;
        case 'f':
            if (strcmp(optarg, "text") != 0 && strcmp(optarg, "html") != 0 && fc__launcher_parse(optarg) < 0)
                return fc__cli_usage("unknown format '%s' (text, hydra, openmpi, slurm, cray, json or html)", optarg);
            o.format = optarg;
            break;
        case 'o': o.output = optarg; break;
        case 't': count = &o.top, name = "--top"; break;
        case 'H': o.hosts = optarg; break;
        case 'e': count = &o.eager, name = "--eager"; break;
        case 'x': o.exhaustive = 1; break;
        case 'l': o.exhaustive = 0; break;
        case 'b': count = &o.budget, name = "--budget"; break;
        case 'P': o.placement = optarg; break;
        case 'T': o.platform_trace = optarg; break;
        case 'C': check = optarg; break;
        case 'h': return fc__cli_help();
        default: return fc__cli_bad_option(argv, c);
        }
        if (count != NULL && (*count = positive(optarg, name)) == 0)
            return 2;
        others += c != 'C';
    }
    if (argc - optind != 1)
        return fc__cli_usage("%s", argc - optind < 1 ? "expects a TRACE" : "expects exactly one TRACE");
    if (check != NULL) {
        if (others > 0)
            return fc__cli_usage("--check takes no other option");
        uint32_t misplaced = 0;
        if (fc__remap_check(check, argv[optind], stdout, &misplaced) < 0)
            return fc__cli_failed();
        return misplaced ? 1 : 0;
    }
    if ((o.nodes == 0) != (o.slots == 0))
        return fc__cli_usage("--nodes and --slots go together");
    if (o.nodes > 4096 || o.slots > 4096)
        return fc__cli_usage("--nodes and --slots are limited to 4096");
    if (o.platform != NULL && o.platform_trace != NULL)
        return fc__cli_usage("--platform and --platform-trace are alternatives");
    if (o.top > 100)
        o.top = 100;
    o.trace = argv[optind];
    return fc__remap_run(&o) < 0 ? fc__cli_failed() : 0;
}
