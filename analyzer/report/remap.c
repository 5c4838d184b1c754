/* analyzer/report/remap.c: the text report of `flowcut remap`: the check of the replay against
 * the observed run, the search, and each placement with its predicted time and conflicts. */
#include <stdio.h>
#include "remap/remap.h"
#include "remap/replay.h"
#include "report/report.h"

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

void fc__report_remap_check(FILE *f, const struct fc__remap *rm)
{
    fprintf(f, "check: replaying the observed placement predicts %.6f s, observed %.6f s (error %+.1f %%);"
               " communication %.6f s predicted, %.6f s observed\n",
            rm->current.time, rm->observed_s, rm->check_err_pct, rm->current.comm, rm->observed_comm);
}

void fc__report_remap_text(FILE *f, const struct fc__replay *rp, const struct fc__remap *rm, const char *trace,
                           const char *model, const char *platform, const char *const *names)
{
    static const char *kind[5] = {"none", "outgoing", "incoming", "mixed-in", "mixed-out"};
    fprintf(f, "flowcut remap: %s: %u ranks on %u nodes x %u slots; model %s; platform %s\n", trace,
            rm->nranks, rm->nodes, rm->slots, model, platform);
    fc__report_remap_check(f, rm);
    fprintf(f, "replay: %zu messages paired, %llu collective calls expanded, %llu sends and receives without"
               " a partner (they complete at once)\n",
            rp->nmsgs, (unsigned long long)rp->colls, (unsigned long long)rp->unmatched);
    fprintf(f, "replay: %llu of %llu inter-node flows not classed network (flowcut analyze) keep their ranks' own"
               " part of their observed time; %llu flows paired with messages of the replay\n",
            (unsigned long long)rp->fixed_flows, (unsigned long long)rp->inter_flows,
            (unsigned long long)rp->mapped_flows);
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
    /* What the suggestions are worth against the replay's own error (fc__remap_judge). */
    if (rm->ncands > 0 && !rm->clearly_better)
        fprintf(f, "judgement: no placement is clearly better: the best predicted gain, %+.1f %%, is within the"
                   " replay's own error (%.1f %%)\n",
                rm->cands[0].gain_pct, rm->uncertainty_pct);
    else if (rm->ncands > 0)
        fprintf(f, "judgement: suggestion 1 gains %+.1f %% +- %.1f %% (the replay's own error)\n",
                rm->cands[0].gain_pct, rm->uncertainty_pct);
    if (rm->equivalent > 1)
        fprintf(f, "judgement: suggestions 1 to %zu are equivalent (predicted within %.1f %% of the best); "
                   "suggestion %zu moves fewest ranks (%u)\n",
                rm->equivalent, rm->uncertainty_pct, rm->fewest + 1, rm->cands[rm->fewest].moved);
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
