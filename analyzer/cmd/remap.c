/* analyzer/cmd/remap.c: `flowcut remap`, which replays a traced run under other placements of
 * its ranks on nodes, reports the best few with what they gain, and writes the best one for a
 * launcher (Hydra, Open MPI, Slurm, Cray) or everything as JSON. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/reader.h>
#include "conflict/intervals.h"
#include "collective/calls.h"
#include "match/match.h"
#include "model/model.h"
#include "model/evaluate.h"
#include "remap/remap.h"
#include "analysis/analysis.h"

static const char usage[] =
    "usage: flowcut remap [--platform PROFILE] [--model M] [--nodes N --slots S]\n"
    "                     [--format text|hydra|openmpi|slurm|cray|json] [-o FILE] [--top K]\n"
    "                     [--hosts NAME,NAME,...] [--eager BYTES] [--exhaustive|--local]\n"
    "                     [--budget N] [--placement HOSTFILE] [--platform-trace T] TRACE\n"
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
    "  -o FILE        write to FILE instead of standard output\n"
    "  --top K        suggestions to report (default 5)\n"
    "  --hosts LIST   names of the next allocation's nodes, in place of the trace's, in order\n"
    "  --eager BYTES  eager/rendezvous threshold (default: the profile's, else 262144)\n"
    "  --exhaustive   replay every placement (default up to 12 ranks)\n"
    "  --local        local search only, even for small runs\n"
    "  --budget N     replays allowed to the local search (default 20000)\n"
    "  --placement F  also replay the placement of the Hydra machinefile F (lines NODE or NODE:N,\n"
    "                 ranks in order; node names as in the trace) and report it\n"
    "  --help         print this help\n";

static void die_usage(const char *fmt, const char *arg)
{
    fputs("flowcut remap: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (see flowcut remap --help)\n", stderr);
    exit(1);
}

static uint64_t parse_count(const char *s, const char *opt)
{
    char *end;
    errno = 0;
    unsigned long long v = s[0] >= '0' && s[0] <= '9' ? strtoull(s, &end, 10) : 0;
    if (s[0] < '0' || s[0] > '9' || errno || *end || v == 0)
        die_usage("%s wants a positive whole number", opt);
    return v;
}

/* Splits a comma-separated list; returns the count, names point into s. */
static size_t split_hosts(char *s, char ***out)
{
    size_t n = 1;
    for (char *p = s; *p; p++)
        n += *p == ',';
    char **v = calloc(n, sizeof *v);
    if (v == NULL)
        return 0;
    n = 0;
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ","))
        v[n++] = tok;
    *out = v;
    return n;
}

/* Conflicts under this many flow-seconds are left out of the text report (JSON has them all). */
#define SHOWN_FLOW_S 5e-4

static void conflict_text(FILE *f, const fc__remap_cand *c)
{
    static const char *kind[5] = {"none", "outgoing", "incoming", "mixed-in", "mixed-out"};
    int any = 0;
    for (int k = 1; k < 5; k++)
        for (int j = 2; j <= FC_REMAP_MAXK; j++)
            if (c->conflict_s[k][j] >= SHOWN_FLOW_S) {
                fprintf(f, "%s%s k=%d %.3f flow-s", any ? ", " : "", kind[k], j, c->conflict_s[k][j]);
                any = 1;
            }
    fputs(any ? "\n" : "none\n", f);
}

static void placement_text(FILE *f, const uint32_t *pl, uint32_t n, uint32_t nodes,
                           const char *const *names)
{
    int first = 1;
    for (uint32_t g = 0; g < nodes; g++) {
        int any = 0;
        for (uint32_t r = 0; r < n; r++)
            if (pl[r] == g) {
                if (!any)
                    fprintf(f, "%s%s{%u", first ? "" : " ", names[g], r);
                else
                    fprintf(f, ",%u", r);
                any = 1;
            }
        if (any) {
            fputs("}", f);
            first = 0;
        }
    }
}

/* Reads a Hydra machinefile ("node" or "node:n" per line, # comments) into the node of each rank,
 * cycling over the slots as Hydra does. Prints one line and returns NULL on a problem. */
