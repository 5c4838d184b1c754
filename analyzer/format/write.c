/* analyzer/format/write.c: writes valid flowcut rank files block by block (writer.h), with the same
 * encoders as the tracer (format.h, event.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <flowcut/writer.h>
#include "util/internal.h"

struct fc_writer {
    FILE *f;
    char *path;
    unsigned flags;
    uint64_t off, events, warnings;
    uint32_t seq;
    int failed;
    char *coll_env; /* the next RANK block's FC_RK_COLL_ENV, or NULL */
    size_t coll_env_len;
};

/* A growable payload under construction. */
typedef struct buf {
    unsigned char *p;
    size_t n, cap;
    int nomem;
} buf;

static unsigned char *room(buf *b, size_t n)
{
    if (b->nomem)
        return NULL;
    if (b->cap - b->n < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->n < n)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (p == NULL) {
            b->nomem = 1;
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    return b->p + b->n;
}

static void put_uv(buf *b, uint64_t v)
{
    unsigned char *p = room(b, 10);
    if (p != NULL)
        b->n += fc_put_uvarint(p, v);
}

static void put_bytes(buf *b, const void *s, size_t n)
{
    unsigned char *p = room(b, n);
    if (p != NULL && n > 0) {
        memcpy(p, s, n);
        b->n += n;
    }
}

static void put_str(buf *b, const char *s)
{
    s = s ? s : "";
    put_uv(b, strlen(s));
    put_bytes(b, s, strlen(s));
}

int fc_writer_open(const char *path, uint32_t rank, uint32_t size, uint64_t start_ns, uint32_t pid,
                   unsigned flags, fc_writer **out)
{
    unsigned char h[FC_FILE_HEADER_SIZE];
    *out = NULL;
    if (flags & ~FC_WRITER_STORED)
        return fc__err(FC_EINVAL, "%s: unknown writer flags 0x%x", path, flags);
    fc_writer *w = calloc(1, sizeof *w);
    if (w == NULL || (w->path = strdup(path)) == NULL) {
        free(w);
        return fc__err(FC_ENOMEM, "%s: out of memory", path);
    }
    w->flags = flags;
    if ((w->f = fopen(path, "wb")) == NULL) {
        int rc = fc__err(errno == ENOENT ? FC_ENOENT : FC_EIO, "%s: %s", path, strerror(errno));
        free(w->path);
        free(w);
        return rc;
    }
    fc_file_header_put(h, rank, size, start_ns, pid);
    if (fwrite(h, 1, sizeof h, w->f) != sizeof h) {
        int rc = fc__err(FC_EIO, "%s: offset 0: %s", path, strerror(errno));
        fclose(w->f);
        free(w->path);
        free(w);
        return rc;
    }
    w->off = sizeof h;
    *out = w;
    return 0;
}

int fc_writer_block(fc_writer *w, uint32_t kind, uint32_t flags, const void *payload, size_t len)
{
    unsigned char h[FC_BLOCK_HEADER_SIZE];
    unsigned char *z = NULL;
    const unsigned char *data = payload;
    size_t stored = len;
    int rc = 0;
    if (w->failed)
        return w->failed;
    if (len > FC_BLOCK_MAX_PAYLOAD || (flags & ~FC_BLKF_ZLIB))
        return fc__err(FC_EINVAL, "%s: offset %llu: block too long or unknown block flags", w->path,
                       (unsigned long long)w->off);
    if (flags & FC_BLKF_ZLIB) {
        uLongf zn = compressBound((uLong)len);
        if ((z = malloc(zn)) == NULL)
            return fc__err(FC_ENOMEM, "%s: out of memory", w->path);
        if (compress2(z, &zn, payload, (uLong)len, Z_DEFAULT_COMPRESSION) != Z_OK) {
            rc = fc__err(FC_EZLIB, "%s: offset %llu: compression failed", w->path, (unsigned long long)w->off);
            goto out;
        }
        data = z;
        stored = zn;
    }
    fc_block_header_put(h, kind, flags, (uint32_t)stored, (uint32_t)len,
                        (uint32_t)crc32(0L, data, (uInt)stored), w->seq);
    if (fwrite(h, 1, sizeof h, w->f) != sizeof h || (stored && fwrite(data, 1, stored, w->f) != stored)) {
        rc = w->failed = fc__err(FC_EIO, "%s: offset %llu: %s", w->path, (unsigned long long)w->off,
                                 strerror(errno));
        goto out;
    }
    w->seq++;
    w->off += sizeof h + stored;
    /* END's total is what the EVENTS blocks hold, whoever built them: the reader checks it. */
    if (kind == FC_BLK_EVENTS) {
        const unsigned char *p = payload;
        uint64_t thread, count, base;
        if (fc__chunk_header(&p, p + len, &thread, &count, &base) == 0)
            w->events += count;
    }
out:
    free(z);
    return rc;
}

/* Writes b as a block of kind, reporting an allocation failure while b was built. */
static int emit(fc_writer *w, uint32_t kind, uint32_t flags, buf *b)
{
    int rc = b->nomem ? fc__err(FC_ENOMEM, "%s: out of memory", w->path)
                      : fc_writer_block(w, kind, flags, b->p, b->n);
    free(b->p);
    return rc;
}

static void field(buf *b, unsigned key, const void *data, uint32_t len)
{
    unsigned char *p = room(b, 6);
    if (p == NULL)
        return;
    fc_put_u16(p, (uint16_t)key);
    fc_put_u32(p + 2, len);
    b->n += 6;
    put_bytes(b, data, len);
}

static void field_u32(buf *b, unsigned key, uint32_t v)
{
    unsigned char x[4];
    fc_put_u32(x, v);
    field(b, key, x, 4);
}

int fc_writer_rank(fc_writer *w, const fc_rank_info *in)
{
    buf b = {0};
#define HAS(key) FC_RANK_HAS(in, key)
#define TEXT(key, s)                                                                               \
    if (HAS(key))                                                                                  \
        field(&b, key, (s) ? (s) : "", (uint32_t)strlen((s) ? (s) : ""));
    if (HAS(FC_RK_RANK)) field_u32(&b, FC_RK_RANK, in->rank);
    if (HAS(FC_RK_SIZE)) field_u32(&b, FC_RK_SIZE, in->size);
    TEXT(FC_RK_HOST, in->host)
    TEXT(FC_RK_NODE, in->node)
    if (HAS(FC_RK_CORE)) field_u32(&b, FC_RK_CORE, (uint32_t)in->core);
    if (HAS(FC_RK_NUMA)) field_u32(&b, FC_RK_NUMA, (uint32_t)in->numa);
    TEXT(FC_RK_MPI_VERSION, in->mpi_version)
    TEXT(FC_RK_PROGRAM, in->program)
    if (HAS(FC_RK_ARGS)) {
        buf a = {0};
        for (uint32_t i = 0; i < in->argc; i++)
            put_bytes(&a, in->argv[i], strlen(in->argv[i]) + 1);
        b.nomem |= a.nomem;
        field(&b, FC_RK_ARGS, a.p, (uint32_t)a.n);
        free(a.p);
    }
    if (HAS(FC_RK_START_NS)) {
        unsigned char x[8];
        fc_put_u64(x, in->start_ns);
        field(&b, FC_RK_START_NS, x, 8);
    }
    if (HAS(FC_RK_PID)) field_u32(&b, FC_RK_PID, in->pid);
    if (HAS(FC_RK_THREAD_LEVEL)) field_u32(&b, FC_RK_THREAD_LEVEL, (uint32_t)in->thread_level);
    if (HAS(FC_RK_CALLSITE_DEPTH)) field_u32(&b, FC_RK_CALLSITE_DEPTH, in->callsite_depth);
    TEXT(FC_RK_CLOCK_SOURCE, in->clock_source)
    TEXT(FC_RK_AFFINITY, in->affinity)
    if (HAS(FC_RK_INIT_MODE)) field_u32(&b, FC_RK_INIT_MODE, in->init_mode);
    if (HAS(FC_RK_SLOT)) field_u32(&b, FC_RK_SLOT, in->slot);
    if (w->coll_env != NULL)
        field(&b, FC_RK_COLL_ENV, w->coll_env, (uint32_t)w->coll_env_len);
#undef TEXT
#undef HAS
    return emit(w, FC_BLK_RANK, 0, &b);
}

int fc_writer_rank_coll_env(fc_writer *w, const char *env, size_t len)
{
    char *c = malloc(len ? len : 1);
    if (c == NULL)
        return fc__err(FC_ENOMEM, "out of memory");
    memcpy(c, env, len);
    free(w->coll_env);
    w->coll_env = c;
    w->coll_env_len = len;
    return 0;
}

int fc_writer_modules(fc_writer *w, const fc_module *m, size_t n)
{
    buf b = {0};
    put_uv(&b, n);
    for (size_t i = 0; i < n; i++) {
        put_uv(&b, m[i].id);
        put_uv(&b, m[i].base);
        put_uv(&b, m[i].size);
        put_str(&b, m[i].path);
        put_str(&b, m[i].build_id);
    }
    return emit(w, FC_BLK_MODULES, 0, &b);
}

int fc_writer_sites(fc_writer *w, const fc_site *s, size_t n)
{
    buf b = {0};
    put_uv(&b, n);
    for (size_t i = 0; i < n; i++) {
        put_uv(&b, s[i].id);
        put_uv(&b, s[i].depth);
        for (uint32_t k = 0; k < s[i].depth; k++) {
            put_uv(&b, s[i].frames[k].module);
            put_uv(&b, s[i].frames[k].offset);
        }
    }
    return emit(w, FC_BLK_SITES, 0, &b);
}

int fc_writer_comms(fc_writer *w, const fc_comm *c, size_t n)
{
    buf b = {0};
    put_uv(&b, n);
    for (size_t i = 0; i < n; i++) {
        put_uv(&b, c[i].id);
        put_uv(&b, c[i].flags);
        put_uv(&b, c[i].local_size);
        for (uint32_t k = 0; k < c[i].local_size; k++)
            put_uv(&b, c[i].local[k]);
        put_uv(&b, c[i].remote_size);
        for (uint32_t k = 0; k < c[i].remote_size; k++)
            put_uv(&b, c[i].remote[k]);
        put_uv(&b, fc_zigzag(c[i].ordinal));
    }
    return emit(w, FC_BLK_COMMS, 0, &b);
}

int fc_writer_clock(fc_writer *w, const fc_clock *c, size_t n)
{
    buf b = {0};
    put_uv(&b, n);
    for (size_t i = 0; i < n; i++) {
        put_uv(&b, c[i].phase);
        put_uv(&b, c[i].local_ns);
        put_uv(&b, fc_zigzag(c[i].offset_ns));
        put_uv(&b, c[i].uncertainty_ns);
        put_uv(&b, c[i].samples);
        put_uv(&b, c[i].min_rtt_ns);
    }
    return emit(w, FC_BLK_CLOCK, 0, &b);
}

int fc_writer_events(fc_writer *w, uint32_t thread, const fc_event *ev, size_t n)
{
    buf b = {0};
    if (n == 0)
        return fc__err(FC_EINVAL, "%s: an EVENTS block needs at least one event", w->path);
    for (size_t i = 0; i < n; i++)
        if (ev[i].kind >= FC_EV_MAX_ || (i > 0 && ev[i].t0 < ev[i - 1].t0) || ev[i].t1 < ev[i].t0)
            return fc__err(FC_EINVAL, "%s: event %zu has a bad kind or goes back in time", w->path, i);
    fc_event_codec *c = malloc(sizeof *c);
    if (c == NULL)
        return fc__err(FC_ENOMEM, "%s: out of memory", w->path);
    fc_event_codec_reset(c, ev[0].t0);
    put_uv(&b, thread);
    put_uv(&b, n);
    put_uv(&b, ev[0].t0);
    /* In columns, as the tracer writes them (event.h), so that traces written here (converted
     * from OTF2, made by generators and tests) read like traced ones, at the same cost. */
    unsigned char *times = malloc(2 * n * FC_EVENT_COLS_TIME);
    unsigned char *p = times ? room(&b, FC_EVENT_COLS_DIR + n * FC_EVENT_MAX_ENCODED + 2 * n * FC_EVENT_COLS_TIME) : NULL;
    if (p != NULL) {
        fc_event_cols o = {.rec = p + FC_EVENT_COLS_DIR, .gap = times, .dur = times + n * FC_EVENT_COLS_TIME};
        for (size_t i = 0; i < n; i++)
            fc_event_encode_cols(c, &ev[i], &o);
        b.n += fc_event_cols_finish(&o, p);
    } else
        b.nomem = 1;
    free(times);
    free(c);
    return emit(w, FC_BLK_EVENTS, (w->flags & FC_WRITER_STORED) ? 0 : FC_BLKF_ZLIB, &b);
}

int fc_writer_warn(fc_writer *w, const char *text)
{
    int rc = fc_writer_block(w, FC_BLK_WARN, 0, text, strlen(text));
    if (rc == 0)
        w->warnings++;
    return rc;
}

int fc_writer_end(fc_writer *w, uint64_t flags, uint64_t reason, uint64_t end_ns, uint64_t dropped)
{
    buf b = {0};
    put_uv(&b, w->events);
    put_uv(&b, flags);
    put_uv(&b, reason);
    put_uv(&b, end_ns);
    put_uv(&b, dropped);
    put_uv(&b, w->warnings);
    return emit(w, FC_BLK_END, 0, &b);
}

uint64_t fc_writer_offset(const fc_writer *w)
{
    return w->off;
}

int fc_writer_close(fc_writer *w)
{
    int rc = 0;
    if (w == NULL)
        return 0;
    if (fclose(w->f) != 0 && w->failed == 0)
        rc = fc__err(FC_EIO, "%s: %s", w->path, strerror(errno));
    free(w->path);
    free(w->coll_env);
    free(w);
    return rc;
}
