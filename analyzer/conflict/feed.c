/* analyzer/conflict/feed.c: the reordering between the match and the sweep (feed.h): the flows not yet
 * given an id wait unordered; each watermark takes those that start before it and sorts them as
 * fc__match_trace orders them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "conflict/feed.h"
#include "util/internal.h"

/* A clock-condition violation: its order of delivery and, once given, its id. */
typedef struct viol {
    uint64_t delivered, id;
} viol;

/* A waiting flow's entry: where it is in the slab, with its start, the first key of the order,
 * beside it. Nearly every comparison is settled by the starts alone and never touches the slab. */
typedef fc__sweep_loan fent; /* so that a release is lent to the sweep as it is */

/* Waiting flows in a slab of reused entries, and their entries in no order. The slab grows by
 * chunks that never move, so that the sweep can keep the inter-node flows where they are
 * (fc__sweep_lend) and give their entries back when done, instead of copying each one. A watermark releases
 * hundreds of flows at once, so sorting each release costs less than keeping a heap, whose every
 * pop walked its whole depth. */
/* The sort of a release (sort_release): keys of two digits of DIGIT bits; releases of FEW flows
 * or fewer are sorted by comparison. */
enum { DIGIT = 9, RADIX = 1 << DIGIT, FEW = 32 };

typedef struct fqueue {
    fc__flow **chunk;
    size_t nchunk;
    fc__sweep_back freed; /* the free entries; room for all */
    fent *h;       /* h[0 .. n): the waiting flows */
    fent *out;     /* a release, sorted; then out[cap ..] is the sort's scratch */
    uint32_t *key; /* the sort's keys: two per entry, then RADIX counts per digit */
    size_t cap, n;
    uint64_t next_id;
} fqueue;

struct fc__feed {
    fc__sweep *s;
    fqueue inter, intra;
    int (*on_intra)(void *arg, const fc__flow *f);
    void *intra_arg;
    viol *v;
    size_t nv, cv;
};

/* The order of ids (match.c's, within inter-node flows and within intra-node ones). */
static int before(const fc__flow *x, const fc__flow *y)
{
#define CMP(f)                                                                                     \
    if (x->f != y->f)                                                                              \
        return x->f < y->f;
    /* Then the order of delivery (the id until the ids are given), as match.c does. */
    CMP(start) CMP(src_rank) CMP(dst_rank) CMP(end) CMP(send_start) CMP(id)
#undef CMP
    return 0;
}

/* Whether entry a comes after entry b in that order: the first key is at hand in the entries;
 * only equal starts go on to the slab. The order is total (it ends with the order of delivery),
 * so any correct sort gives the one sequence. */
static int after(const fent *a, const fent *b)
{
    if (a->start != b->start)
        return a->start > b->start;
    return before(b->fl, a->fl);
}

/* Sorts v[0 .. n) into that order; tmp has room for n / 2 entries. A merge sort, by insertion
 * below 16 entries, that skips the merge of halves already in order. */
