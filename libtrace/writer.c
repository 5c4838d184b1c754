/* libtrace/writer.c: turns chunks of records into blocks on disk (encode, compress, crc, write),
 * from the background writer thread, the lifecycle calls, or a fatal-signal handler.
 *
 * Every block goes to an offset reserved under wlock and is written with pwrite. A signal
 * handler cannot take that lock, so writers pass a gate instead: a normal writer raises `active`
 * then checks `sig`; the handler raises `sig` then waits for `active` to drop. With sequentially
 * consistent atomics one of the two always sees the other, so from then on the handler owns the
 * file offset and the block sequence alone, and the file stays a clean sequence of blocks. */
#include "runtime.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <libdeflate.h>
#include <zlib.h>

/* Level 1 by default, written by ISA-L's igzip (level 1, dynamic Huffman blocks), whose zlib
 * streams the reader inflates as any other. The writer thread's CPU per event is taken from the
 * application wherever every core runs a busy-polling rank, and the time columns of a chunk are
 * noise that no matcher finds matches in, so the cost per byte decides. Under callgrind, on the
 * chunks of a 0-byte ping-pong and of nbrate: igzip level 1 about 12 instructions per raw byte for
 * 2-5% more bytes than libdeflate level 1, which takes 25-30 (zlib level 1: 410 instructions an
 * event of about 6 raw bytes; Z_HUFFMAN_ONLY 500; zstd level 1, 25 a byte for 10% more bytes;
 * lz4 8 a byte for 50% more). Levels 2-9 are libdeflate's (higher: fewer bytes for more CPU);
 * level 0 stores the chunks uncompressed (about 6-8 bytes per event). FLOWCUT_ZLIB_LEVEL chooses. */
int fc__zlevel = 1;
const char fc__warn_write[] = "cannot write the trace file: %s; trace partial";
_Atomic unsigned fc__warnings;

static int fd = -1;
static pthread_mutex_t wlock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t file_off;
static uint32_t next_seq;
static int write_failed;
static _Atomic int gate_sig, gate_active;
static _Atomic long gate_tid;

/* The writer thread's buffers and zlib state. */
static z_stream zs;
static int zs_ready;
static unsigned char *enc_buf, *enc_scratch, *z_buf;
static size_t z_cap;
static fc_event_codec wcodec;
static struct libdeflate_compressor *ldc; /* the writer thread's, at fc__zlevel above 1 */
/* igzip's hash table and token buffer, the writer thread's: a buffer of 64 Ki tokens holds a
 * chunk's in one deflate block. */
#define ISAL_BUF_BYTES ISAL_DEF_LVL1_LARGE
static unsigned char *isal_buf;

/* The signal handler's preallocated buffers. */
#define SIG_DEF_BYTES (256u << 10)
static unsigned char *sig_enc, *sig_scratch, *sig_mods, *sig_sites, *sig_comms;
static fc_event_codec scodec;

/* ---- byte buffers --------------------------------------------------------------------------- */

