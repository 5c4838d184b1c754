/* flowcut/event.h: one event in memory, and its encoding inside an EVENTS block (format.h).
 *
 * The encoder and decoder live here, header-only, so that the tracer and the readers share one
 * implementation of the record layout and cannot drift apart. */
#ifndef FLOWCUT_EVENT_H
#define FLOWCUT_EVENT_H

#include <flowcut/format.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An event as readers see it. Field meanings are given in format.h (EVENTS block). */
typedef struct fc_event {
    uint32_t kind;   /* FC_EV_* */
    uint32_t thread; /* thread number within the rank */
    uint64_t t0, t1; /* entry and exit, ns of the rank's event clock */
    int64_t peer;    /* comm-local rank, root, or FC_PEER_* */
    int64_t tag;     /* tag or FC_TAG_ANY */
    uint64_t comm;   /* comm_id */
    uint64_t bytes;
    uint64_t obj;    /* request handle or new comm_id + 1 */
    uint64_t site;   /* call-site id, 0 for none */
    uint64_t flags;  /* FC_EVF_* */
    uint64_t bytes2;
} fc_event;

/* Most bytes one encoded record takes: kind, length, mask, dt, dur and eight fields. */
#define FC_EVENT_MAX_ENCODED (1 + 2 + 1 + 10 * 10)

/* Per-chunk coding state: the previous record's times, the last record of each kind and, for a
 * chunk in columns (format.h, EVENTS, format 2), where its time columns are. Reset it (memset to 0
 * and set prev_t0 and prev_t1 to the chunk's base_ns) at the start of each chunk, on both sides:
 * fc_event_codec_reset does exactly that. The decoder tells the two layouts apart by the chunk's
 * first byte, so one codec reads format 1 and format 2 files alike. */
typedef struct fc_event_codec {
    uint64_t prev_t0, prev_t1; /* prev_t0 is for rows: in columns the decoder may leave it behind */
    int cols;                        /* decoder: 0 before the first record, 1 rows, 2 columns */
    const unsigned char *gap, *gend; /* decoder, columns: next gap and end of the gap column */
    const unsigned char *dur, *dend; /* decoder, columns: next duration and end of the chunk */
    const unsigned char *rend;       /* decoder, columns: end of the record column */
    fc_event last[FC_EV_MAX_];
} fc_event_codec;

static inline void fc_event_codec_reset(fc_event_codec *c, uint64_t base_ns)
{
    memset(c, 0, sizeof *c);
    c->prev_t0 = base_ns;
    c->prev_t1 = base_ns;
}

/* Encodes ev as a row (format.h, EVENTS: a chunk in rows, the layout of format 1) at out (room
 * for FC_EVENT_MAX_ENCODED bytes) and returns the bytes written. ev->t0 must not be below the
 * previous record's t0 and ev->kind must be below FC_EV_MAX_. Every reader reads rows; the
 * tracer writes columns (below), which compress better. */
static inline size_t fc_event_encode(fc_event_codec *c, const fc_event *ev, unsigned char *out)
{
    fc_event *last = &c->last[ev->kind & (FC_EV_MAX_ - 1)];
    /* The body is at most 1 + 10 uvarints of 10 bytes = 101 bytes, so its length always fits in a
     * one-byte uvarint: write the body in place after it, with no copy. */
    unsigned char *body = out + 2;
    size_t n = 1; /* body[0] is the mask, filled in below */
    unsigned mask = 0;
    n += fc_put_uvarint(body + n, ev->t0 - c->prev_t0);
    n += fc_put_uvarint(body + n, ev->t1 - ev->t0);
    if (ev->peer != last->peer) {
        mask |= FC_EVM_PEER;
        n += fc_put_uvarint(body + n, fc_zigzag(ev->peer));
    }
    if (ev->tag != last->tag) {
        mask |= FC_EVM_TAG;
        n += fc_put_uvarint(body + n, fc_zigzag(ev->tag));
    }
    if (ev->comm != last->comm) {
        mask |= FC_EVM_COMM;
        n += fc_put_uvarint(body + n, ev->comm);
    }
    if (ev->bytes != last->bytes) {
        mask |= FC_EVM_BYTES;
        n += fc_put_uvarint(body + n, ev->bytes);
    }
    if (ev->obj != last->obj) {
        mask |= FC_EVM_OBJ;
        n += fc_put_uvarint(body + n, ev->obj);
    }
    if (ev->site != last->site) {
        mask |= FC_EVM_SITE;
        n += fc_put_uvarint(body + n, ev->site);
    }
    if (ev->flags != last->flags) {
        mask |= FC_EVM_FLAGS;
        n += fc_put_uvarint(body + n, ev->flags);
    }
    if (ev->bytes2 != last->bytes2) {
        mask |= FC_EVM_BYTES2;
        n += fc_put_uvarint(body + n, ev->bytes2);
    }
    body[0] = (unsigned char)mask;
    out[0] = (unsigned char)ev->kind;
    out[1] = (unsigned char)n; /* n <= 101 < 0x80: a one-byte uvarint */
    c->prev_t0 = ev->t0;
    c->prev_t1 = ev->t1;
    *last = *ev;
    return 2 + n;
}