static void sort_ents(fent *v, size_t n, fent *tmp)
{
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            fent x = v[i];
            size_t j = i;
            for (; j > 0 && after(&v[j - 1], &x); j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    sort_ents(v, h, tmp);
    sort_ents(v + h, n - h, tmp);
    if (!after(&v[h - 1], &v[h]))
        return;
    memcpy(tmp, v, h * sizeof *v);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        v[k++] = after(&tmp[i], &v[j]) ? v[j++] : tmp[i++];
    while (i < h)
        v[k++] = tmp[i++];
}

int fc__feed_new(const fc__sweep_ops *ops, fc__feed **out)
{
    fc__feed *f = calloc(1, sizeof *f);
    *out = NULL;
    if (f == NULL || fc__sweep_new(ops, &f->s) < 0) {
        free(f);
        return fc__err(FC_ENOMEM, "out of memory starting the flow feed");
    }
    fc__sweep_lender(f->s, &f->inter.freed);
    *out = f;
    return 0;
}

void fc__feed_intra(fc__feed *f, int (*fn)(void *arg, const fc__flow *fl), void *arg)
{
    f->on_intra = fn;
    f->intra_arg = arg;
}

static void fqueue_free(fqueue *q)
{
    for (size_t i = 0; i < q->nchunk; i++)
        free(q->chunk[i]);
    free(q->chunk);
    free(q->freed.v);
    free(q->h);
    free(q->out);
    free(q->key);
}

void fc__feed_free(fc__feed *f)
{
    if (f == NULL)
        return;
    fc__sweep_free(f->s);
    fqueue_free(&f->inter);
    fqueue_free(&f->intra);
    free(f->v);
    free(f);
}

/* Doubles the slab with a new chunk, its entries free. Returns 0 or FC_ENOMEM. */
static int grow(fqueue *q)
{
    size_t nc = q->cap ? 2 * q->cap : 1024;
    fc__flow **ch = nc < UINT32_MAX ? realloc(q->chunk, (q->nchunk + 1) * sizeof *ch) : NULL;
    if (ch)
        q->chunk = ch;
    /* On a line: each flow then fills two lines (flow.h) rather than parts of three. */
    fc__flow *sl = ch ? aligned_alloc(64, (nc - q->cap) * sizeof *sl) : NULL;
    if (sl)
        q->chunk[q->nchunk++] = sl;
    fc__flow **fr = sl ? realloc(q->freed.v, nc * sizeof *fr) : NULL;
    if (fr)
        q->freed.v = fr;
    fent *h = fr ? realloc(q->h, nc * sizeof *h) : NULL;
    if (h)
        q->h = h;
    fent *o = h ? realloc(q->out, 2 * nc * sizeof *o) : NULL;
    if (o)
        q->out = o;
    uint32_t *key = o ? realloc(q->key, (2 * nc + 2 * RADIX) * sizeof *key) : NULL;
    if (key == NULL)
        return fc__err(FC_ENOMEM, "out of memory ordering the flows");
    q->key = key;
    for (size_t i = nc - q->cap; i-- > 0;)
        q->freed.v[q->freed.n++] = &sl[i];
    q->cap = nc;
    return 0;
}

/* Adds fl to the waiting flows, in a free entry. */
static inline void put(fqueue *q, const fc__flow *fl)
{
    fc__flow *e = q->freed.v[--q->freed.n];
    *e = *fl;
    q->h[q->n++] = (fent){fl->start, e};
}

/* put with no free entry left: the slab grows first. Out of line, so that a flow that finds an
 * entry costs no call and no saved register. Returns 0 or FC_ENOMEM. */
__attribute__((noinline)) static int put_grown(fqueue *q, const fc__flow *fl)
{
    if (grow(q))
        return FC_ENOMEM;
    put(q, fl);
    return 0;
}

/* The starts of a release are spread over its span, few are equal, and fewer than one in four
 * follows its predecessor in order, so a comparison sort pays about log2(n) comparisons, and as
 * many mispredictions, per flow; and they come in tight bunches, which buckets by start leave
 * crowded. Instead, each start is mapped onto a key of 2 DIGIT bits by where it falls in the span
 * (a monotone map: rounding can make two starts equal, never reverse them), and the flows are
 * sorted by key, least significant digit first, which is two stable passes whatever the bunches.
 * Flows of distinct keys are then in order; only those of one key can be out of order among
 * themselves, and a last pass sorts those (rarely any) by comparison. */
#define KEY_TOP ((double)((1u << 2 * DIGIT) - 1))

static inline uint32_t key_of(double start, double lo, double scale)
{
    double x = (start - lo) * scale;
    return (uint32_t)(x < KEY_TOP ? x : KEY_TOP);
}

/* Sorts src[0 .. n), whose starts span [lo, hi], into v[0 .. n) in that order; tmp (room for n
 * entries) and key (room for 2n + 2 RADIX) are scratch. */
static void sort_release(const fent *src, size_t n, fent *v, fent *tmp, uint32_t *key, double lo,
                         double hi)
{
    double scale = (KEY_TOP + 1) / (hi - lo);
    if (n <= FEW || !(scale < INFINITY)) { /* or all equal, or the span too wide */
        memcpy(v, src, n * sizeof *v);
        sort_ents(v, n, tmp);
        return;
    }
    uint32_t *k0 = key, *k1 = key + n, *c0 = key + 2 * n, *c1 = c0 + RADIX;
    memset(c0, 0, 2 * RADIX * sizeof *c0);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = key_of(src[i].start, lo, scale);
        k0[i] = k;
        c0[k & (RADIX - 1)]++;
        c1[k >> DIGIT]++;
    }
    for (uint32_t b = 0, s0 = 0, s1 = 0; b < RADIX; b++) { /* counts to where each digit starts */
        uint32_t x0 = c0[b], x1 = c1[b];
        c0[b] = s0;
        c1[b] = s1;
        s0 += x0;
        s1 += x1;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t j = c0[k0[i] & (RADIX - 1)]++;
        tmp[j] = src[i];
        k1[j] = k0[i];
    }
    for (size_t i = 0; i < n; i++)
        v[c1[k1[i] >> DIGIT]++] = tmp[i];
    for (size_t i = 1; i < n; i++) {
        if (v[i - 1].start < v[i].start || !after(&v[i - 1], &v[i])) /* the first test, at hand */
            continue;
        /* Both have one key: the flows of that key, sorted, end the disorder. */
        uint32_t k = key_of(v[i].start, lo, scale);
        size_t from = i - 1, to = i + 1;
        while (from > 0 && key_of(v[from - 1].start, lo, scale) == k)
            from--;
        while (to < n && key_of(v[to].start, lo, scale) == k)
            to++;
        if (to - from == 2) { /* as most often: the two, swapped */
            fent x = v[from];
            v[from] = v[i];
            v[i] = x;
        } else
            sort_ents(v + from, to - from, tmp);
        i = to - 1;
    }
}

/* Moves the waiting flows that start before watermark (all of them with all) to out[0 .. return)
 * in order. With give, their slab entries are freed, and stay readable until the next push;
 * otherwise they come back from the sweep. */
