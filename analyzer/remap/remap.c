/* analyzer/remap/remap.c: searches placements of ranks on nodes by replaying the traced run under each
 * (remap.h): exhaustively for small worlds, else by swaps from the observed placement and from a
 * METIS partition of the traffic graph; keeps the best few with their conflicts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <metis.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "conflict/intervals.h"
#include "remap/remap.h"

/* Placements with more candidates than this are not enumerated even when small. */
#define EXHAUSTIVE_CAP 200000

typedef struct search {
    const fc__replay *rp;
    const fc__remap_opts *o;
    fc__remap *rm;
    uint32_t n, nodes, slots;
    uint64_t budget;
    size_t top;
    uint32_t *canon;   /* scratch */
    uint32_t *count;   /* ranks per node, scratch of the enumeration */
    uint32_t *tmp;     /* scratch */
} search;

/* Renames nodes in order of first appearance by rank, so that placements equal up to renaming
 * compare equal. */
static void canonical(const uint32_t *in, uint32_t n, uint32_t nodes, uint32_t *out, uint32_t *map)
{
    uint32_t next = 0;
    for (uint32_t i = 0; i < nodes; i++)
        map[i] = UINT32_MAX;
    for (uint32_t r = 0; r < n; r++) {
        if (map[in[r]] == UINT32_MAX)
            map[in[r]] = next++;
        out[r] = map[in[r]];
    }
}

/* Ordering of candidates: predicted time, then communication time, then fewer ranks moved (on
 * equal predictions, the placement that disturbs the run least). */
static int better(const fc__remap_cand *a, const fc__remap_cand *b)
{
    double tol = 1e-9 * (fabs(b->time) + 1e-9);
    if (a->time < b->time - tol)
        return 1;
    if (a->time > b->time + tol)
        return 0;
    tol = 1e-9 * (fabs(b->comm) + 1e-9);
    if (a->comm < b->comm - tol)
        return 1;
    if (a->comm > b->comm + tol)
        return 0;
    return a->moved < b->moved;
}

static int relabel(search *s, uint32_t *pl);

/* Ranks that a placement moves away from their observed node, with the best renaming of nodes;
 * 0 (not computed) above RELABEL_EACH_MAX nodes, where the renaming costs too much per replay. */
#define RELABEL_EACH_MAX 10
static int moved_of(search *s, const uint32_t *canon, uint32_t *moved)
{
    *moved = 0;
    if (s->nodes > RELABEL_EACH_MAX)
        return 0;
    memcpy(s->tmp, canon, s->n * sizeof *s->tmp);
    int rc = relabel(s, s->tmp);
    for (uint32_t r = 0; rc == 0 && r < s->n; r++)
        *moved += s->tmp[r] != s->rp->rank_node[r];
    return rc;
}

/* Replays placement pl and offers it to the best list. Stores the candidate's figures in *c. */
static int evaluate(search *s, const uint32_t *pl, fc__remap_cand *c)
{
    fc__replay_result res;
    fc__replay_opts ro = s->o->replay;
    ro.want_flows = 0;
    int rc = fc__replay_run(s->rp, pl, s->nodes, &ro, &res);
    if (rc < 0)
        return rc;
    s->rm->evaluated++;
    memset(c, 0, sizeof *c);
    c->time = res.time;
    c->comm = res.comm;
    fc__replay_result_clear(&res);

    /* Insert into the best list (kept sorted, canonical placements, no duplicates). */
    fc__remap *rm = s->rm;
    uint32_t *map = s->count;
    canonical(pl, s->n, s->nodes, s->canon, map);
    if ((rc = moved_of(s, s->canon, &c->moved)) < 0)
        return rc;
    for (size_t i = 0; i < rm->ncands; i++)
        if (memcmp(rm->cands[i].rank_node, s->canon, s->n * sizeof *s->canon) == 0)
            return 0;
    if (rm->ncands == s->top && !better(c, &rm->cands[rm->ncands - 1]))
        return 0;
    size_t at = rm->ncands < s->top ? rm->ncands++ : rm->ncands - 1;
    uint32_t *keep = rm->cands[at].rank_node;
    while (at > 0 && better(c, &rm->cands[at - 1])) {
        rm->cands[at] = rm->cands[at - 1];
        at--;
    }
    rm->cands[at] = *c;
    rm->cands[at].rank_node = keep;
    memcpy(keep, s->canon, s->n * sizeof *keep);
    return 0;
}