void fc__buf_put(fc__buf *b, const void *data, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *p = b->fixed ? NULL : realloc(b->p, cap);
        if (p == NULL) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

void fc__buf_uv(fc__buf *b, uint64_t v)
{
    unsigned char tmp[10];
    fc__buf_put(b, tmp, fc_put_uvarint(tmp, v));
}

void fc__buf_str(fc__buf *b, const char *s, size_t n)
{
    fc__buf_uv(b, n);
    fc__buf_put(b, s, n);
}

/* ---- the file ------------------------------------------------------------------------------- */

static long my_tid(void)
{
    return syscall(SYS_gettid);
}

/* pwrite of all n bytes; 0 or -errno. */
static int pwrite_all(const unsigned char *p, size_t n, uint64_t off)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

/* Writes a block whose payload is already in its stored form. Caller owns the offsets (holds
 * wlock with the gate raised, or is the signal handler after closing the gate). */
static int put_block(uint32_t kind, uint32_t flags, const void *stored, size_t stored_len, size_t raw_len)
{
    unsigned char h[FC_BLOCK_HEADER_SIZE];
    /* libdeflate's CRC-32 is zlib's (the reader checks it with zlib), with the carry-less multiply
     * where the CPU has one: a few instructions a chunk instead of several a byte. */
    uint32_t crc = libdeflate_crc32(0, stored, stored_len);
    fc_block_header_put(h, kind, flags, (uint32_t)stored_len, (uint32_t)raw_len, crc, next_seq);
    uint64_t off = file_off;
    int rc = pwrite_all(h, sizeof h, off);
    if (rc == 0)
        rc = pwrite_all(stored, stored_len, off + sizeof h);
    if (rc < 0)
        return rc;
    file_off = off + sizeof h + stored_len;
    next_seq++;
    if (kind == FC_BLK_WARN)
        atomic_fetch_add(&fc__warnings, 1);
    return 0;
}

int fc__file_open(const char *dir, int rank, int size, uint64_t start_ns)
{
    char path[4200];
    unsigned char h[FC_FILE_HEADER_SIZE];
    int n = snprintf(path, sizeof path, "%s/" FC_TRACE_FILE_FMT, dir, rank);
    if (n < 0 || (size_t)n >= sizeof path)
        return -ENAMETOOLONG;
    int f = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (f < 0)
        return -errno;
    fc_file_header_put(h, (uint32_t)rank, (uint32_t)size, start_ns, (uint32_t)getpid());
    fd = f;
    int rc = pwrite_all(h, sizeof h, 0);
    if (rc < 0) {
        close(f);
        fd = -1;
        return rc;
    }
    file_off = sizeof h;
    fc__rt.open = 1;
    return 0;
}

/* The normal path to the file: serialised by wlock and closed to everybody once a signal
 * handler has taken over. ch, when given, is marked written inside the gate. */
static int gated_block(uint32_t kind, uint32_t flags, const void *stored, size_t stored_len, size_t raw_len,
                       fc__chunk *ch)
{
    int rc = -1, err = 0;
    pthread_mutex_lock(&wlock);
    atomic_store(&gate_tid, my_tid());
    atomic_store(&gate_active, 1);
    if (!atomic_load(&gate_sig) && fd >= 0 && !write_failed) {
        if (ch != NULL)
            fc__rescue_block((unsigned)(ch - fc__rt.chunks), next_seq, ch->count);
        err = put_block(kind, flags, stored, stored_len, raw_len);
        if (err < 0) {
            /* Cut the half-written block off so the file ends on a whole block. */
            write_failed = 1;
            if (ftruncate(fd, (off_t)file_off) < 0)
                err = -errno;
        }
        else
            rc = 0;
        if (rc == 0 && ch != NULL) {
            fc__rescue_state((unsigned)(ch - fc__rt.chunks), FC_RSC_WRITTEN, 0);
            atomic_store(&ch->state, FC__CH_WRITTEN);
        }
    }
    atomic_store(&gate_active, 0);
    pthread_mutex_unlock(&wlock);
    if (err < 0)
        fc__warn(fc__warn_write, strerror(-err));
    return rc;
}

int fc__block_write(uint32_t kind, const void *payload, size_t len, int zlib)
{
    if (zlib && zs_ready && len > 0) {
        /* Only the writer thread compresses: zs and z_buf are its own. */
        if (deflateReset(&zs) == Z_OK) {
            zs.next_in = (Bytef *)payload;
            zs.avail_in = (uInt)len;
            zs.next_out = z_buf;
            zs.avail_out = (uInt)z_cap;
            if (deflate(&zs, Z_FINISH) == Z_STREAM_END && zs.total_out < len)
                return gated_block(kind, FC_BLKF_ZLIB, z_buf, zs.total_out, len, NULL);
        }
    }
    return gated_block(kind, 0, payload, len, len, NULL);
}

/* ---- EVENTS encoding ------------------------------------------------------------------------ */

_Static_assert(offsetof(fc__rec, bytes2) == offsetof(fc__rec, bytes) + 8 &&
                   offsetof(fc__rec, obj) == offsetof(fc__rec, bytes) + 16 &&
                   offsetof(fc__rec, peer) == offsetof(fc__rec, bytes) + 24 &&
                   offsetof(fc__rec, tag) == offsetof(fc__rec, bytes) + 28 &&
                   offsetof(fc__rec, comm) == offsetof(fc__rec, bytes) + 32 &&
                   offsetof(fc__rec, site) == offsetof(fc__rec, bytes) + 36 &&
                   offsetof(fc__rec, kind) == offsetof(fc__rec, bytes) + 40 &&
                   offsetof(fc__rec, flags) == offsetof(fc__rec, bytes) + 42 &&
                   offsetof(fc__rec, reserved) == offsetof(fc__rec, bytes) + 44 && sizeof(fc__rec) == offsetof(fc__rec, bytes) + 48,
               "differing_bytes compares these fields as 48 contiguous bytes");

/* A uvarint, with the cases of one to three bytes (gaps and durations below 2 ms) taken without a
 * loop. */
static inline size_t put_uv(unsigned char *p, uint64_t v)
{
    if (v < 0x80) {
        p[0] = (unsigned char)v;
        return 1;
    }
    if (v < 0x4000) {
        p[0] = (unsigned char)(v | 0x80);
        p[1] = (unsigned char)(v >> 7);
        return 2;
    }
    if (v < 0x200000) {
        p[0] = (unsigned char)(v | 0x80);
        p[1] = (unsigned char)((v >> 7) | 0x80);
        p[2] = (unsigned char)(v >> 14);
        return 3;
    }
    return fc_put_uvarint(p, v);
}

/* The map of fc__ticks_ns as one multiply and one add: ns = (t * mult + add) >> 32, where add folds
 * ns0, tick0 and the rounding half in. For t >= tick0 this is fc__ticks_ns's value exactly: both are
 * floor((ns0 * 2^32 + (t - tick0) * mult + 2^31) / 2^32), ns0 * 2^32 being a multiple of the divisor,
 * and the 128-bit sum wraps to the same bits whatever the sign of add. Below tick0 (times read
 * before the calibration) fc__ticks_ns rounds a tie the other way, so those take it instead. */
typedef struct tick_map {
    uint64_t tick0, mult;
    unsigned __int128 add;
} tick_map;

static inline tick_map tick_map_of(const fc__clock_conv *c)
{
    tick_map m = {c->tick0, c->mult,
                  ((unsigned __int128)c->ns0 << 32) - (unsigned __int128)c->tick0 * c->mult + ((unsigned __int128)1 << 31)};
    return m;
}

static inline uint64_t tick_map_ns(const tick_map *m, uint64_t t)
{
    return (uint64_t)(((unsigned __int128)t * m->mult + m->add) >> 32);
}

/* The bytes in which x differs from last among the 48 from bytes to reserved (bytes, bytes2, obj,
 * peer, tag, comm, site, kind, flags), as bits 0-47: three 16-byte comparisons where SSE2 is, one
 * byte at a time elsewhere. */
#define DIFF_BYTES 0xff
#define DIFF_BYTES2 0xff00
#define DIFF_OBJ 0xff0000
#define DIFF_PEER 0xf000000
#define DIFF_TAG 0xf0000000
#define DIFF_COMM 0xf00000000
#define DIFF_SITE 0xf000000000
#define DIFF_FLAGS 0xc0000000000
static inline uint64_t differing_bytes(const fc__rec *x, const fc__rec *last)
{
    const unsigned char *xa = (const unsigned char *)&x->bytes, *la = (const unsigned char *)&last->bytes;
#ifdef __SSE2__
    uint64_t e0 = (unsigned)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)xa), _mm_loadu_si128((const __m128i *)la)));
    uint64_t e1 = (unsigned)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(xa + 16)), _mm_loadu_si128((const __m128i *)(la + 16))));
    uint64_t e2 = (unsigned)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(xa + 32)), _mm_loadu_si128((const __m128i *)(la + 32))));
    return (e0 | e1 << 16 | e2 << 32) ^ 0xffffffffffff;
