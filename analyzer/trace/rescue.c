/* analyzer/trace/rescue.c: recovers the events a killed rank had recorded but not yet written,
 * from its rescue file (format.h, RESCUE), as EVENTS payloads in rows that the reader indexes
 * after the rank file's own blocks. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/internal.h"

/* Chunks beyond this are taken for corruption. */
#define MAX_CHUNKS (1u << 20)
/* How far (ns) a record's entry time may lie before its predecessor's, or before its chunk was
 * taken, and still count: the TSCs of two cores differ by a little. Records left over from the
 * chunk's previous use are older by at least the time it took to write that chunk. */
#define SKEW_NS 2000

typedef struct chunk_ref {
    uint32_t index, thread, state, count;
    uint64_t take_seq, taken_at;
} chunk_ref;

static int cmp_chunk(const void *a, const void *b)
{
    const chunk_ref *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return (x->take_seq > y->take_seq) - (x->take_seq < y->take_seq);
}

/* The event clock's ticks in ns, as the tracer maps them (libtrace/runtime.h). */
static uint64_t ticks_ns(uint64_t tick0, uint64_t ns0, uint64_t mult, uint64_t t)
{
    const unsigned __int128 half = (unsigned __int128)1 << 31;
    if (t >= tick0)
        return ns0 + (uint64_t)(((unsigned __int128)(t - tick0) * mult + half) >> 32);
    return ns0 - (uint64_t)(((unsigned __int128)(tick0 - t) * mult + half) >> 32);
}

/* Reads the whole file at path into a new buffer (*out, *n). 0, or -1 when it cannot. */
static int slurp(const char *path, unsigned char **out, size_t *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    *out = NULL;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < FC_RESCUE_HEADER_SIZE ||
        (uint64_t)st.st_size > ((uint64_t)1 << 36)) {
        close(fd);
        return -1;
    }
    unsigned char *b = malloc((size_t)st.st_size);
    size_t got = 0;
    int rc = b ? fc__pread(fd, b, (size_t)st.st_size, 0, &got) : -1;
    close(fd);
    if (rc < 0 || got < FC_RESCUE_HEADER_SIZE) {
        free(b);
        return -1;
    }
    *out = b;
    *n = got;
    return 0;
}