/* ---- exhaustive enumeration --------------------------------------------------------------------- */

/* Assigns rank r onward: to each open node with room, or to the next unopened node. With eval 0
 * it only counts, up to *left. */
static int enumerate(search *s, uint32_t *pl, uint32_t *cnt, uint32_t r, uint32_t open, int eval,
                     uint64_t *left)
{
    if (r == s->n) {
        fc__remap_cand c;
        if (*left == 0)
            return 0;
        (*left)--;
        return eval ? evaluate(s, pl, &c) : 0;
    }
    for (uint32_t g = 0; g <= open && g < s->nodes; g++) {
        if (cnt[g] >= s->slots)
            continue;
        pl[r] = g;
        cnt[g]++;
        int rc = enumerate(s, pl, cnt, r + 1, g == open ? open + 1 : open, eval, left);
        cnt[g]--;
        if (rc < 0 || *left == 0)
            return rc;
    }
    return 0;
}

uint64_t fc__remap_count(uint32_t n, uint32_t nodes, uint32_t slots, uint64_t cap)
{
    search s = {.n = n, .nodes = nodes, .slots = slots};
    uint32_t *pl = calloc(n + 1, sizeof *pl), *cnt = calloc(nodes + 1, sizeof *cnt);
    uint64_t left = cap;
    if (pl && cnt && (uint64_t)nodes * slots >= n)
        enumerate(&s, pl, cnt, 0, 0, 0, &left);
    else
        left = cap;
    free(pl);
    free(cnt);
    return cap - left;
}

/* ---- local search ------------------------------------------------------------------------------- */

/* Swaps and moves from pl (changed in place to the local optimum) until no replay improves. */
static int descend(search *s, uint32_t *pl)
{
    fc__remap_cand cur, c;
    uint32_t *cnt = calloc(s->nodes, sizeof *cnt);
    int rc = cnt ? evaluate(s, pl, &cur) : FC_ENOMEM;
    for (uint32_t r = 0; cnt && r < s->n; r++)
        cnt[pl[r]]++;
    for (int improved = 1; rc == 0 && improved;) {
        improved = 0;
        for (uint32_t a = 0; rc == 0 && a < s->n; a++) {
            for (uint32_t b = a + 1; rc == 0 && b < s->n; b++) {
                if (pl[a] == pl[b])
                    continue;
                if (s->rm->evaluated >= s->budget) {
                    s->rm->exhausted_budget = 1;
                    goto out;
                }
                uint32_t t = pl[a];
                pl[a] = pl[b];
                pl[b] = t;
                if ((rc = evaluate(s, pl, &c)) == 0 && better(&c, &cur)) {
                    cur = c;
                    improved = 1;
                } else {
                    pl[b] = pl[a];
                    pl[a] = t;
                }
            }
            for (uint32_t g = 0; rc == 0 && g < s->nodes; g++) {
                if (g == pl[a] || cnt[g] >= s->slots)
                    continue;
                if (s->rm->evaluated >= s->budget) {
                    s->rm->exhausted_budget = 1;
                    goto out;
                }
                uint32_t old = pl[a];
                pl[a] = g;
                if ((rc = evaluate(s, pl, &c)) == 0 && better(&c, &cur)) {
                    cur = c;
                    cnt[old]--;
                    cnt[g]++;
                    improved = 1;
                } else {
                    pl[a] = old;
                }
            }
        }
    }
out:
    free(cnt);
    return rc;
}

