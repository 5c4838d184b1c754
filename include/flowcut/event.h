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

/* Per-chunk coding state: the previous t0 and the last record of each kind. Reset it (memset to 0
 * and set prev_t0 to the chunk's base_ns) at the start of each chunk, on both sides. */
typedef struct fc_event_codec {
    uint64_t prev_t0;
    fc_event last[FC_EV_MAX_];
} fc_event_codec;

static inline void fc_event_codec_reset(fc_event_codec *c, uint64_t base_ns)
{
    memset(c, 0, sizeof *c);
    c->prev_t0 = base_ns;
}

/* Encodes ev at out (room for FC_EVENT_MAX_ENCODED bytes) and returns the bytes written.
 * ev->t0 must not be below the previous record's t0 and ev->kind must be below FC_EV_MAX_. */
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
    *last = *ev;
    return 2 + n;
}

/* Decodes one record from [*p, end) into ev (thread is left as it was) and advances *p past it.
 * Returns 0, or -1 when the record is cut short or malformed (then *p is unchanged).
 * A record of an unknown kind decodes like any other: readers ignore kinds they do not know. */
static inline int fc_event_decode(fc_event_codec *c, const unsigned char **p, const unsigned char *end,
                                  fc_event *ev)
{
    const unsigned char *q = *p;
    uint64_t len, v, dt, dur;
    if (q >= end)
        return -1;
    unsigned kind = *q++;
    if (kind >= FC_EV_MAX_ || fc_get_uvarint(&q, end, &len) < 0 || len < 1 ||
        len > (uint64_t)(end - q))
        return -1;
    const unsigned char *bend = q + len;
    unsigned mask = *q++;
    fc_event *last = &c->last[kind];
    fc_event e = *last;
    if (fc_get_uvarint(&q, bend, &dt) < 0 || fc_get_uvarint(&q, bend, &dur) < 0)
        return -1;
    e.kind = kind;
    e.t0 = c->prev_t0 + dt;
    e.t1 = e.t0 + dur;
#define FC__FIELD(bit, expr)                                                                       \
    if (mask & (bit)) {                                                                            \
        if (fc_get_uvarint(&q, bend, &v) < 0)                                                      \
            return -1;                                                                             \
        expr;                                                                                      \
    }
    FC__FIELD(FC_EVM_PEER, e.peer = fc_unzigzag(v))
    FC__FIELD(FC_EVM_TAG, e.tag = fc_unzigzag(v))
    FC__FIELD(FC_EVM_COMM, e.comm = v)
    FC__FIELD(FC_EVM_BYTES, e.bytes = v)
    FC__FIELD(FC_EVM_OBJ, e.obj = v)
    FC__FIELD(FC_EVM_SITE, e.site = v)
    FC__FIELD(FC_EVM_FLAGS, e.flags = v)
    FC__FIELD(FC_EVM_BYTES2, e.bytes2 = v)
#undef FC__FIELD
    e.thread = ev->thread;
    *last = e;
    c->prev_t0 = e.t0;
    *ev = e;
    *p = bend; /* body bytes past the known fields belong to a newer minor version */
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