/* ---- format 2: chunks in columns --------------------------------------------------------------
 * The tracer writes each chunk as three columns (format.h, EVENTS): the records without their
 * times, then one gap per record, then one duration per record. Timing noise is what does not
 * compress; kept apart from the regular part, it no longer breaks zlib's matches over the records.
 * Usage: point rec at out + FC_EVENT_COLS_DIR, gap and dur at scratch of FC_EVENT_COLS_TIME bytes a
 * record each, call fc_event_encode_cols for each record, then fc_event_cols_finish(o, out). */
#define FC_EVENT_COLS_MARK 0xffu /* first byte of a chunk in columns: no record kind has it */
#define FC_EVENT_COLS_DIR 9      /* the mark, u32 record column length, u32 gap column length */
#define FC_EVENT_COLS_TIME 10    /* most bytes of one gap or one duration */

typedef struct fc_event_cols {
    unsigned char *rec, *gap, *dur; /* where the columns are written (set by the caller) */
    size_t nrec, ngap, ndur;        /* bytes written to each (0 at the start of a chunk) */
} fc_event_cols;

/* Signed difference of two field values, wrapping, as a uvarint-ready zigzag. */
static inline uint64_t fc__event_delta(uint64_t v, uint64_t last)
{
    return fc_zigzag((int64_t)(v - last));
}

/* Appends ev to the columns of o. ev->kind must be below FC_EV_MAX_. */
static inline void fc_event_encode_cols(fc_event_codec *c, const fc_event *ev, fc_event_cols *o)
{
    fc_event *last = &c->last[ev->kind & (FC_EV_MAX_ - 1)];
    unsigned char *out = o->rec + o->nrec, *body = out + 2;
    size_t n = 1;
    unsigned mask = 0;
    /* Numbers that count (peer, tag, bytes, requests) are stored as the difference to the previous
     * record of the kind: a tag or a size that grows by a step costs one repeated byte. */
    if (ev->peer != last->peer) {
        mask |= FC_EVM_PEER;
        n += fc_put_uvarint(body + n, fc__event_delta((uint64_t)ev->peer, (uint64_t)last->peer));
    }
    if (ev->tag != last->tag) {
        mask |= FC_EVM_TAG;
        n += fc_put_uvarint(body + n, fc__event_delta((uint64_t)ev->tag, (uint64_t)last->tag));
    }
    if (ev->comm != last->comm) {
        mask |= FC_EVM_COMM;
        n += fc_put_uvarint(body + n, ev->comm);
    }
    if (ev->bytes != last->bytes) {
        mask |= FC_EVM_BYTES;
        n += fc_put_uvarint(body + n, fc__event_delta(ev->bytes, last->bytes));
    }
    if (ev->obj != last->obj) {
        mask |= FC_EVM_OBJ;
        n += fc_put_uvarint(body + n, fc__event_delta(ev->obj, last->obj));
    }
    if (ev->site != last->site) {
        mask |= FC_EVM_SITE;
        n += fc_put_uvarint(body + n, ev->site);
    }
    if (ev->flags != last->flags) {
        mask |= FC_EVM_FLAGS;
        n += fc_put_uvarint(body + n, ev->flags);
    }
    if (ev->bytes2 != last->bytes2) {
        mask |= FC_EVM_BYTES2;
        n += fc_put_uvarint(body + n, fc__event_delta(ev->bytes2, last->bytes2));
    }
    body[0] = (unsigned char)mask;
    out[0] = (unsigned char)ev->kind;
    out[1] = (unsigned char)n; /* n <= 81 < 0x80: a one-byte uvarint */
    o->nrec += 2 + n;
    /* The gap counts from the previous record's exit, not its entry: the time spent inside MPI,
     * the irregular part, is then stored once (as the duration) instead of twice. */
    o->ngap += fc_put_uvarint(o->gap + o->ngap, fc_zigzag((int64_t)(ev->t0 - c->prev_t1)));
    o->ndur += fc_put_uvarint(o->dur + o->ndur, ev->t1 - ev->t0);
    c->prev_t0 = ev->t0;
    c->prev_t1 = ev->t1;
    *last = *ev;
}