#else
    uint64_t d = 0;
    for (unsigned i = 0; i < 48; i++)
        d |= (uint64_t)(xa[i] != la[i]) << i;
    return d;
#endif
}

/* Whether x repeats last in those 48 bytes: differing_bytes with one mask instead of three. */
static inline int same_fields(const fc__rec *x, const fc__rec *last)
{
#ifdef __SSE2__
    const unsigned char *xa = (const unsigned char *)&x->bytes, *la = (const unsigned char *)&last->bytes;
    __m128i e0 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)xa), _mm_loadu_si128((const __m128i *)la));
    __m128i e1 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(xa + 16)), _mm_loadu_si128((const __m128i *)(la + 16)));
    __m128i e2 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(xa + 32)), _mm_loadu_si128((const __m128i *)(la + 32)));
    return _mm_movemask_epi8(_mm_and_si128(_mm_and_si128(e0, e1), e2)) == 0xffff;
#else
    return differing_bytes(x, last) == 0;
#endif
}

/* A field that differs from the previous record's of the kind: its bit in the mask and its value
 * (or difference) after the body's last. */
#define PUT_FIELD(bit, v)                                                                          \
    do {                                                                                           \
        mask |= (bit);                                                                             \
        nb += put_uv(body + nb, (v));                                                              \
    } while (0)

