/* analyzer/match/flows.c: the order of the flows and of the unmatched messages the matcher gives,
 * the names of the reasons a message stays unmatched, and the numbering of the nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "match/matcher.h"

const char *fc__unmatched_reason(uint32_t reason)
{
    switch (reason) {
#define FC__X(name, num, text)                                                                     \
    case num:                                                                                      \
        return text;
        FC_UNMATCHED_REASONS(FC__X)
#undef FC__X
    }
    return "unknown";
}

static int cmp_flow(const void *a, const void *b)
{
    const fc__flow *x = a, *y = b;
    if (x->intra != y->intra)
        return x->intra - y->intra;
#define CMP(f)                                                                                     \
    if (x->f != y->f)                                                                              \
        return x->f < y->f ? -1 : 1;
    /* Then the order of delivery (the id until the ids are given), the same in every analysis of
     * the trace, so that flows alike in all the above still get the same ids everywhere. */
    CMP(start) CMP(src_rank) CMP(dst_rank) CMP(end) CMP(send_start) CMP(id)
#undef CMP
    return 0;
}

/* Flow x before flow y of the array ctx, by index. */
static inline int flow_before(const void *ctx, uint32_t x, uint32_t y)
{
    const fc__flow *f = ctx;
    return cmp_flow(&f[x], &f[y]) < 0;
}

FC__MSORT(msort_flow_ix, uint32_t, flow_before)

/* Sorts flows[0..n) by cmp_flow. qsort sorted the 128-byte flows through pointers, calling
 * cmp_flow through a pointer for each of its n log n steps: a few per cent of an analysis with
 * predictions. Here their 32-bit indices are merge-sorted with the comparison inlined, and the
 * flows are then moved once, cycle by cycle. cmp_flow orders any two flows (their delivery order,
 * the id, breaks every tie), so the order is qsort's, which also does the sorting when the
 * indices find no memory (it then sorts in place) or would not fit in 32 bits. */
void fc__sort_flows(fc__flow *flows, size_t n)
{
    if (n < 2)
        return;
    uint32_t *ix = n <= UINT32_MAX ? malloc(2 * n * sizeof *ix) : NULL;
    if (ix == NULL) {
        fc__sort(flows, n, sizeof *flows, cmp_flow);
        return;
    }
    uint32_t *src = ix;
    for (size_t i = 0; i < n; i++)
        src[i] = (uint32_t)i;
    msort_flow_ix(src, ix + n, n, flows);
    /* src[r] is the flow that goes to place r: each cycle moves its flows up one place. */
    for (size_t i = 0; i < n; i++) {
        if (src[i] == i)
            continue;
        fc__flow tmp = flows[i];
        size_t j = i;
        while (src[j] != i) {
            size_t k = src[j];
            flows[j] = flows[k];
            src[j] = (uint32_t)j;
            j = k;
        }
        flows[j] = tmp;
        src[j] = (uint32_t)j;
    }
    free(ix);
}

int fc__mt_cmp_unmatched(const void *a, const void *b)
{
    const fc__unmatched *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->post < y->post ? -1 : x->post > y->post;
}

/* Numbers the nodes in order of first appearance by world rank. */
int fc__mt_number_nodes(fc_trace *t, fc__match *res)
{
    size_t cap = 0;
    for (uint32_t w = 0; w < res->world; w++)
        res->rank_node[w] = FC_NODE_NONE;
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        char buf[32];
        const char *name = r->info.node[0] ? r->info.node : r->info.host;
        if (name[0] == 0) {
            snprintf(buf, sizeof buf, "rank-%u", r->info.rank);
            name = buf;
        }
        size_t n = 0;
        while (n < res->nnodes && strcmp(res->nodes[n], name) != 0)
            n++;
        if (n == res->nnodes) {
            if (fc__grow((void **)&res->nodes, &res->nnodes, &cap, sizeof *res->nodes) < 0)
                return FC_ENOMEM;
            if ((res->nodes[n] = strdup(name)) == NULL)
                return FC_ENOMEM;
            res->nnodes++;
        }
        if (r->info.rank < res->world)
            res->rank_node[r->info.rank] = (uint32_t)n;
    }
    return 0;
}
