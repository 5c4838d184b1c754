/* analyzer/util/internal.h: what the files of libflowcut-analyzer share and nobody else sees. */
#ifndef FLOWCUT_ANALYZER_INTERNAL_H
#define FLOWCUT_ANALYZER_INTERNAL_H

#include <stdlib.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <flowcut/reader.h>

/* Records the message of a failure for fc_errmsg() and returns code, so that callers can write
 * `return fc__err(FC_ECORRUPT, "%s: offset %llu: ...", ...)`. */
int fc__err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Bump allocator owning every definition of a trace: freed all at once. */
typedef struct fc__arena {
    struct fc__arena_chunk *head;
} fc__arena;
void *fc__arena_alloc(fc__arena *a, size_t n);
char *fc__arena_strndup(fc__arena *a, const char *s, size_t n);
void fc__arena_free(fc__arena *a);

/* Growable array helper: makes room for one more element of size sz in *v (count *n, capacity
 * *cap). Returns 0 or FC_ENOMEM. */
int fc__grow(void **v, size_t *n, size_t *cap, size_t sz);

/* Makes room for need elements of size sz in *p (a pointer to the array), doubling the capacity
 * *cap from 16 until it fits and zeroing the new elements. Returns 0 or FC_ENOMEM (then *p and
 * *cap are as they were). The check is inline: the sweep calls this on every boundary. */
int fc__reserve_grow(void *p, size_t *cap, size_t need, size_t sz);
static inline int fc__reserve(void *p, size_t *cap, size_t need, size_t sz)
{
    return need <= *cap ? 0 : fc__reserve_grow(p, cap, need, sz);
}

/* As fc__reserve, for arrays whose entries are read a cache line at a time (pools, slots): the
 * array starts on a 64-byte line, so that an entry of 64 or 128 bytes never straddles two lines,
 * which realloc (16-byte aligned) would make most of them do. Free the array with free. */
int fc__reserve_lines(void *p, size_t *cap, size_t need, size_t sz);

/* One EVENTS block of the index built at open. */
typedef struct fc__blk {
    uint64_t off;         /* of the payload (the header is FC_BLOCK_HEADER_SIZE before) */
    uint32_t flags, stored, raw;
    uint32_t thread, count;
    const unsigned char *mem; /* the raw payload in memory (recovered from a rescue file), or NULL */
} fc__blk;

/* A chunk recovered from a rescue file: a raw EVENTS payload (rows) in the trace's arena. */
typedef struct fc__rescued {
    const unsigned char *payload;
    size_t len;
    uint32_t thread, count;
} fc__rescued;
/* Reads the rescue file beside rank_file (rank-N.fcr for rank-N.fct, of world rank `rank`) and
 * returns in *out (n of them, the array the caller frees) the chunks that hold events the rank
 * recorded but not in its first nseq blocks, each thread's in order. A missing or foreign rescue
 * file recovers nothing. Returns 0 or FC_ENOMEM. */
int fc__rescue_read(fc__arena *a, const char *rank_file, uint32_t rank, uint32_t nseq, fc__rescued **out,
                    size_t *n);

/* A dense id -> index map (definitions are numbered from 0 or 1 in order). */
typedef struct fc__idmap {
    uint32_t *ix; /* index + 1, 0 = none */
    size_t n;
} fc__idmap;

/* The index stored for id, or -1. */
long fc__idmap_get(const fc__idmap *m, uint64_t id);

/* A communicator's virtual topology as one rank sees it (format 2.6, COMMS): its neighbours in
 * the order of the neighbourhood collectives, world ranks or FC_PEER_NULL. */
typedef struct fc__topo {
    uint64_t comm;   /* comm_id */
    uint32_t kind;   /* FC_TOPO_* */
    uint32_t indeg, outdeg;
    const int64_t *src, *dst; /* indeg sources, outdeg destinations (in the trace's arena) */
} fc__topo;

typedef struct fc__rank {
    fc_rank pub;
    fc__topo *topos; /* in file order */
    size_t ntopos, tcap;
    fc_comm *comms;
    fc_site *sites;
    fc_module *modules;
    fc_clock *clocks;
    const char **warnings;
    size_t ccap, scap, mcap, kcap, wcap;
    fc__idmap comm_ix, site_ix, module_ix;
    fc__blk *blks;
    size_t nblks, bcap;
    const fc_clock *init, *fin; /* the measurements fc_rank_align uses */
    int header_ok;              /* the file header was read and accepted */
} fc__rank;