static size_t release(fqueue *q, double watermark, int all, int give)
{
    fent *h = q->h;
    size_t n = q->n, w = 0; /* w: the flows that stay */
    double lo = INFINITY, hi = -INFINITY, inf = 0;
    for (size_t i = 0; i < n; i++) {
        double x = h[i].start;
        lo = lo < x ? lo : x; /* in this order, one instruction each */
        hi = hi > x ? hi : x;
        inf += x - x; /* 0 while every start is finite */
    }
    /* A watermark nearly always releases every flow, as the span of the starts shows at once, when
     * they are finite. Otherwise the span is taken again, of the flows released (a start that is
     * not a number stays until all, and counts in no span: the minimum above can be wrong then),
     * and those that stay are moved before the others. The others are sorted from where they are;
     * the order they are left in does not matter: the order of ids is total. */
    if (inf != 0 || (!all && !(hi < watermark))) {
        lo = INFINITY;
        hi = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            double x = h[i].start;
            if (all || x < watermark) {
                lo = x < lo ? x : lo;
                hi = x > hi ? x : hi;
            } else
                w++;
        }
        for (size_t i = 0, j = 0; j < w; i++)
            if (!(h[i].start < watermark)) {
                fent x = h[i];
                h[i] = h[j];
                h[j++] = x;
            }
    }
    size_t k = n - w;
    q->n = w;
    if (k == 0)
        return 0;
    sort_release(h + w, k, q->out, q->out + q->cap, q->key, lo, hi);
    if (give)
        for (size_t i = 0; i < k; i++)
            q->freed.v[q->freed.n++] = q->out[i].fl;
    return k;
}

static int on_flow(void *arg, const fc__flow *fl)
{
    fc__feed *f = arg;
    fqueue *q = &f->inter;
    if (fl->intra) {
        if (f->on_intra == NULL)
            return 0;
        q = &f->intra;
    }
    if (q->freed.n == 0)
        return put_grown(q, fl);
    put(q, fl);
    return 0;
}

/* Remembers that the clock-condition violation delivered as number delivered has id id, so that
 * the worst one can be named by its id. Returns 0 or FC_ENOMEM. */
__attribute__((noinline)) static int note_viol(fc__feed *f, uint64_t delivered, uint64_t id)
{
    if (fc__grow((void **)&f->v, &f->nv, &f->cv, sizeof *f->v) < 0)
        return fc__err(FC_ENOMEM, "out of memory ordering the flows");
    f->v[f->nv++] = (viol){delivered, id};
    return 0;
}

/* Gives the next inter-node ids to the released flows out[0 .. k) and lends them to the sweep, in
 * batches small enough that the flows numbered are still in cache when the sweep reads them. */
static int pop_inter(fc__feed *f, const fent *out, size_t k)
{
    enum { BATCH = 64 };
    uint64_t id = f->inter.next_id;
    for (size_t i0 = 0; i0 < k; i0 += BATCH) {
        size_t n = k - i0 < BATCH ? k - i0 : BATCH;
        for (size_t i = i0; i < i0 + n; i++, id++) {
            fc__flow *fl = out[i].fl;
            if (fl->end < fl->send_start && note_viol(f, fl->id, id) != 0)
                return FC_ENOMEM;
            fl->id = id;
        }
        f->inter.next_id = id;
        int rc = fc__sweep_lend_all(f->s, out + i0, n);
        if (rc)
            return rc;
    }
    return 0;
}

static int pop_intra(fc__feed *f, fc__flow *fl)
{
    fl->id = f->intra.next_id++;
    return f->on_intra(f->intra_arg, fl);
}

/* Hands on, in order, the flows that start before watermark (all of them with all). */
static int release_all(fc__feed *f, double watermark, int all)
{
    int rc = 0;
    size_t k = release(&f->inter, watermark, all, 0);
    if (k > 0)
        rc = pop_inter(f, f->inter.out, k);
    k = rc ? 0 : release(&f->intra, watermark, all, 1);
    for (size_t i = 0; i < k && rc == 0; i++)
        rc = pop_intra(f, f->intra.out[i].fl);
    return rc;
}

static int on_advance(void *arg, double watermark)
{
    fc__feed *f = arg;
    int rc = release_all(f, watermark, 0);
    return rc ? rc : fc__sweep_advance(f->s, watermark);
}

fc__match_sink fc__feed_sink(fc__feed *f)
{
    return (fc__match_sink){.arg = f, .flow = on_flow, .advance = on_advance};
}

int fc__feed_finish(fc__feed *f, fc__match *m)
{
    int rc = release_all(f, 0, 1);
    if (rc == 0)
        rc = fc__sweep_finish(f->s);
    if (m->clock_violations) {
        uint64_t d = m->worst_flow;
        m->worst_flow = UINT64_MAX;
        for (size_t i = 0; i < f->nv; i++)
            if (f->v[i].delivered == d)
                m->worst_flow = f->v[i].id;
    }
    return rc;
}