/* The record column's bytes for x against last, the previous record of its kind, which it does not
 * repeat (as fc_event_encode_cols: peer, tag, bytes, obj and bytes2 as zigzagged differences of
 * their 64-bit values, peer and tag sign-extended, comm, site and flags as values; a kind or
 * reserved word that differs alone gives an empty mask). The body is at most 81 bytes, so its
 * length takes one byte. */
static inline unsigned char *put_record(unsigned char *rp, unsigned kind, const fc__rec *x, const fc__rec *last)
{
    uint64_t d = differing_bytes(x, last);
    unsigned char *body = rp + 2;
    size_t nb = 1;
    unsigned mask = 0;
    if (d & DIFF_PEER)
        PUT_FIELD(FC_EVM_PEER, fc__event_delta((uint64_t)(int64_t)x->peer, (uint64_t)(int64_t)last->peer));
    if (d & DIFF_TAG)
        PUT_FIELD(FC_EVM_TAG, fc__event_delta((uint64_t)(int64_t)x->tag, (uint64_t)(int64_t)last->tag));
    if (d & DIFF_COMM)
        PUT_FIELD(FC_EVM_COMM, x->comm);
    if (d & DIFF_BYTES)
        PUT_FIELD(FC_EVM_BYTES, fc__event_delta(x->bytes, last->bytes));
    if (d & DIFF_OBJ)
        PUT_FIELD(FC_EVM_OBJ, fc__event_delta(x->obj, last->obj));
    if (d & DIFF_SITE)
        PUT_FIELD(FC_EVM_SITE, x->site);
    if (d & DIFF_FLAGS)
        PUT_FIELD(FC_EVM_FLAGS, x->flags);
    if (d & DIFF_BYTES2)
        PUT_FIELD(FC_EVM_BYTES2, fc__event_delta(x->bytes2, last->bytes2));
    rp[0] = (unsigned char)kind;
    body[0] = (unsigned char)mask;
    rp[1] = (unsigned char)nb;
    return rp + 2 + nb;
}

/* Encodes a chunk in columns (format.h, EVENTS), writing the bytes fc_event_encode_cols (event.h)
 * writes, straight from the records: each is compared with the previous record of its kind in the
 * chunk as the two lie in memory (bytes, bytes2, obj, peer, tag, comm, site, kind, flags and the
 * reserved word are 48 contiguous bytes of fc__rec), a record that repeats them all (a
 * ping-pong's are all alike but for their times) takes three bytes plus its times, and one that
 * does not has its differing fields written without first being converted into an fc_event.
 * codec is not needed: the previous record of each kind is the codec's state. */