struct fc_trace {
    fc__arena arena;
    fc__rank *ranks;
    size_t nranks;
    uint32_t world, missing;
    int64_t origin;
    fc_skipped *skipped; /* rank files of a directory that could not be read at all */
    size_t nskipped, skcap;
    /* Member lists 0, 1 .. n-1 (MPI_COMM_WORLD's, which every rank file defines) share this one
     * array of the arena, so that their memory grows with the ranks, not with their square; and
     * the scratch a list is read into first (freed once the files are scanned). */
    const uint32_t *ident;
    size_t nident;
    uint32_t *mbuf;
    size_t mcap;
    /* Called by fc_trace_close once the trace is released (fc__trace_on_close). */
    void (*on_close)(void *);
    void *on_close_arg;
};

/* Reads n bytes at offset off of fd; *got is the bytes read. Returns 0, 1 when the file ends
 * first, or FC_EIO (errno set). */
int fc__pread(int fd, void *buf, size_t n, uint64_t off, size_t *got);

/* Inflates a zlib stream of stored bytes into out (exactly raw bytes expected). Returns 0,
 * FC_EZLIB (a stream that is damaged or does not fill raw bytes exactly) or FC_ENOMEM. With keep
 * NULL, the decompressor is made for this call; else it is *keep, made at the first call and
 * kept there for the next ones (free it with fc__inflate_end). */
struct libdeflate_decompressor;
int fc__inflate(struct libdeflate_decompressor **keep, const unsigned char *in, size_t stored,
                unsigned char *out, size_t raw);
void fc__inflate_end(struct libdeflate_decompressor *d);

/* Readies c for a new chunk starting at base_ns as fc_event_codec_reset does, for a codec that
 * has only decoded since its last reset. The decoder sets the kind of each entry of last[] it
 * writes and puts back the one it fails on, so the entries that are not zero are entry 0 and
 * those with a kind: a block of a few kinds costs a look at each entry rather than a fill of the
 * whole 11 KiB. */
static inline void fc__codec_rewind(fc_event_codec *c, uint64_t base_ns)
{
    memset(c, 0, offsetof(fc_event_codec, last));
    memset(&c->last[0], 0, sizeof c->last[0]);
    for (unsigned k = 1; k < FC_EV_MAX_; k++)
        if (c->last[k].kind != 0)
            memset(&c->last[k], 0, sizeof c->last[k]);
    c->prev_t0 = base_ns;
    c->prev_t1 = base_ns;
}

/* Parses the start of an EVENTS payload: thread, count and base_ns; advances *p. Returns 0 or -1. */
int fc__chunk_header(const unsigned char **p, const unsigned char *end, uint64_t *thread, uint64_t *count,
                     uint64_t *base_ns);

/* Writes s to f as a JSON string (NULL as null), escaped, with bytes that are not UTF-8 replaced
 * by U+FFFD so that the output always parses. Shared by every command that writes JSON. */
void fc__json_str(FILE *f, const char *s);

/* The global key of communicator id of rank r: equal on every rank for the same communicator
 * (kind, member lists and ordinal, format.h COMMS), so that sends and receives pair by it. An
 * undefined MPI_COMM_WORLD gets the key its definition would give; any other undefined id a key
 * private to the rank, which pairs with nothing. Defined in match.c; matching and the replay must
 * agree on it, so it lives in one place. */
uint64_t fc__comm_key(const fc_rank *r, uint64_t id);

/* Reads the topologies that follow a COMMS block's entries, [p, end), into r (trace/topo.c).
 * Returns 0, FC_ENOMEM, or -1 for a list that is cut short or names a rank outside the world. */
int fc__topo_parse(fc_trace *t, fc__rank *r, const unsigned char *p, const unsigned char *end);
/* The virtual topology of communicator id of rank r, or NULL when the trace has none for it. */
const fc__topo *fc__rank_topo(const fc_rank *r, uint64_t id);

/* The keys of communicator ids 0 .. *n - 1 of rank r (every id the rank defines, and 0 and 1) in a
 * new array *keys the caller frees; ids beyond take fc__comm_key. Returns 0 or FC_ENOMEM. */
int fc__comm_keys(const fc_rank *r, uint64_t **keys, size_t *n);

/* The text of frame k (0: the MPI call's caller) of site id of rank file i, as fc_symbols_chain
 * names it ("function@file:line" or "module+0xoffset"), or NULL for an unknown site or frame.
 * Owned by syms. */
const char *fc__symbols_frame(const fc_symbols *syms, size_t i, uint64_t site, uint32_t k);

/* 1 for the point-to-point send kinds, blocking, non-blocking and persistent. */
static inline int fc__is_send_kind(uint32_t k)
{
    return (k >= FC_EV_MPI_Send && k <= FC_EV_MPI_Irsend) || (k >= FC_EV_MPI_Send_init && k <= FC_EV_MPI_Rsend_init);
}

/* 1 for the synchronous send kinds, which complete only once their receive has started. */
static inline int fc__is_sync_kind(uint32_t k)
{
    return k == FC_EV_MPI_Ssend || k == FC_EV_MPI_Issend || k == FC_EV_MPI_Ssend_init;
}