int fc__rescue_read(fc__arena *a, const char *rank_file, uint32_t rank, uint32_t nseq, fc__rescued **out,
                    size_t *nout)
{
    char path[4200];
    size_t len = strlen(rank_file), size = 0, n = 0, cap = 0;
    unsigned char *f = NULL;
    chunk_ref *refs = NULL;
    fc__rescued *res = NULL;
    int rc = 0;
    *out = NULL;
    *nout = 0;
    /* rank-NNNNNN.fct -> rank-NNNNNN.fcr */
    if (len < 4 || len >= sizeof path || strcmp(rank_file + len - 4, ".fct") != 0)
        return 0;
    memcpy(path, rank_file, len + 1);
    path[len - 1] = 'r';
    if (slurp(path, &f, &size) < 0)
        return 0; /* no rescue file: nothing to recover */
    uint32_t rsize = fc_get_u32(f + 20), per = fc_get_u32(f + 24), nch = fc_get_u32(f + 28);
    uint64_t tick0 = fc_get_u64(f + 32), ns0 = fc_get_u64(f + 40), mult = fc_get_u64(f + 48);
    uint64_t recs_off = fc_get_u64(f + 56);
    if (memcmp(f, FC_RESCUE_MAGIC, 8) != 0 || fc_get_u32(f + 8) != FC_BOM || fc_get_u16(f + 12) != FC_FORMAT_MAJOR ||
        fc_get_u32(f + 16) != rank || rsize != FC_RESCUE_RECORD_SIZE || per == 0 || per > (1u << 20) ||
        nch == 0 || nch > MAX_CHUNKS || recs_off < FC_RESCUE_HEADER_SIZE + (uint64_t)nch * FC_RESCUE_CHUNK_SIZE ||
        recs_off > size || (uint64_t)nch * per * rsize > size - recs_off)
        goto out; /* not a rescue file of this rank: ignored */
    uint64_t skew = mult ? (uint64_t)(((unsigned __int128)SKEW_NS << 32) / mult) : 0; /* in ticks */
    if ((refs = calloc(nch, sizeof *refs)) == NULL) {
        rc = FC_ENOMEM;
        goto out;
    }
    size_t nref = 0;
    for (uint32_t i = 0; i < nch; i++) {
        const unsigned char *e = f + FC_RESCUE_HEADER_SIZE + (size_t)i * FC_RESCUE_CHUNK_SIZE;
        chunk_ref c = {.index = i, .state = fc_get_u32(e), .thread = fc_get_u32(e + 4), .count = fc_get_u32(e + 8),
                       .take_seq = fc_get_u64(e + 16), .taken_at = fc_get_u64(e + 24)};
        uint32_t bseq = fc_get_u32(e + 12);
        if (c.state != FC_RSC_FILLING && c.state != FC_RSC_QUEUED && c.state != FC_RSC_WRITING)
            continue;
        if (bseq != 0 && bseq - 1 < nseq)
            continue; /* its block is in the rank file */
        if (c.count > per)
            c.count = per;
        refs[nref++] = c;
    }
    qsort(refs, nref, sizeof *refs, cmp_chunk);
    for (size_t k = 0; k < nref; k++) {
        const chunk_ref *c = &refs[k];
        const unsigned char *recs = f + recs_off + (size_t)c->index * per * rsize;
        /* A queued chunk holds count records; a filling one, the prefix that belongs to this fill. */
        uint32_t limit = c->state == FC_RSC_FILLING ? per : c->count, m = 0;
        uint64_t prev = c->taken_at;
        for (; m < limit; m++) {
            const unsigned char *x = recs + (size_t)m * rsize;
            unsigned kind = fc_get_u16(x + 56);
            uint64_t t0 = fc_get_u64(x);
            if (kind == 0 || kind >= FC_EV_MAX_ || fc_event_kind_name(kind) == NULL)
                break;
            /* The tracer clears a filling chunk's first record when it takes the chunk; a later
             * record of this fill entered its call after the take and after its predecessor. */
            if (c->state == FC_RSC_FILLING && m > 0 && t0 + skew < prev)
                break;
            if (t0 > prev)
                prev = t0;
        }
        if (m == 0)
            continue;
        /* Rows: thread, count, base, then the records (event.h's encoder). */
        unsigned char *p = fc__arena_alloc(a, 30 + (size_t)m * FC_EVENT_MAX_ENCODED);
        fc_event_codec *codec = malloc(sizeof *codec);
        if (p == NULL || codec == NULL || fc__grow((void **)&res, &n, &cap, sizeof *res) < 0) {
            free(codec);
            rc = FC_ENOMEM;
            goto out;
        }
        uint64_t base = ticks_ns(tick0, ns0, mult, fc_get_u64(recs)), prev0 = base;
        size_t o = 0;
        o += fc_put_uvarint(p + o, c->thread);
        o += fc_put_uvarint(p + o, m);
        o += fc_put_uvarint(p + o, base);
        fc_event_codec_reset(codec, base);
        for (uint32_t i = 0; i < m; i++) {
            const unsigned char *x = recs + (size_t)i * rsize;
            fc_event ev = {.kind = fc_get_u16(x + 56), .thread = c->thread,
                           .t0 = ticks_ns(tick0, ns0, mult, fc_get_u64(x)),
                           .t1 = ticks_ns(tick0, ns0, mult, fc_get_u64(x + 8)), .bytes = fc_get_u64(x + 16),
                           .bytes2 = fc_get_u64(x + 24), .obj = fc_get_u64(x + 32),
                           .peer = (int32_t)fc_get_u32(x + 40), .tag = (int32_t)fc_get_u32(x + 44),
                           .comm = fc_get_u32(x + 48), .site = fc_get_u32(x + 52), .flags = fc_get_u16(x + 58)};
            /* As the tracer's encoder does: entry times never decrease within a chunk. */
            if (ev.t0 < prev0)
                ev.t0 = prev0;
            if (ev.t1 < ev.t0)
                ev.t1 = ev.t0;
            prev0 = ev.t0;
            o += fc_event_encode(codec, &ev, p + o);
        }
        free(codec);
        res[n++] = (fc__rescued){.payload = p, .len = o, .thread = c->thread, .count = m};
    }
out:
    free(f);
    free(refs);
    if (rc < 0) {
        free(res);
        return rc;
    }
    *out = res;
    *nout = n;
    return 0;
}