/* A METIS k-way partition of the traffic graph (edge weight: KiB exchanged both ways), repaired so
 * that no node holds more than its slots. */
static int metis_start(search *s, uint32_t *pl)
{
    uint32_t n = s->n, k = s->nodes;
    double *w = calloc((size_t)n * n, sizeof *w);
    idx_t *xadj = calloc(n + 1, sizeof *xadj), *adj = calloc((size_t)n * n, sizeof *adj);
    idx_t *wgt = calloc((size_t)n * n, sizeof *wgt), *part = calloc(n, sizeof *part);
    uint32_t *cnt = calloc(k, sizeof *cnt);
    int rc = FC_ENOMEM;
    if (!w || !xadj || !adj || !wgt || !part || !cnt)
        goto out;
    double maxw = 1;
    for (size_t i = 0; i < s->rp->nmsgs; i++) {
        const fc__rmsg *m = &s->rp->msgs[i];
        if (m->src == m->dst)
            continue;
        w[(size_t)m->src * n + m->dst] += (double)m->bytes + 1;
        w[(size_t)m->dst * n + m->src] += (double)m->bytes + 1;
    }
    for (size_t i = 0; i < (size_t)n * n; i++)
        if (w[i] > maxw)
            maxw = w[i];
    idx_t ne = 0;
    for (uint32_t a = 0; a < n; a++) {
        for (uint32_t b = 0; b < n; b++)
            if (a != b && w[(size_t)a * n + b] > 0) {
                adj[ne] = (idx_t)b;
                /* Scaled so that the sum of all weights stays far below idx_t's range. */
                wgt[ne] = (idx_t)(1 + w[(size_t)a * n + b] / maxw * (1 << 20) / n);
                ne++;
            }
        xadj[a + 1] = ne;
    }
    if (k <= 1 || ne == 0) {
        for (uint32_t r = 0; r < n; r++)
            part[r] = (idx_t)(r / s->slots);
    } else {
        idx_t nv = (idx_t)n, ncon = 1, np = (idx_t)k, obj;
        idx_t opts[METIS_NOPTIONS];
        real_t ub = 1.001f;
        METIS_SetDefaultOptions(opts);
        opts[METIS_OPTION_SEED] = 1;
        if (METIS_PartGraphKway(&nv, &ncon, xadj, adj, NULL, NULL, wgt, &np, NULL, &ub, opts, &obj,
                                part) != METIS_OK)
            for (uint32_t r = 0; r < n; r++)
                part[r] = (idx_t)(r / s->slots);
    }
    for (uint32_t r = 0; r < n; r++) {
        pl[r] = (uint32_t)part[r] < k ? (uint32_t)part[r] : 0;
        cnt[pl[r]]++;
    }
    /* Repair: from an overfull node, move the rank least tied to it to the free node it is most
     * tied to. */
    for (uint32_t g = 0; g < k; g++)
        while (cnt[g] > s->slots) {
            uint32_t best = UINT32_MAX, to = UINT32_MAX;
            double least = INFINITY, most = -1;
            for (uint32_t r = 0; r < n; r++) {
                if (pl[r] != g)
                    continue;
                double tie = 0;
                for (uint32_t q = 0; q < n; q++)
                    tie += pl[q] == g ? w[(size_t)r * n + q] : 0;
                if (tie < least)
                    least = tie, best = r;
            }
            for (uint32_t h = 0; h < k; h++) {
                if (cnt[h] >= s->slots)
                    continue;
                double tie = 0;
                for (uint32_t q = 0; q < n; q++)
                    tie += pl[q] == h ? w[(size_t)best * n + q] : 0;
                if (tie > most)
                    most = tie, to = h;
            }
            pl[best] = to;
            cnt[g]--;
            cnt[to]++;
        }
    rc = 0;
out:
    free(w);
    free(xadj);
    free(adj);
    free(wgt);
    free(part);
    free(cnt);
    return rc;
}