/* Writes the directory at out and the time columns after the record column, which is already at
 * out + FC_EVENT_COLS_DIR; returns the bytes of the whole (0 for a chunk without records). */
static inline size_t fc_event_cols_finish(const fc_event_cols *o, unsigned char *out)
{
    if (o->nrec == 0)
        return 0;
    out[0] = FC_EVENT_COLS_MARK;
    fc_put_u32(out + 1, (uint32_t)o->nrec);
    fc_put_u32(out + 5, (uint32_t)o->ngap);
    unsigned char *t = out + FC_EVENT_COLS_DIR + o->nrec;
    memcpy(t, o->gap, o->ngap);
    memcpy(t + o->ngap, o->dur, o->ndur);
    return FC_EVENT_COLS_DIR + o->nrec + o->ngap + o->ndur;
}

/* Most bytes a record of a chunk in columns can span in its record column: kind, a length of up
 * to 10 bytes, mask and eight values of up to 10 bytes each. */
#define FC__EVENT_COLS_REC_MAX (1 + 10 + 1 + 8 * 10)

/* fc_event_decode_ref's work. With checked 0 the caller has made sure that no value can run past
 * its column whatever the bytes say (see there), and the value reads skip their end checks. With
 * undo 0, a record that fails may leave c half updated (its times, its column positions, its
 * kind's entry of c->last), where fc_event_decode_ref leaves it unchanged: for a caller that
 * reads nothing more with c after a failure. With checked and undo constants, the compiler keeps
 * only the tests that apply. */