/* A binary heap of elements of type in an array, as static functions name_up(ctx, h, i) (element i
 * moves up to its place, after it was added at the end) and name_down(ctx, h, n, i) (element i of
 * n moves down, after the top was replaced). below(ctx, a, b) is 1 when element *a belongs below
 * *b, i.e. leaves the heap after it; ctx is handed through for comparisons that need more than the
 * elements (indices into another array). The top, h[0], is the first to leave. */
#define FC__HEAP(name, type, below)                                                                \
    static inline void name##_up(const void *ctx, type *h, size_t i)                               \
    {                                                                                              \
        type x = h[i];                                                                             \
        while (i > 0) {                                                                            \
            size_t p = (i - 1) / 2;                                                                \
            if (!below(ctx, &h[p], &x))                                                            \
                break;                                                                             \
            h[i] = h[p];                                                                           \
            i = p;                                                                                 \
        }                                                                                          \
        h[i] = x;                                                                                  \
    }                                                                                              \
    static inline void name##_down(const void *ctx, type *h, size_t n, size_t i)                   \
    {                                                                                              \
        type x = h[i];                                                                             \
        for (;;) {                                                                                 \
            size_t c = 2 * i + 1;                                                                  \
            if (c >= n)                                                                            \
                break;                                                                             \
            if (c + 1 < n && below(ctx, &h[c], &h[c + 1]))                                         \
                c++;                                                                               \
            if (!below(ctx, &x, &h[c]))                                                            \
                break;                                                                             \
            h[i] = h[c];                                                                           \
            i = c;                                                                                 \
        }                                                                                          \
        h[i] = x;                                                                                  \
    }

/* Defines name(v, n), a stable insertion sort of v[0..n) on less(a, b) (a strictly before b), for
 * the short arrays sorted once per interval (its flows, its conflicts, a conflict's ids): there,
 * qsort's calls through a pointer and its merge buffer cost far more than the sort. Stable like
 * glibc's qsort on such arrays (a merge sort), so swapping one for the other keeps every order. */
#define FC__ISORT(name, type, less)                                                                \
    static inline void name(type *v, size_t n)                                                     \
    {                                                                                              \
        for (size_t i = 1; i < n; i++) {                                                           \
            type x = v[i];                                                                         \
            size_t j = i;                                                                          \
            for (; j > 0 && less(&x, &v[j - 1]); j--)                                              \
                v[j] = v[j - 1];                                                                   \
            v[j] = x;                                                                              \
        }                                                                                          \
    }

/* Arrays up to this long are sorted by an FC__ISORT sort, longer ones by qsort. */
#define FC__ISORT_MAX 32

/* Defines name(v, tmp, n, ctx), a merge sort of v[0..n) on less(ctx, a, b) (values a strictly
 * before b), using tmp[0..n) as its buffer: runs of 16 sorted by insertion, then merged in turns
 * between v and tmp, the result in v. Stable; the comparison is inlined, where qsort calls one
 * through a pointer at each of its n log n steps. */
#define FC__MSORT(name, type, less)                                                                \
    static void name(type *v, type *tmp, size_t n, const void *ctx)                                \
    {                                                                                              \
        enum { RUN = 16 };                                                                         \
        (void)ctx;                                                                                 \
        for (size_t lo = 0; lo < n; lo += RUN) {                                                   \
            size_t hi = n - lo < RUN ? n : lo + RUN;                                               \
            for (size_t i = lo + 1; i < hi; i++) {                                                 \
                type x = v[i];                                                                     \
                size_t j = i;                                                                      \
                for (; j > lo && less(ctx, x, v[j - 1]); j--)                                      \
                    v[j] = v[j - 1];                                                               \
                v[j] = x;                                                                          \
            }                                                                                      \
        }                                                                                          \
        type *src = v, *dst = tmp;                                                                 \
        for (size_t w = RUN; w < n; w *= 2) {                                                      \
            for (size_t lo = 0; lo < n; lo += 2 * w) {                                             \
                size_t mid = n - lo < w ? n : lo + w, hi = n - mid < w ? n : mid + w;              \
                size_t i = lo, j = mid, k = lo;                                                    \
                while (i < mid && j < hi)                                                          \
                    dst[k++] = less(ctx, src[j], src[i]) ? src[j++] : src[i++];                    \
                while (i < mid)                                                                    \
                    dst[k++] = src[i++];                                                           \
                while (j < hi)                                                                     \
                    dst[k++] = src[j++];                                                           \
            }                                                                                      \
            type *x = src;                                                                         \
            src = dst;                                                                             \
            dst = x;                                                                               \
        }                                                                                          \
        if (src != v)                                                                              \
            memcpy(v, src, n * sizeof *v);                                                         \
    }

/* qsort that accepts an empty array given as NULL (qsort itself must never see a NULL base). */
static inline void fc__sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

#endif /* FLOWCUT_ANALYZER_INTERNAL_H */