/* ---- reporting ---------------------------------------------------------------------------------- */

/* Renames the nodes of a canonical placement so that the fewest ranks leave their observed node:
 * an exact assignment (dynamic programming over node subsets) up to 16 nodes, greedy above. */
static int relabel(search *s, uint32_t *pl)
{
    uint32_t n = s->n, k = s->nodes, groups = 0;
    const uint32_t *obs = s->rp->rank_node;
    for (uint32_t r = 0; r < n; r++)
        if (pl[r] + 1 > groups)
            groups = pl[r] + 1;
    uint32_t *ov = calloc((size_t)groups * k, sizeof *ov), *to = malloc(groups * sizeof *to);
    if (!ov || !to) {
        free(ov);
        free(to);
        return FC_ENOMEM;
    }
    for (uint32_t r = 0; r < n; r++)
        if (obs[r] < k)
            ov[(size_t)pl[r] * k + obs[r]]++;
    if (k <= 16) {
        size_t m = (size_t)1 << k;
        int32_t *dp = malloc(m * sizeof *dp);
        uint8_t *last = malloc(m);
        if (!dp || !last) {
            free(dp);
            free(last);
            free(ov);
            free(to);
            return FC_ENOMEM;
        }
        for (size_t x = 0; x < m; x++)
            dp[x] = -1;
        dp[0] = 0;
        size_t bestmask = 0;
        for (size_t x = 0; x < m; x++) {
            if (dp[x] < 0)
                continue;
            uint32_t g = (uint32_t)__builtin_popcountll(x);
            if (g == groups) {
                if (dp[x] > dp[bestmask] || __builtin_popcountll(bestmask) != groups)
                    bestmask = x;
                continue;
            }
            for (uint32_t h = 0; h < k; h++)
                if (!(x & ((size_t)1 << h))) {
                    size_t y = x | ((size_t)1 << h);
                    int32_t v = dp[x] + (int32_t)ov[(size_t)g * k + h];
                    if (v > dp[y]) {
                        dp[y] = v;
                        last[y] = (uint8_t)h;
                    }
                }
        }
        for (size_t x = bestmask; x; x &= ~((size_t)1 << last[x]))
            to[__builtin_popcountll(x) - 1] = last[x];
        free(dp);
        free(last);
    } else {
        uint8_t *taken = calloc(k, 1);
        for (uint32_t g = 0; taken && g < groups; g++) {
            uint32_t best = UINT32_MAX;
            for (uint32_t h = 0; h < k; h++)
                if (!taken[h] && (best == UINT32_MAX || ov[(size_t)g * k + h] > ov[(size_t)g * k + best]))
                    best = h;
            to[g] = best;
            taken[best] = 1;
        }
        free(taken);
    }
    for (uint32_t r = 0; r < n; r++)
        pl[r] = to[pl[r]];
    free(ov);
    free(to);
    return 0;
}

/* Replays a placement again with its flows and sums its conflicts. */
static int conflicts(search *s, const uint32_t *pl, uint32_t nodes, fc__remap_cand *c)
{
    fc__replay_result res;
    fc__replay_opts ro = s->o->replay;
    fc__intervals *iv = NULL;
    ro.want_flows = 1;
    int rc = fc__replay_run(s->rp, pl, nodes, &ro, &res);
    if (rc < 0)
        return rc;
    if ((rc = fc__intervals_build_lean(res.flows, res.nflows, &iv)) == 0) {
        uint32_t maxk = fc__intervals_max_k(iv);
        for (uint32_t kind = 1; kind < 5; kind++)
            for (uint32_t k = 2; k <= maxk; k++)
                c->conflict_s[kind][k < FC_REMAP_MAXK ? k : FC_REMAP_MAXK] += fc__intervals_time(iv, kind, k);
    }
    fc__intervals_free(iv);
    fc__replay_result_clear(&res);
    return rc;
}

