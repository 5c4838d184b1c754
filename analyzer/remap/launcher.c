/* analyzer/remap/launcher.c: writes a placement found by `flowcut remap` in the forms launchers take:
 * an MPICH Hydra machinefile with the rank order, an Open MPI rankfile, a Slurm host file for
 * --distribution=arbitrary, a Cray MPICH_RANK_ORDER file, and the JSON summary (remap.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "remap/remap.h"

int fc__launcher_parse(const char *name)
{
#define FC__X(n, num, text)                                                                        \
    if (strcmp(name, text) == 0)                                                                   \
        return num;
    FC_LAUNCHER_FORMATS(FC__X)
#undef FC__X
    return -1;
}

/* The nodes a placement uses, in order of their lowest rank, and the ranks in slot order: the
 * ranks of the first node ascending, then the second node's, and so on. Launchers that fill nodes
 * one after the other (Hydra with node:n lines, Cray) need this order. order gets n ranks, nodes
 * the used nodes (*nused of them), per[] each used node's rank count. */
static int slot_order(const uint32_t *pl, uint32_t n, uint32_t nodes, uint32_t *order, uint32_t *used,
                      uint32_t *per, uint32_t *nused)
{
    uint32_t *seen = calloc(nodes ? nodes : 1, sizeof *seen);
    if (seen == NULL)
        return FC_ENOMEM;
    *nused = 0;
    for (uint32_t r = 0; r < n; r++)
        if (pl[r] < nodes && !seen[pl[r]]) {
            seen[pl[r]] = 1;
            used[*nused] = pl[r];
            per[(*nused)++] = 0;
        }
    uint32_t k = 0;
    for (uint32_t u = 0; u < *nused; u++)
        for (uint32_t r = 0; r < n; r++)
            if (pl[r] == used[u]) {
                order[k++] = r;
                per[u]++;
            }
    free(seen);
    return 0;
}

static void json_placement(FILE *f, const uint32_t *pl, uint32_t n, const char *const *names)
{
    fputs("[", f);
    for (uint32_t r = 0; r < n; r++) {
        fputs(r ? ", " : "", f);
        fc__json_str(f, names[pl[r]]);
    }
    fputs("]", f);
}

static void json_conflicts(FILE *f, const fc__remap_cand *c)
{
    static const char *kind[5] = {"none", "outgoing", "incoming", "mixed-in", "mixed-out"};
    int first = 1;
    fputs("[", f);
    for (int k = 1; k < 5; k++)
        for (int j = 2; j <= FC_REMAP_MAXK; j++)
            if (c->conflict_s[k][j] > 0) {
                fprintf(f, "%s{\"kind\": \"%s\", \"k\": %d, \"flow_s\": %.6f}", first ? "" : ", ",
                        kind[k], j, c->conflict_s[k][j]);
                first = 0;
            }
    fputs("]", f);
}