size_t fc__encode_chunk(const fc__rec *r, uint32_t n, uint32_t thread, const fc__clock_conv *conv,
                        fc_event_codec *codec, unsigned char *out, unsigned char *scratch)
{
    (void)codec;
    /* A local copy: the bytes stored below could alias *conv, which would then be read again for
     * every record. */
    const fc__clock_conv cv = *conv;
    const tick_map map = tick_map_of(&cv);
    uint64_t base = n ? fc__ticks_ns(&cv, r[0].t0) : 0;
    size_t len = 0;
    len += fc_put_uvarint(out + len, thread);
    len += fc_put_uvarint(out + len, n);
    len += fc_put_uvarint(out + len, base);
    if (n == 0)
        return len;
    fc_event_cols o = {.rec = out + len + FC_EVENT_COLS_DIR, .gap = scratch,
                       .dur = scratch + (size_t)n * FC_EVENT_COLS_TIME};
    unsigned char *rp = o.rec, *gp = o.gap, *dp = o.dur;
    uint64_t prev0 = base, prev1 = base;
    /* The previous record of each kind: at the chunk's start the zero record, as the decoder's
     * codec starts with every field 0. */
    static const fc__rec zero;
    const fc__rec *lastrec[FC_EV_MAX_];
    for (unsigned k = 0; k < FC_EV_MAX_; k++)
        lastrec[k] = &zero;
    for (uint32_t i = 0; i < n; i++) {
        const fc__rec *x = &r[i];
        unsigned kind = x->kind < FC_EV_MAX_ ? x->kind : FC_EV_MAX_ - 1;
        const fc__rec *last = lastrec[kind];
        lastrec[kind] = x;
        /* t1 below t0 (a TSC read on another core can be a few ticks behind) is stored as t0, and
         * t0 below the previous record's as that one: time does not run backwards inside a chunk.
         * The map does not decrease, so clamping t1 in ticks first gives the same nanoseconds, and
         * leaves t0 the only one to check against tick0. */
        uint64_t u0 = x->t0, u1 = x->t1 < u0 ? u0 : x->t1, t0, t1;
        if (FC__LIKELY(u0 >= map.tick0)) {
            t0 = tick_map_ns(&map, u0);
            t1 = tick_map_ns(&map, u1);
        } else {
            t0 = fc__ticks_ns(&cv, u0);
            t1 = fc__ticks_ns(&cv, u1);
        }
        t0 = t0 < prev0 ? prev0 : t0;
        t1 = t1 < t0 ? t0 : t1;
        if (FC__LIKELY(same_fields(x, last))) {
            rp[0] = (unsigned char)kind;
            rp[1] = 1; /* the length of a body that is an empty mask */
            rp[2] = 0;
            rp += 3;
        } else {
            rp = put_record(rp, kind, x, last);
        }
        /* The gap counts from the previous record's exit (event.h). */
        gp += put_uv(gp, fc_zigzag((int64_t)(t0 - prev1)));
        dp += put_uv(dp, t1 - t0);
        prev0 = t0;
        prev1 = t1;
    }
    o.nrec = (size_t)(rp - o.rec);
    o.ngap = (size_t)(gp - o.gap);
    o.ndur = (size_t)(dp - o.dur);
    return len + fc_event_cols_finish(&o, out + len);
}
#undef PUT_FIELD

/* ---- definitions ---------------------------------------------------------------------------- */

static pthread_mutex_t defs_lock = PTHREAD_MUTEX_INITIALIZER;

void fc__defs_flush(void)
{
    fc__buf mods = {0}, sites = {0}, comms = {0};
    pthread_mutex_lock(&defs_lock);
    uint32_t ns = fc__sites_encode(&mods, &sites, 0);
    uint32_t nc = fc__comms_encode(&comms);
    int ok = !mods.failed && !sites.failed && !comms.failed;
    if (ok && mods.len)
        ok = fc__block_write(FC_BLK_MODULES, mods.p, mods.len, 0) == 0;
    if (ok && sites.len)
        ok = fc__block_write(FC_BLK_SITES, sites.p, sites.len, 0) == 0;
    if (ok)
        fc__sites_mark_written(ns);
    if (ok && comms.len)
        ok = fc__block_write(FC_BLK_COMMS, comms.p, comms.len, 0) == 0;
    if (ok)
        fc__comms_mark_written(nc);
    pthread_mutex_unlock(&defs_lock);
    free(mods.p);
    free(sites.p);
    free(comms.p);
}

/* ---- the writer thread ---------------------------------------------------------------------- */


/* in[0..n) as one zlib stream in z_buf by igzip at level 1; its length, or 0 when it does not
 * fit in z_buf. */