int fc__remap_search(const fc__replay *rp, const fc__remap_opts *o, fc__remap **out)
{
    search s = {.rp = rp, .o = o};
    fc__remap *rm = calloc(1, sizeof *rm);
    uint32_t *pl = NULL, *cnt = NULL;
    int rc = FC_ENOMEM;
    *out = NULL;
    if (rm == NULL)
        return FC_ENOMEM;
    s.rm = rm;
    s.n = rm->nranks = rp->nranks;
    s.nodes = rm->nodes = o->nodes ? o->nodes : rp->nnodes;
    s.slots = rm->slots = o->slots ? o->slots : rp->max_slots;
    s.top = o->top ? o->top : 1;
    s.budget = o->budget ? o->budget : 20000;
    if ((uint64_t)s.nodes * s.slots < s.n) {
        rc = fc__err(FC_EINVAL, "%u nodes of %u slots cannot hold %u ranks", s.nodes, s.slots, s.n);
        goto out;
    }
    uint32_t all = s.nodes > rp->nnodes ? s.nodes : rp->nnodes;
    rm->node_names = calloc(all, sizeof *rm->node_names);
    rm->nnames = rm->node_names ? all : 0;
    rm->cands = calloc(s.top, sizeof *rm->cands);
    rm->cand_cap = rm->cands ? s.top : 0;
    s.canon = malloc((s.n + 1) * sizeof *s.canon);
    s.tmp = malloc((s.n + 1) * sizeof *s.tmp);
    s.count = malloc((all + 1) * sizeof *s.count);
    pl = calloc(s.n + 1, sizeof *pl);
    cnt = calloc(all + 1, sizeof *cnt);
    rm->current.rank_node = malloc((s.n + 1) * sizeof *pl);
    if (!rm->node_names || !rm->cands || !s.canon || !s.tmp || !s.count || !pl || !cnt || !rm->current.rank_node)
        goto out;
    for (size_t i = 0; i < s.top; i++)
        if ((rm->cands[i].rank_node = malloc((s.n + 1) * sizeof *pl)) == NULL)
            goto out;
    for (uint32_t g = 0; g < all; g++) {
        char buf[32];
        snprintf(buf, sizeof buf, "spare-%u", g - rp->nnodes + 1);
        if ((rm->node_names[g] = strdup(g < rp->nnodes ? rp->nodes[g] : buf)) == NULL)
            goto out;
    }

    /* The first check: the observed placement replayed against the observed run. */
    fc__replay_result res;
    fc__replay_opts ro = o->replay;
    ro.want_flows = 0;
    if ((rc = fc__replay_run(rp, rp->rank_node, all, &ro, &res)) < 0)
        goto out;
    memcpy(rm->current.rank_node, rp->rank_node, s.n * sizeof *pl);
    rm->current.time = res.time;
    rm->current.comm = res.comm;
    fc__replay_result_clear(&res);
    rm->observed_s = rp->obs_time;
    for (uint32_t r = 0; r < s.n; r++) {
        double c = rp->prog[r].obs_end - rp->prog[r].start - rp->prog[r].obs_compute;
        if (c > rm->observed_comm)
            rm->observed_comm = c;
    }
    rm->check_err_pct = rp->obs_time > 0 ? 100 * (rm->current.time - rp->obs_time) / rp->obs_time : 0;
    if ((rc = conflicts(&s, rp->rank_node, all, &rm->current)) < 0)
        goto out;
    rm->current_fits = 1;
    for (uint32_t r = 0; r < s.n; r++)
        if (rp->rank_node[r] >= s.nodes || ++cnt[rp->rank_node[r]] > s.slots)
            rm->current_fits = 0;

    int ex = o->exhaustive;
    if (ex < 0)
        ex = s.n <= FC_REMAP_EXHAUSTIVE_MAX &&
             fc__remap_count(s.n, s.nodes, s.slots, EXHAUSTIVE_CAP + 1) <= EXHAUSTIVE_CAP;
    rm->exhaustive = ex;
    if (ex) {
        uint64_t left = UINT64_MAX;
        memset(cnt, 0, (all + 1) * sizeof *cnt);
        rc = enumerate(&s, pl, cnt, 0, 0, 1, &left);
    } else {
        if (rm->current_fits) {
            memcpy(pl, rp->rank_node, s.n * sizeof *pl);
            rc = descend(&s, pl);
        }
        if (rc == 0 && (rc = metis_start(&s, pl)) == 0)
            rc = descend(&s, pl);
    }
    if (rc < 0)
        goto out;
    for (size_t i = 0; i < rm->ncands; i++) {
        fc__remap_cand *c = &rm->cands[i];
        if ((rc = relabel(&s, c->rank_node)) < 0 || (rc = conflicts(&s, c->rank_node, s.nodes, c)) < 0)
            goto out;
        c->gain_pct = rm->current.time > 0 ? 100 * (rm->current.time - c->time) / rm->current.time : 0;
        c->moved = 0;
        for (uint32_t r = 0; r < s.n; r++)
            c->moved += c->rank_node[r] != rp->rank_node[r];
    }
    fc__remap_judge(rm);
    *out = rm;
    rm = NULL;
    rc = 0;
out:
    free(pl);
    free(cnt);
    free(s.canon);
    free(s.tmp);
    free(s.count);
    fc__remap_free(rm);
    return rc;
}