static uint32_t *read_placement(const char *path, const fc__remap *rm)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    uint32_t *slots = NULL, *pl = NULL;
    size_t n = 0, cap = 0, lineno = 0;
    if (f == NULL) {
        fprintf(stderr, "flowcut remap: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *name = strtok(line, " \t\r\n");
        if (name == NULL)
            continue;
        char *colon = strchr(name, ':');
        unsigned long count = 1;
        if (colon) {
            char *end;
            *colon = '\0';
            count = strtoul(colon + 1, &end, 10);
            if (*end || count == 0 || count > 65536) {
                fprintf(stderr, "flowcut remap: %s: line %zu: bad slot count\n", path, lineno);
                goto fail;
            }
        }
        uint32_t g = 0;
        while (g < rm->nnames && strcmp(rm->node_names[g], name) != 0)
            g++;
        if (g == rm->nnames) {
            fprintf(stderr, "flowcut remap: %s: line %zu: node '%s' is not a node of the trace\n", path, lineno, name);
            goto fail;
        }
        while (count--) {
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                uint32_t *v = realloc(slots, cap * sizeof *v);
                if (v == NULL)
                    goto fail;
                slots = v;
            }
            slots[n++] = g;
        }
    }
    if (n == 0) {
        fprintf(stderr, "flowcut remap: %s: no node in the file\n", path);
        goto fail;
    }
    if ((pl = malloc((rm->nranks + 1) * sizeof *pl)) == NULL)
        goto fail;
    for (uint32_t r = 0; r < rm->nranks; r++)
        pl[r] = slots[r % n];
fail:
    fclose(f);
    free(slots);
    return pl;
}

static void check_line(FILE *f, const fc__remap *rm)
{
    fprintf(f, "check: replaying the observed placement predicts %.6f s, observed %.6f s (error %+.1f %%);"
               " communication %.6f s predicted, %.6f s observed\n",
            rm->current.time, rm->observed_s, rm->check_err_pct, rm->current.comm, rm->observed_comm);
}

