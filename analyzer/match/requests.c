/* analyzer/match/requests.c: the outstanding nonblocking requests of a rank, by id. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "match/matcher.h"

/* ---- requests: the outstanding ones by id ----------------------------------------------------- */

/* Request ids grow over the whole run (the reader gives each post a new one), while only a few
 * requests are outstanding at a time: a hash table keyed by id holds just those. */
uint64_t fc__mt_req_hash(uint64_t req)
{
    req *= 0x9E3779B97F4A7C15ull;
    return req ^ (req >> 29);
}

/* The table of a map that never held an entry: one empty slot, never written (fc__mt_rmap_put and
 * slot_put grow it first), so that lookups need no test of their own. */
static struct rent rmap_none[1];

void fc__mt_rmap_init(rmap *m)
{
    m->e = rmap_none;
    m->n = 0;
    m->cap = 1;
}

void fc__mt_rmap_free(rmap *m)
{
    if (m->e != rmap_none)
        free(m->e);
}

/* fc__mt_rmap_put's entry for req, absent from m, when the table must grow first. */
static __attribute__((noinline)) struct rent *rmap_grow(rmap *m, uint64_t req)
{
    size_t ncap = m->cap > 1 ? 2 * m->cap : 64;
    struct rent *t = calloc(ncap, sizeof *t);
    if (t == NULL)
        return NULL;
    for (size_t i = 0; i < m->cap; i++)
        if (m->e[i].req) {
            size_t k = fc__mt_req_hash(m->e[i].req) & (ncap - 1);
            while (t[k].req)
                k = (k + 1) & (ncap - 1);
            t[k] = m->e[i];
        }
    fc__mt_rmap_free(m);
    m->e = t;
    m->cap = ncap;
    size_t j = fc__mt_req_hash(req) & (m->cap - 1);
    while (m->e[j].req)
        j = (j + 1) & (m->cap - 1);
    m->e[j].req = req;
    m->n++;
    return &m->e[j];
}

/* The entry of req in m, added when absent (its ix for the caller to set); NULL when out of
 * memory. */
struct rent *fc__mt_rmap_put(rmap *m, uint64_t req)
{
    /* One probe finds the entry or the empty one where it goes, unless the table must grow. */
    size_t j;
    for (j = fc__mt_req_hash(req) & (m->cap - 1); m->e[j].req; j = (j + 1) & (m->cap - 1))
        if (m->e[j].req == req)
            return &m->e[j];
    if (2 * (m->n + 1) > m->cap)
        return rmap_grow(m, req);
    m->e[j].req = req;
    m->n++;
    return &m->e[j];
}

/* Removes entry e of m, moving the entries after it back into the hole. */
void fc__mt_rmap_del(rmap *m, struct rent *e)
{
    size_t mask = m->cap - 1, i = (size_t)(e - m->e);
    for (size_t k = i;;) {
        k = (k + 1) & mask;
        if (m->e[k].req == 0)
            break;
        size_t home = fc__mt_req_hash(m->e[k].req) & mask;
        if (i <= k ? (i < home && home <= k) : (i < home || home <= k))
            continue;
        m->e[i] = m->e[k];
        i = k;
    }
    m->e[i].req = 0;
    m->n--;
}

void fc__mt_slot_init(slotmap *m)
{
    m->e = rmap_none;
    m->spill = NULL;
    m->cap = 1;
    m->n = 0;
}

void fc__mt_slot_free(slotmap *m)
{
    if (m->e != rmap_none)
        free(m->e);
    if (m->spill != NULL)
        fc__mt_rmap_free(m->spill);
    free(m->spill);
}

static int cmp_rent_ord(const void *a, const void *b)
{
    const struct rent *x = *(const struct rent *const *)a, *y = *(const struct rent *const *)b;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* The n entries of m, into v[], in the order they were put in (ord): the order in which their
 * requests were posted. */
void fc__mt_slot_list(const slotmap *m, struct rent **v)
{
    size_t n = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->e[i].req)
            v[n++] = &m->e[i];
    for (size_t i = 0; m->spill != NULL && i < m->spill->cap; i++)
        if (m->spill->e[i].req)
            v[n++] = &m->spill->e[i];
    fc__sort(v, n, sizeof *v, cmp_rent_ord);
}

/* slot_put's rare cases: req present already, or in the spill, or a ring to grow first, or a
 * place taken by an older request. */
struct rent *fc__mt_slot_put_slow(slotmap *m, uint64_t req, uint64_t ord)
{
    struct rent *e = slot_get(m, req);
    if (e != NULL)
        return e;
    if (2 * ((size_t)m->n + 1) > m->cap) {
        size_t ncap = m->cap > 1 ? 2 * (size_t)m->cap : 16;
        struct rent *t = ncap <= UINT32_MAX / 2 ? calloc(ncap, sizeof *t) : NULL;
        if (t == NULL)
            return NULL;
        for (size_t i = 0; i < m->cap; i++)
            if (m->e[i].req)
                t[m->e[i].req & (ncap - 1)] = m->e[i]; /* apart modulo cap, so apart modulo ncap */
        if (m->e != rmap_none)
            free(m->e);
        m->e = t;
        m->cap = (uint32_t)ncap;
    }
    e = &m->e[req & (m->cap - 1)];
    if (e->req) {
        if (m->spill == NULL) {
            if ((m->spill = malloc(sizeof *m->spill)) == NULL)
                return NULL;
            fc__mt_rmap_init(m->spill);
        }
        struct rent *o = fc__mt_rmap_put(m->spill, e->req);
        if (o == NULL)
            return NULL;
        *o = *e;
    }
    e->req = req;
    e->ord = ord;
    m->n++;
    return e;
}