int fc__remap_given(const fc__replay *rp, const fc__remap_opts *o, fc__remap *rm, const uint32_t *rank_node)
{
    search s = {.rp = rp, .o = o, .rm = rm, .n = rp->nranks, .nodes = rm->nnames, .slots = rm->slots};
    fc__replay_result res;
    fc__replay_opts ro = o->replay;
    fc__remap_cand *c = &rm->given;
    free(c->rank_node);
    memset(c, 0, sizeof *c);
    rm->has_given = 0;
    if ((c->rank_node = malloc((s.n + 1) * sizeof *c->rank_node)) == NULL)
        return FC_ENOMEM;
    memcpy(c->rank_node, rank_node, s.n * sizeof *rank_node);
    ro.want_flows = 0;
    int rc = fc__replay_run(rp, rank_node, rm->nnames, &ro, &res);
    if (rc < 0)
        return rc;
    c->time = res.time;
    c->comm = res.comm;
    fc__replay_result_clear(&res);
    if ((rc = conflicts(&s, rank_node, rm->nnames, c)) < 0)
        return rc;
    c->gain_pct = rm->current.time > 0 ? 100 * (rm->current.time - c->time) / rm->current.time : 0;
    for (uint32_t r = 0; r < s.n; r++)
        c->moved += rank_node[r] != rp->rank_node[r];
    rm->has_given = 1;
    return 0;
}

void fc__remap_judge(fc__remap *rm)
{
    rm->uncertainty_pct = fabs(rm->check_err_pct);
    rm->equivalent = rm->fewest = 0;
    rm->clearly_better = 0;
    if (rm->ncands == 0)
        return;
    double best = rm->cands[0].time;
    for (size_t i = 0; i < rm->ncands; i++) {
        if (best > 0 && 100 * (rm->cands[i].time - best) / best > rm->uncertainty_pct)
            break;
        rm->equivalent = i + 1;
        if (rm->cands[i].moved < rm->cands[rm->fewest].moved)
            rm->fewest = i;
    }
    rm->clearly_better = rm->cands[0].gain_pct > rm->uncertainty_pct;
}

void fc__remap_free(fc__remap *rm)
{
    if (rm == NULL)
        return;
    free(rm->given.rank_node);
    for (uint32_t g = 0; rm->node_names && g < rm->nnames; g++)
        free(rm->node_names[g]);
    free(rm->node_names);
    for (size_t i = 0; rm->cands && i < rm->cand_cap; i++)
        free(rm->cands[i].rank_node);
    free(rm->cands);
    free(rm->current.rank_node);
    free(rm);
}