static inline __attribute__((always_inline)) const fc_event *
fc__event_decode(fc_event_codec *c, const unsigned char **p, const unsigned char *end, int checked, int undo)
{
/* A value at *pp, in a column that ends at lim. Unchecked, ten bytes stand in for the column. */
#define FC__GET(pp, lim, out)                                                                      \
    (checked ? fc_get_uvarint(pp, lim, out) : fc__get_uvarint_unchecked(pp, out))
    const unsigned char *q = *p, *rend = end;
    const unsigned char *g = c->gap, *gend = c->gend, *d = c->dur, *dend = c->dend;
    uint64_t len, dt, dur, v;
    int cols = checked ? c->cols : 2;
    if (cols == 2) {
        rend = c->rend;
    } else if (cols == 0) {
        cols = 1;
        if (q < end && *q == FC_EVENT_COLS_MARK) {
            if (end - q < FC_EVENT_COLS_DIR)
                return NULL;
            uint64_t rl = fc_get_u32(q + 1), gl = fc_get_u32(q + 5);
            q += FC_EVENT_COLS_DIR;
            if (rl > (uint64_t)(end - q) || gl > (uint64_t)(end - q) - rl)
                return NULL;
            rend = q + rl;
            g = rend;
            gend = d = rend + gl;
            dend = end;
            cols = 2;
        }
    }
    if (checked && q >= rend) /* unchecked, the record column goes on past q */
        return NULL;
    unsigned kind = *q++;
    /* Marked rare, which lays the decoding out in one line. */
    if (__builtin_expect(kind >= FC_EV_MAX_ || FC__GET(&q, rend, &len) < 0 || len < 1 ||
                             len > (uint64_t)(rend - q),
                         0))
        return NULL;
    const unsigned char *bend = q + len;
    unsigned mask = *q++;
    /* Values are read up to the end of their column rather than of their record (or, for a gap,
     * up to the end of the duration column that follows the gaps): with more bytes at hand,
     * fc_get_uvarint reads a long value at once. A value that runs past its record or column is
     * refused all the same, by the checks on q and g below. */
    uint64_t t0;
    if (cols == 1) {
        if (FC__GET(&q, rend, &dt) < 0 || FC__GET(&q, rend, &dur) < 0)
            return NULL;
        t0 = c->prev_t0 + dt;
    } else {
        int64_t gap;
        if (checked) {
            if (FC__GET(&g, dend, &dt) < 0)
                return NULL;
            gap = fc_unzigzag(dt);
        } else if (fc__get_svarint_unchecked(&g, &gap) < 0) {
            return NULL;
        }
        if (g > gend || FC__GET(&d, dend, &dur) < 0)
            return NULL;
        t0 = c->prev_t1 + (uint64_t)gap;
    }
    /* The fields are decoded in place, into the kind's last record; a copy of it taken first puts
     * it back when the record turns out cut short, so that c is then as it was. Format 1 stores
     * the values, format 2 the differences to the last record for peer, tag, bytes, obj and
     * bytes2 (and peer and tag are zigzagged in both). */
    fc_event *e = &c->last[kind];
#if defined(__GNUC__)
    /* Opaque to the compiler, e is kept whole: gcc 12 otherwise keeps kind and works out
     * c->last + kind * sizeof *e anew at each field, two instructions a field. */
    __asm__("" : "+r"(e));
#endif
    /* Without undo, what does not depend on the fields is stored at once, which frees registers
     * for the fields; and with no copy to save, a record without fields takes the same way, one
     * test less. */
    if (!undo) {
        e->kind = kind;
        e->t0 = t0;
        if (checked) /* unchecked records are in columns, where prev_t0 is not read */
            c->prev_t0 = t0;
        e->t1 = c->prev_t1 = t0 + dur;
        c->gap = g;
        c->dur = d;
    }
    if (!undo || mask != 0) {
        fc_event saved;
        if (undo)
            saved = *e;
#define FC__FIELD(bit, expr)                                                                       \
    if (mask & (bit)) {                                                                            \
        if (FC__GET(&q, rend, &v) < 0)                                                             \
            goto cut;                                                                              \
        expr;                                                                                      \
    }
/* A difference to the field's last value (columns, and so every unchecked record): read with
 * fc__get_svarint_unchecked where it can be. */
#define FC__DELTA(bit, field, type)                                                                \
    if (mask & (bit)) {                                                                            \
        if (checked) {                                                                             \
            if (FC__GET(&q, rend, &v) < 0)                                                         \
                goto cut;                                                                          \
            sv = fc_unzigzag(v);                                                                   \
        } else if (fc__get_svarint_unchecked(&q, &sv) < 0) {                                       \
            goto cut;                                                                              \
        }                                                                                          \
        e->field = (type)((uint64_t)e->field + (uint64_t)sv);                                      \
    }
        if (cols == 2) {
            int64_t sv;
            FC__DELTA(FC_EVM_PEER, peer, int64_t)
            FC__DELTA(FC_EVM_TAG, tag, int64_t)
            FC__FIELD(FC_EVM_COMM, e->comm = v)
            FC__DELTA(FC_EVM_BYTES, bytes, uint64_t)
            FC__DELTA(FC_EVM_OBJ, obj, uint64_t)
            FC__FIELD(FC_EVM_SITE, e->site = v)
            FC__FIELD(FC_EVM_FLAGS, e->flags = v)
            FC__DELTA(FC_EVM_BYTES2, bytes2, uint64_t)
        } else {
            FC__FIELD(FC_EVM_PEER, e->peer = fc_unzigzag(v))
            FC__FIELD(FC_EVM_TAG, e->tag = fc_unzigzag(v))
            FC__FIELD(FC_EVM_COMM, e->comm = v)
            FC__FIELD(FC_EVM_BYTES, e->bytes = v)
            FC__FIELD(FC_EVM_OBJ, e->obj = v)
            FC__FIELD(FC_EVM_SITE, e->site = v)
            FC__FIELD(FC_EVM_FLAGS, e->flags = v)
            FC__FIELD(FC_EVM_BYTES2, e->bytes2 = v)
        }
#undef FC__DELTA
#undef FC__FIELD
        if (q > bend) {
        cut:
            if (undo)
                *e = saved;
            return NULL;
        }
    } else if (q > bend) {
        return NULL;
    }
#undef FC__GET
    if (undo) {
        e->kind = kind;
        e->t0 = t0;
        e->t1 = t0 + dur;
        c->prev_t0 = e->t0;
        c->prev_t1 = e->t1;
        c->gap = g;
        c->dur = d;
    }
    /* The chunk's first record (read checked): where its columns are is known now. */
    if (checked && c->cols == 0) {
        c->cols = cols;
        c->gend = gend;
        c->dend = dend;
        c->rend = rend;
    }
    /* Body bytes past the known fields belong to a newer minor version: skipped. Unchecked and
     * without undo (a reader that counts the records of a chunk, as the cursor does), *p stays
     * at the end of the record column after the last one: a record read from there fails all
     * the same as from the end of the chunk. */
    *p = (checked || undo) && cols == 2 && bend == rend ? dend : bend;
    return e;
}