static size_t isal_compress(unsigned char *in, size_t n)
{
    struct isal_zstream s;
    isal_deflate_stateless_init(&s);
    s.next_in = in;
    s.avail_in = (uint32_t)n;
    s.next_out = z_buf;
    s.avail_out = (uint32_t)z_cap;
    s.level = 1;
    s.level_buf = isal_buf;
    s.level_buf_size = ISAL_BUF_BYTES;
    s.gzip_flag = IGZIP_ZLIB;
    s.end_of_stream = 1;
    s.flush = NO_FLUSH;
    if (isal_deflate_stateless(&s) != COMP_OK)
        return 0;
    return s.total_out;
}

static void write_chunk(fc__chunk *ch, int backlog)
{
    fc__defs_flush(); /* definitions first: the chunk's records may refer to new ones */
    size_t raw = fc__encode_chunk(ch->recs, ch->count, ch->thread, &fc__conv, &wcodec, enc_buf, enc_scratch);
    int rc = -1;
    uint32_t flags = 0;
    const unsigned char *stored = enc_buf;
    size_t stored_len = raw;
    /* When a quarter of the pool waits behind this chunk the application is about to block on
     * the writer: trade bytes for speed (level 1) until the backlog clears. */
    int level = backlog > (int)fc__rt.nchunks / 4 && fc__zlevel > 1 ? 1 : fc__zlevel;
    if (level == 1 && isal_buf != NULL) {
        size_t z = isal_compress(enc_buf, raw);
        if (z > 0 && z < raw) {
            flags = FC_BLKF_ZLIB;
            stored = z_buf;
            stored_len = z;
        }
    } else if (level == fc__zlevel && ldc != NULL) {
        size_t z = libdeflate_zlib_compress(ldc, enc_buf, raw, z_buf, z_cap);
        if (z > 0 && z < raw) {
            flags = FC_BLKF_ZLIB;
            stored = z_buf;
            stored_len = z;
        }
    } else if (zs_ready && deflateReset(&zs) == Z_OK &&
               deflateParams(&zs, level, Z_DEFAULT_STRATEGY) == Z_OK) {
        zs.next_in = enc_buf;
        zs.avail_in = (uInt)raw;
        zs.next_out = z_buf;
        zs.avail_out = (uInt)z_cap;
        if (deflate(&zs, Z_FINISH) == Z_STREAM_END && zs.total_out < raw) {
            flags = FC_BLKF_ZLIB;
            stored = z_buf;
            stored_len = zs.total_out;
        }
    }
    rc = gated_block(FC_BLK_EVENTS, flags, stored, stored_len, raw, ch);
    if (rc == 0)
        atomic_fetch_add(&fc__rt.events, ch->count);
    else
        atomic_fetch_add(&fc__rt.dropped, ch->count);
}

/* Whether the writer should write the chunk at the head of the queue now (fc__rt.lock held).
 * By default every full chunk is written at once. With FLOWCUT_WRITE_AT the writer leaves full
 * chunks in memory until that share of the pool is in use, then drains the queue: a run whose
 * events fit in that share is compressed only at its end, and its loops never share a core with
 * the writer. A thread waiting for a free chunk always gets one written. */
static int must_write(int draining)
{
    if (fc__rt.qlen == 0)
        return 0;
    if (draining || fc__rt.write_at == 0 || fc__rt.writer_stop || fc__rt.nfree == 0)
        return 1;
    uint64_t used = fc__rt.nchunks - fc__rt.nfree;
    return used * 100u >= (uint64_t)fc__rt.write_at * fc__rt.nchunks;
}

