/* analyzer/match/comm-keys.c: the global key of a communicator, equal on every rank for the same
 * communicator, so that sends and receives pair by it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "match/matcher.h"

/* FNV-1a over 64-bit words: a communicator is named globally by its kind, member lists and ordinal
 * (format.h, COMMS), and 64 bits keep distinct communicators apart with overwhelming probability. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t list_hash(uint64_t h, const uint32_t *m, uint32_t n)
{
    h = mix(h, n);
    for (uint32_t i = 0; i < n; i++)
        h = mix(h, m[i]);
    return h;
}

/* list_hash(mix(FNV basis, 1), {0, 1 .. n - 1}, n): the member list of every rank's
 * MPI_COMM_WORLD. Each rank file defines it, so hashing it for each rank took O(ranks^2)
 * multiplications, a tenth of the analysis of 4096 ranks; it is hashed once per size, and the
 * lists are only compared. */
static uint64_t world_list_hash(uint32_t n)
{
    static _Thread_local uint32_t memo_n;
    static _Thread_local uint64_t memo_h;
    static _Thread_local int memo_set;
    if (!memo_set || memo_n != n) {
        uint64_t h = mix(mix(0xcbf29ce484222325ull, 1), n);
        for (uint32_t i = 0; i < n; i++)
            h = mix(h, i);
        memo_n = n;
        memo_h = h;
        memo_set = 1;
    }
    return memo_h;
}

static int is_identity(const uint32_t *m, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (m[i] != i)
            return 0;
    return 1;
}

/* The global key of a communicator definition. An inter-communicator's two sides see their groups
 * swapped, so the fc__mt_pair is hashed in a fixed order; its ordinal counts per local group and may differ
 * between the sides, so it is left out. */
static uint64_t comm_key(const fc_comm *c)
{
    uint64_t h = 0xcbf29ce484222325ull;
    if (c->flags & FC_COMMF_INTER) {
        uint64_t a = list_hash(1, c->local, c->local_size), b = list_hash(1, c->remote, c->remote_size);
        return mix(mix(mix(h, 2), a < b ? a : b), a < b ? b : a);
    }
    uint64_t l = is_identity(c->local, c->local_size) ? world_list_hash(c->local_size)
                                                       : list_hash(mix(h, 1), c->local, c->local_size);
    return mix(l, (uint64_t)c->ordinal);
}

/* The key of an undefined communicator: MPI_COMM_WORLD as the list 0 .. size-1 with ordinal 0 (what
 * a definition would give), anything else private to its rank so that it matches nothing. */
uint64_t fc__mt_undefined_key(const fc_rank *r, uint64_t id)
{
    uint64_t h = mix(0xcbf29ce484222325ull, 1);
    if (id == 0)
        return mix(world_list_hash(r->info.size), 0);
    if (id == 1)
        return mix(mix(mix(h, 1), r->info.rank), 0);
    return mix(mix(mix(h, 3), r->info.rank), id);
}

uint64_t fc__comm_key(const fc_rank *r, uint64_t id)
{
    const fc_comm *c = fc_rank_comm(r, id);
    return c ? comm_key(c) : fc__mt_undefined_key(r, id);
}

int fc__comm_keys(const fc_rank *r, uint64_t **keys, size_t *n)
{
    size_t m = 2;
    for (size_t i = 0; i < r->ncomms; i++)
        if (r->comms[i].id + 1 > m)
            m = r->comms[i].id + 1;
    uint64_t *k = malloc(m * sizeof *k);
    if (k == NULL)
        return FC_ENOMEM;
    for (size_t id = 0; id < m; id++)
        k[id] = fc__comm_key(r, id);
    *keys = k;
    *n = m;
    return 0;
}