static void report(FILE *f, const fc__replay *rp, const fc__remap *rm, const char *trace, const char *model,
                   const char *platform, const char *const *names)
{
    static const char *kind[5] = {"none", "outgoing", "incoming", "mixed-in", "mixed-out"};
    fprintf(f, "flowcut remap: %s: %u ranks on %u nodes x %u slots; model %s; platform %s\n", trace,
            rm->nranks, rm->nodes, rm->slots, model, platform);
    check_line(f, rm);
    fprintf(f, "replay: %zu messages paired, %llu collective calls expanded, %llu sends and receives without"
               " a partner (they complete at once)\n",
            rp->nmsgs, (unsigned long long)rp->colls, (unsigned long long)rp->unmatched);
    if (rm->exhaustive)
        fprintf(f, "search: exhaustive, every placement up to renaming of nodes replayed (%llu)\n",
                (unsigned long long)rm->evaluated);
    else
        fprintf(f, "search: local (swaps and moves from the %sMETIS partition), %llu replays%s\n",
                rm->current_fits ? "observed placement and from a " : "", (unsigned long long)rm->evaluated,
                rm->exhausted_budget ? ", stopped at the budget" : "");
    fprintf(f, "current: predicted %.6f s, communication %.6f s: ", rm->current.time, rm->current.comm);
    placement_text(f, rm->current.rank_node, rm->nranks, rm->nnames, (const char *const *)rm->node_names);
    fputs("\n  conflicts: ", f);
    conflict_text(f, &rm->current);
    if (rm->has_given) {
        fprintf(f, "given: predicted %.6f s, communication %.6f s, gain %+.1f %%, %u ranks moved: ", rm->given.time,
                rm->given.comm, rm->given.gain_pct, rm->given.moved);
        placement_text(f, rm->given.rank_node, rm->nranks, rm->nnames, (const char *const *)rm->node_names);
        fputs("\n  conflicts: ", f);
        conflict_text(f, &rm->given);
    }
    for (size_t i = 0; i < rm->ncands; i++) {
        const fc__remap_cand *c = &rm->cands[i];
        fprintf(f, "suggestion %zu: predicted %.6f s, communication %.6f s, gain %+.1f %%, %u ranks moved: ",
                i + 1, c->time, c->comm, c->gain_pct, c->moved);
        placement_text(f, c->rank_node, rm->nranks, rm->nodes, names);
        fputs("\n  conflicts: ", f);
        conflict_text(f, c);
        /* What the suggestion does to the current conflicts: those it removes (under 1 % of their
         * flow-seconds left) and those it at least halves. */
        fputs("  disappear: ", f);
        int any = 0;
        for (int k = 1; k < 5; k++)
            for (int j = 2; j <= FC_REMAP_MAXK; j++) {
                double was = rm->current.conflict_s[k][j], now = c->conflict_s[k][j];
                if (was >= SHOWN_FLOW_S && now < 0.01 * was) {
                    fprintf(f, "%s%s k=%d (%.3f flow-s)", any ? ", " : "", kind[k], j, was);
                    any = 1;
                }
            }
        fputs(any ? "\n" : "none\n", f);
        fputs("  shrink: ", f);
        any = 0;
        for (int k = 1; k < 5; k++)
            for (int j = 2; j <= FC_REMAP_MAXK; j++) {
                double was = rm->current.conflict_s[k][j], now = c->conflict_s[k][j];
                if (was >= SHOWN_FLOW_S && now >= 0.01 * was && now <= 0.5 * was) {
                    fprintf(f, "%s%s k=%d %.3f -> %.3f flow-s", any ? ", " : "", kind[k], j, was, now);
                    any = 1;
                }
            }
        fputs(any ? "\n" : "none\n", f);
    }
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
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *platform = NULL, *model = NULL, *format = "text", *output = NULL, *given = NULL, *ptrace = NULL;
    uint32_t *given_pl = NULL;
    char *hosts = NULL, **hostv = NULL, note[1024] = "";
    size_t nhosts = 0;
    uint64_t nodes = 0, slots = 0, top = 5, eager = 0, budget = 0;
    int exhaustive = -1, c, status = 1, fmt = -1, rc;
    fc_trace *t = NULL;
    fc_match *m = NULL;
    fc__intervals *iv = NULL;
    fc__profile *prof = NULL;
    fc__replay *rp = NULL;
    fc__remap *rm = NULL;
    FILE *out = stdout;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'p': platform = optarg; break;
        case 'm':
            if (fc__model_parse(optarg) < 0)
                die_usage("unknown model '%s' (flowcut, fairshare, maxrate or linear)", optarg);
            model = optarg;
            break;
        case 'n': nodes = parse_count(optarg, "--nodes"); break;
        case 's': slots = parse_count(optarg, "--slots"); break;
        case 'f':
            if (strcmp(optarg, "text") != 0 && (fmt = fc__launcher_parse(optarg)) < 0)
                die_usage("unknown format '%s' (text, hydra, openmpi, slurm, cray or json)", optarg);
            format = optarg;
            break;
        case 'o': output = optarg; break;
        case 't': top = parse_count(optarg, "--top"); break;
        case 'H': hosts = optarg; break;
        case 'e': eager = parse_count(optarg, "--eager"); break;
        case 'x': exhaustive = 1; break;
        case 'l': exhaustive = 0; break;
        case 'b': budget = parse_count(optarg, "--budget"); break;
        case 'P': given = optarg; break;
        case 'T': ptrace = optarg; break;
        case 'h': fputs(usage, stdout); return 0;
        default: die_usage("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        die_usage("%s", argc - optind < 1 ? "expects a TRACE" : "expects exactly one TRACE");
    if ((nodes == 0) != (slots == 0))
        die_usage("%s", "--nodes and --slots go together");
    if (nodes > 4096 || slots > 4096)
        die_usage("%s", "--nodes and --slots are limited to 4096");
    if (top > 100)
        top = 100;
    const char *path = argv[optind];
    if (platform != NULL && fc__profile_read(platform, &prof) < 0) {
        fprintf(stderr, "flowcut remap: %s\n", fc_errmsg());
        goto out;
    }
    if (eager == 0)
        eager = prof && prof->eager_threshold ? prof->eager_threshold : FC_MATCH_EAGER_DEFAULT;
    fc__analysis_init(); /* OTF2 input for fc_trace_open */
    if (fc_trace_open(path, &t) < 0 || fc__replay_build(t, &rp) < 0) {
        fprintf(stderr, "flowcut remap: %s\n", fc_errmsg());
        goto out;
    }
    if (platform != NULL && ptrace != NULL)
        die_usage("%s", "--platform and --platform-trace are alternatives");
    if (prof == NULL) {
        /* Self-calibration: the uncontended flows of the trace give latency and bandwidth. */
        fc_trace *ct = t;
        if (ptrace != NULL && fc_trace_open(ptrace, &ct) < 0) {
            fprintf(stderr, "flowcut remap: %s\n", fc_errmsg());
            goto out;
        }
        rc = fc__match_trace(ct, eager, &m);
        if (rc == 0) { /* the collectives' messages are flows to fit to as well */
            fc__colls *colls = NULL;
            rc = fc__colls_add(ct, m, &colls);
            fc__colls_free(colls);
        }
        if (rc == 0)
            rc = fc__intervals_build_lean(m->flows, m->ninter, &iv);
        if (rc == 0)
            rc = fc__selfcal(m, iv, &prof, note, sizeof note);
        if (ct != t)
            fc_trace_close(ct);
        if (rc < 0) {
            fprintf(stderr, "flowcut remap: %s: cannot fit a platform profile to the trace (%s)%s\n",
                    ptrace ? ptrace : path, fc_errmsg(), strstr(fc_errmsg(), "--platform") ? "" : "; give --platform");
            goto out;
        }
        if (ptrace != NULL) {
            char fitted[1200];
            snprintf(fitted, sizeof fitted, "%s (from %s)", note, ptrace);
            snprintf(note, sizeof note, "%.500s", fitted);
        }
    }
    /* A trace without intra-node messages (mapping B of the report's broadcast has none) cannot
     * say how fast a node moves data inside itself, and the profile would then take the network's
     * figures for it: a placement that brings partners together would gain nothing. Assume a
     * shared-memory copy instead: 1 us + 5 GB/s, far faster than any network here. */
    char assumed[96] = "";
    if (prof->nintra == 0) {
        if (fc__profile_add_segment(prof, 1, 0, UINT64_MAX, 1e-6, 1.0 / 5e9, 0) < 0) {
            fprintf(stderr, "flowcut remap: out of memory\n");
            goto out;
        }
        snprintf(assumed, sizeof assumed, "; intra-node assumed 1 us + 5 GB/s (no intra-node figures)");
    }
    /* The flow cuts of a profile fitted to a trace are mostly assumed, and those it does fit come
     * from flows whose bandwidth was itself fitted under contention: a placement with other
     * conflicts would be judged by extrapolated cuts. Fair share needs no cut, so it is the model
     * unless a calibrated profile brings measured cuts. */
    if (model == NULL)
        model = platform != NULL && fc__model_usable(prof, FC_MODEL_FLOWCUT) ? "flowcut" : "fairshare";
    if (!fc__model_usable(prof, (unsigned)fc__model_parse(model))) {
        fprintf(stderr, "flowcut remap: model %s: %s\n", model, fc_errmsg());
        goto out;
    }
    fc__remap_opts ro = {.replay = {.profile = prof, .model = (unsigned)fc__model_parse(model), .eager = eager},
                         .nodes = (uint32_t)nodes, .slots = (uint32_t)slots, .exhaustive = exhaustive,
                         .top = (size_t)top, .budget = budget};
    if (fc__remap_search(rp, &ro, &rm) < 0) {
        fprintf(stderr, "flowcut remap: %s: %s\n", path, fc_errmsg());
        goto out;
    }
    if (given != NULL) {
        if ((given_pl = read_placement(given, rm)) == NULL)
            goto out;
        if (fc__remap_given(rp, &ro, rm, given_pl) < 0) {
            fprintf(stderr, "flowcut remap: %s: %s\n", given, fc_errmsg());
            goto out;
        }
    }
    const char *const *names = (const char *const *)rm->node_names;
    if (hosts != NULL) {
        if ((nhosts = split_hosts(hosts, &hostv)) < rm->nodes) {
            fprintf(stderr, "flowcut remap: --hosts names %zu nodes, the placement needs %u\n", nhosts, rm->nodes);
            goto out;
        }
        names = (const char *const *)hostv;
    }
    if (output != NULL && (out = fopen(output, "w")) == NULL) {
        fprintf(stderr, "flowcut remap: %s: %s\n", output, strerror(errno));
        out = stdout;
        goto out;
    }
    char plat[600];
    snprintf(plat, sizeof plat, "%s%s", platform ? platform : note[0] ? note : "fitted to the trace", assumed);
    if (fmt < 0) {
        report(out, rp, rm, path, model, plat, names);
    } else {
        check_line(stderr, rm);
        if (fmt != FC_LAUNCHER_JSON && rm->ncands == 0) {
            fprintf(stderr, "flowcut remap: no placement fits %u nodes x %u slots\n", rm->nodes, rm->slots);
            goto out;
        }
        if (fc__launcher_write(out, (unsigned)fmt, rm, 0, names, path) < 0) {
            fprintf(stderr, "flowcut remap: cannot write the %s output\n", format);
            goto out;
        }
    }
    status = 0;
out:
    if (out != stdout && fclose(out) != 0 && status == 0) {
        fprintf(stderr, "flowcut remap: %s: %s\n", output, strerror(errno));
        status = 1;
    }
    free(hostv);
    free(given_pl);
    fc__remap_free(rm);
    fc__replay_free(rp);
    fc__intervals_free(iv);
    fc__match_free(m);
    fc__profile_free(prof);
    fc_trace_close(t);
    return status;
}