static void *writer_main(void *arg)
{
    (void)arg;
    int draining = 0;
    pthread_mutex_lock(&fc__rt.lock);
    for (;;) {
        while (!must_write(draining) && !fc__rt.writer_stop) {
            draining = 0;
            pthread_cond_wait(&fc__rt.cv_full, &fc__rt.lock);
        }
        if (fc__rt.qlen == 0)
            break;
        draining = 1;
        fc__chunk *ch = &fc__rt.chunks[fc__rt.queue[fc__rt.qhead]];
        fc__rt.qhead = (fc__rt.qhead + 1) % fc__rt.qcap;
        fc__rt.qlen--;
        fc__rescue_state((unsigned)(ch - fc__rt.chunks), FC_RSC_WRITING, 0);
        atomic_store(&ch->state, FC__CH_WRITING);
        atomic_store(&fc__rt.writer_cur, ch);
        int backlog = (int)fc__rt.qlen;
        pthread_mutex_unlock(&fc__rt.lock);
        write_chunk(ch, backlog);
        pthread_mutex_lock(&fc__rt.lock);
        fc__rescue_state((unsigned)(ch - fc__rt.chunks), FC_RSC_FREE, 0);
        atomic_store(&ch->state, FC__CH_FREE);
        atomic_store(&fc__rt.writer_cur, NULL);
        fc__rt.freel[fc__rt.nfree++] = (unsigned)(ch - fc__rt.chunks);
        pthread_cond_broadcast(&fc__rt.cv_free);
    }
    struct timespec cpu;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
        fc__rt.writer_cpu_ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
    fc__rt.writer_running = 0;
    pthread_cond_broadcast(&fc__rt.cv_free);
    pthread_mutex_unlock(&fc__rt.lock);
    return NULL;
}

int fc__writer_start(void)
{
    size_t raw = fc__events_bound(fc__rt.chunk_cap);
    enc_buf = malloc(raw);
    sig_enc = malloc(raw);
    enc_scratch = malloc(fc__events_scratch(fc__rt.chunk_cap));
    sig_scratch = malloc(fc__events_scratch(fc__rt.chunk_cap));
    z_cap = compressBound((uLong)raw);
    z_buf = malloc(z_cap);
    sig_mods = malloc(SIG_DEF_BYTES);
    sig_sites = malloc(SIG_DEF_BYTES);
    sig_comms = malloc(SIG_DEF_BYTES);
    if (!enc_buf || !sig_enc || !enc_scratch || !sig_scratch || !z_buf || !sig_mods || !sig_sites || !sig_comms)
        return -ENOMEM;
    /* memLevel 6 instead of zlib's 8: a 16 KiB hash table instead of 64 KiB, which deflateReset
     * clears for every chunk; zlib compresses the definitions, and the chunks only when igzip's or
     * libdeflate's memory could not be had. */
    zs_ready = deflateInit2(&zs, fc__zlevel, Z_DEFLATED, 15, 6, Z_DEFAULT_STRATEGY) == Z_OK;
    /* Without them (no memory), zlib compresses at the same level. */
    ldc = fc__zlevel > 1 ? libdeflate_alloc_compressor(fc__zlevel) : NULL;
    isal_buf = fc__zlevel > 0 ? malloc(ISAL_BUF_BYTES) : NULL;
    /* The writer takes no asynchronous signal: SIGTERM and SIGINT must reach an application
     * thread, whose handler then flushes while the writer is parked at the gate. */
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    fc__rt.writer_running = 1;
    int rc = pthread_create(&fc__rt.writer, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        fc__rt.writer_running = 0;
        return -rc;
    }
    return 0;
}

void fc__writer_stop(void)
{
    pthread_mutex_lock(&fc__rt.lock);
    int running = fc__rt.writer_running;
    fc__rt.writer_stop = 1;
    pthread_cond_broadcast(&fc__rt.cv_full);
    pthread_mutex_unlock(&fc__rt.lock);
    if (running)
        pthread_join(fc__rt.writer, NULL);
}

static size_t end_payload(unsigned char *p, unsigned reason, int partial)
{
    size_t n = 0;
    n += fc_put_uvarint(p + n, atomic_load(&fc__rt.events));
    n += fc_put_uvarint(p + n, partial ? FC_ENDF_PARTIAL : 0);
    n += fc_put_uvarint(p + n, reason);
    n += fc_put_uvarint(p + n, fc__now_ns());
    n += fc_put_uvarint(p + n, atomic_load(&fc__rt.dropped));
    n += fc_put_uvarint(p + n, atomic_load(&fc__warnings));
    return n;
}