static int write_json(FILE *f, const fc__remap *rm, const char *const *names, const char *trace)
{
    fputs("{\"flowcut_remap\": 1, \"trace\": ", f);
    fc__json_str(f, trace);
    fprintf(f, ", \"ranks\": %u, \"nodes\": %u, \"slots\": %u, \"exhaustive\": %s, \"evaluated\": %llu,\n",
            rm->nranks, rm->nodes, rm->slots, rm->exhaustive ? "true" : "false",
            (unsigned long long)rm->evaluated);
    fprintf(f, " \"judgement\": {\"uncertainty_pct\": %.2f, \"clearly_better\": %s, \"equivalent\": %zu, "
               "\"fewest_moves\": %zu},\n",
            rm->uncertainty_pct, rm->clearly_better ? "true" : "false", rm->equivalent,
            rm->ncands ? rm->fewest + 1 : 0);
    fputs(" \"current\": {\"rank_to_node\": ", f);
    json_placement(f, rm->current.rank_node, rm->nranks, (const char *const *)rm->node_names);
    fprintf(f, ", \"predicted_s\": %.6f, \"observed_s\": %.6f, \"check_error_pct\": %.2f, "
               "\"predicted_comm_s\": %.6f, \"observed_comm_s\": %.6f, \"conflicts\": ",
            rm->current.time, rm->observed_s, rm->check_err_pct, rm->current.comm, rm->observed_comm);
    json_conflicts(f, &rm->current);
    if (rm->has_given) {
        fputs("},\n \"given\": {\"rank_to_node\": ", f);
        json_placement(f, rm->given.rank_node, rm->nranks, (const char *const *)rm->node_names);
        fprintf(f, ", \"predicted_s\": %.6f, \"predicted_comm_s\": %.6f, \"gain_pct\": %.2f, \"moved\": %u, "
                   "\"conflicts\": ",
                rm->given.time, rm->given.comm, rm->given.gain_pct, rm->given.moved);
        json_conflicts(f, &rm->given);
    }
    fputs("},\n \"suggestions\": [", f);
    for (size_t i = 0; i < rm->ncands; i++) {
        const fc__remap_cand *c = &rm->cands[i];
        fputs(i ? ",\n  " : "\n  ", f);
        fputs("{\"rank_to_node\": ", f);
        json_placement(f, c->rank_node, rm->nranks, names);
        fprintf(f, ", \"predicted_s\": %.6f, \"predicted_comm_s\": %.6f, \"gain_pct\": %.2f, "
                   "\"moved\": %u, \"conflicts\": ",
                c->time, c->comm, c->gain_pct, c->moved);
        json_conflicts(f, c);
        fputs("}", f);
    }
    fputs("]}\n", f);
    return 0;
}