/* 1 when the record at p can be decoded with checked 0 (fc__event_decode). Inside a chunk in
 * columns, away from the ends of its record and duration columns (the gaps, before the
 * durations, are away from it too), no value of the record can run past its column, however
 * damaged: the reads need no end checks. Readers that inline the decoding of the common case
 * test this first, as fc_event_decode_ref does; the analyzer's cursor tests the same against
 * limits it sets once per chunk (set_safe in analyzer/cursor.c), which must stay equivalent. */
static inline int fc__event_unchecked(const fc_event_codec *c, const unsigned char *p)
{
    return c->cols == 2 && c->rend - p >= FC__EVENT_COLS_REC_MAX && c->dend - c->dur >= 10;
}

/* Decodes one record from [*p, end) and advances *p past it. Returns the record, held in c (its
 * thread field is not set) and valid until the next call with c, or NULL when the record is cut
 * short or malformed (then *p and c are unchanged). Reads both layouts: rows (format 1,
 * fc_event_encode) and columns (format 2); in columns, *p moves to end once the last record is
 * read, so that a whole chunk reads as consumed. A record of an unknown kind decodes like any
 * other: readers ignore kinds they do not know. Readers that keep records use fc_event_decode. */
static inline const fc_event *fc_event_decode_ref(fc_event_codec *c, const unsigned char **p,
                                                  const unsigned char *end)
{
    if (fc__event_unchecked(c, *p))
        return fc__event_decode(c, p, end, 0, 1);
    return fc__event_decode(c, p, end, 1, 1);
}

/* Decodes one record from [*p, end) into ev (thread is left as it was) and advances *p past it.
 * Returns 0, or -1 when the record is cut short or malformed (then *p and c are unchanged).
 * Otherwise as fc_event_decode_ref. */
static inline int fc_event_decode(fc_event_codec *c, const unsigned char **p, const unsigned char *end,
                                  fc_event *ev)
{
    const fc_event *e = fc_event_decode_ref(c, p, end);
    if (e == NULL)
        return -1;
    uint32_t thread = ev->thread;
    *ev = *e;
    ev->thread = thread;
    return 0;
}

/* Returns the name of an event kind ("MPI_Send", "COMPLETE"), or NULL for an unknown kind. */
static inline const char *fc_event_kind_name(unsigned kind)
{
    switch (kind) {
#define FC__X(name, num, cls)                                                                      \
    case num:                                                                                      \
        return #name;
        FC_EVENT_KINDS(FC__X)
#undef FC__X
    default:
        return NULL;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* FLOWCUT_EVENT_H */