void fc__file_close(unsigned reason, int partial)
{
    unsigned char p[64];
    if (write_failed)
        partial = 1;
    size_t n = end_payload(p, reason, partial);
    /* With END on disk the rank file is whole (or as whole as it will be): no reader needs the
     * rescue buffer any more. */
    if (gated_block(FC_BLK_END, 0, p, n, n, NULL) == 0)
        fc__rescue_remove();
    pthread_mutex_lock(&wlock);
    if (fd >= 0 && !atomic_load(&gate_sig)) {
        close(fd);
        fd = -1;
    }
    fc__rt.open = 0;
    pthread_mutex_unlock(&wlock);
}

/* ---- fatal signals -------------------------------------------------------------------------- */

static void sig_chunk(fc__chunk *ch, uint32_t count, uint32_t thread)
{
    if (count == 0 || count > fc__rt.chunk_cap)
        return;
    size_t raw = fc__encode_chunk(ch->recs, count, thread, &fc__conv, &scodec, sig_enc, sig_scratch);
    fc__rescue_block((unsigned)(ch - fc__rt.chunks), next_seq, count);
    if (put_block(FC_BLK_EVENTS, 0, sig_enc, raw, raw) == 0)
        atomic_fetch_add(&fc__rt.events, count);
}

void fc__emergency_flush(unsigned reason, int quick)
{
    if (!fc__rt.open || fd < 0 || sig_enc == NULL)
        return;
    atomic_store(&gate_sig, 1);
    quick = quick && fc__rescue_holds(fc__rt.nchunks);
    /* Wait (at most 2 s) for a normal writer to leave the gate, unless that writer is this very
     * thread, interrupted in the middle of its write. A quick flush does not wait: a launcher
     * that sends SIGTERM sends SIGKILL soon after, and the rescue file keeps the records. */
    long me = my_tid();
    for (int i = 0; !quick && i < 2000 && atomic_load(&gate_active) && atomic_load(&gate_tid) != me; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (write_failed || (quick && atomic_load(&gate_active) && atomic_load(&gate_tid) != me))
        return;
    fc__buf mods = {sig_mods, 0, SIG_DEF_BYTES, 0, 1}, sites = {sig_sites, 0, SIG_DEF_BYTES, 0, 1};
    fc__buf comms = {sig_comms, 0, SIG_DEF_BYTES, 0, 1};
    fc__sites_encode(&mods, &sites, 1);
    fc__comms_encode(&comms);
    if (mods.len && !mods.failed)
        put_block(FC_BLK_MODULES, 0, mods.p, mods.len, mods.len);
    if (sites.len && !sites.failed)
        put_block(FC_BLK_SITES, 0, sites.p, sites.len, sites.len);
    if (comms.len && !comms.failed)
        put_block(FC_BLK_COMMS, 0, comms.p, comms.len, comms.len);
    if (quick) {
        fc__rt.open = 0;
        return;
    }
    /* Queued chunks and the one the writer held but did not write, oldest first, so that each
     * thread's chunks stay in order; then every thread's partial chunk, the newest of all. */
    uint64_t done = 0;
    for (;;) {
        fc__chunk *best = NULL;
        for (unsigned i = 0; i < fc__rt.nchunks; i++) {
            fc__chunk *c = &fc__rt.chunks[i];
            int st = atomic_load(&c->state);
            if ((st == FC__CH_QUEUED || st == FC__CH_WRITING) && c->fill_seq >= done &&
                (best == NULL || c->fill_seq < best->fill_seq))
                best = c;
        }
        if (best == NULL)
            break;
        sig_chunk(best, best->count, best->thread);
        done = best->fill_seq + 1;
    }
    for (unsigned i = 0; fc__rt.slots && i < FC__MAX_THREADS; i++) {
        fc__tslot *s = &fc__rt.slots[i];
        fc__chunk *ch = s->ch;
        if (ch != NULL && s->t.cur >= ch->recs && s->t.cur <= ch->recs + fc__rt.chunk_cap)
            sig_chunk(ch, fc__slot_wait(s, (uint32_t)(s->t.cur - ch->recs)), s->t.number);
    }
    unsigned char p[64];
    size_t n = end_payload(p, reason, 1);
    if (put_block(FC_BLK_END, 0, p, n, n) == 0)
        fc__rescue_remove();
    fc__rt.open = 0;
}