int fc__launcher_write(FILE *f, unsigned format, const fc__remap *rm, size_t which,
                       const char *const *names, const char *trace)
{
    uint32_t n = rm->nranks, nused = 0;
    uint32_t *order = malloc((n + 1) * sizeof *order), *used = malloc((rm->nodes + 1) * sizeof *used);
    uint32_t *per = malloc((rm->nodes + 1) * sizeof *per);
    int rc = FC_ENOMEM;
    if (!order || !used || !per)
        goto out;
    if (format == FC_LAUNCHER_JSON) {
        rc = write_json(f, rm, names, trace);
        goto done;
    }
    rc = FC_EINVAL;
    if (which >= rm->ncands)
        goto out;
    const fc__remap_cand *c = &rm->cands[which];
    if ((rc = slot_order(c->rank_node, n, rm->nodes, order, used, per, &nused)) < 0)
        goto out;
    char head[512];
    snprintf(head, sizeof head, "flowcut remap: suggestion %zu for %s: predicted %.6f s (%+.1f %%), %u ranks moved",
             which + 1, trace, c->time, -c->gain_pct, c->moved);
    switch (format) {
    case FC_LAUNCHER_HYDRA:
        /* Hydra counts non-adjacent lines of one host as separate nodes (and then keeps ranks of one
         * host off its shared memory), so each node is listed once with its rank count, and Hydra
         * fills the nodes in blocks. The rank order says which traced rank belongs in each slot;
         * flowcut's tracer renumbers the ranks by it at MPI_Init (FLOWCUT_RANK_ORDER). */
        fprintf(f, "# %s\n", head);
        fprintf(f,
                "# MPICH Hydra machinefile: each node once as node:n, filled in this order. Hydra places ranks\n"
                "# in blocks, so run the unmodified program with the ranks renumbered by the rank order:\n"
                "#   flowcut run --rank-order FILE -- mpiexec -f FILE -n %u PROGRAM\n"
                "# (FLOWCUT_TRACE=0 in the environment: renumbered, not traced). The rank order gives, slot\n"
                "# by slot, the rank that runs there; the rank hosts give the node of each rank.\n",
                n);
        fputs("# rank-order:", f);
        for (uint32_t i = 0; i < n; i++)
            fprintf(f, "%s%u", i ? "," : " ", order[i]);
        fputs("\n# rank-hosts:", f);
        for (uint32_t r = 0; r < n; r++)
            fprintf(f, "%s%s", r ? "," : " ", names[c->rank_node[r]]);
        fputs("\n", f);
        for (uint32_t u = 0; u < nused; u++)
            fprintf(f, "%s:%u\n", names[used[u]], per[u]);
        break;
    case FC_LAUNCHER_OPENMPI:
        fprintf(f, "# %s\n# Open MPI rankfile: mpirun --rankfile FILE -n %u PROGRAM\n", head, n);
        for (uint32_t r = 0; r < n; r++) {
            uint32_t slot = 0;
            for (uint32_t q = 0; q < r; q++)
                slot += c->rank_node[q] == c->rank_node[r];
            fprintf(f, "rank %u=%s slot=%u\n", r, names[c->rank_node[r]], slot);
        }
        break;
    case FC_LAUNCHER_SLURM:
        /* Slurm reads SLURM_HOSTFILE as one host per rank, in rank order; no comments, since not
         * every Slurm version skips them. */
        for (uint32_t r = 0; r < n; r++)
            fprintf(f, "%s\n", names[c->rank_node[r]]);
        break;
    case FC_LAUNCHER_CRAY: {
        /* Cray MPICH places the listed ranks on the job's nodes in order, the same number on each
         * (the launcher's ranks per node) but the last: a placement is expressible when at most one
         * node holds fewer ranks than the fullest, and that node goes last. */
        uint32_t ppn = 0, full_u = 0, short_u = UINT32_MAX, nshort = 0;
        for (uint32_t u = 0; u < nused; u++)
            if (per[u] > ppn) {
                ppn = per[u];
                full_u = u;
            }
        for (uint32_t u = 0; u < nused; u++)
            if (per[u] < ppn) {
                nshort++;
                short_u = u;
            }
        if (nshort > 1) {
            rc = fc__err(FC_EINVAL, "cray: the suggestion puts %u ranks on %s but %u on %s and fewer than %u on "
                                    "%u nodes in all, where Cray MPICH gives every node but the last the same number "
                                    "of ranks; use --format slurm or hydra",
                         ppn, names[used[full_u]], per[short_u], names[used[short_u]], ppn, nshort);
            goto out;
        }
        if (nshort == 1 && short_u != nused - 1) {
            /* Move the short node's ranks, and the node, to the end. */
            uint32_t start = 0, m = per[short_u], node = used[short_u];
            for (uint32_t u = 0; u < short_u; u++)
                start += per[u];
            uint32_t *tmp = malloc((m + 1) * sizeof *tmp);
            if (tmp == NULL) {
                rc = FC_ENOMEM;
                goto out;
            }
            memcpy(tmp, order + start, m * sizeof *tmp);
            memmove(order + start, order + start + m, (n - start - m) * sizeof *order);
            memcpy(order + n - m, tmp, m * sizeof *tmp);
            free(tmp);
            memmove(used + short_u, used + short_u + 1, (nused - short_u - 1) * sizeof *used);
            memmove(per + short_u, per + short_u + 1, (nused - short_u - 1) * sizeof *per);
            used[nused - 1] = node;
            per[nused - 1] = m;
        }
        fprintf(f, "# %s\n# Cray MPICH: MPICH_RANK_REORDER_METHOD=3 with this file as MPICH_RANK_ORDER,\n"
                   "# %u ranks per node (nodes in this order: ",
                head, ppn);
        for (uint32_t u = 0; u < nused; u++)
            fprintf(f, "%s%s:%u", u ? ", " : "", names[used[u]], per[u]);
        fputs(")\n", f);
        for (uint32_t i = 0; i < n; i++)
            fprintf(f, "%s%u", i ? "," : "", order[i]);
        fputs("\n", f);
        break;
    }
    default:
        rc = FC_EINVAL;
        goto out;
    }
done:
    rc = ferror(f) ? FC_EIO : 0;
out:
    free(order);
    free(used);
    free(per);
    return rc;
}
