/* libtrace/poll.c: folds runs of polls that found nothing into one record and a POLLS sub-record
 * (format.h), so that a loop that polls MPI_Test, MPI_Testany, MPI_Testsome, MPI_Testall,
 * MPI_Iprobe or MPI_Improbe thousands of times between completions costs the trace two records.
 *
 * The run lives in the thread's current chunk: its first call's record at t->run and, from the
 * second call on, the POLLS record right after it, which each further call of the run updates in
 * place. A run ends when the thread records anything else (its next record is then not at
 * t->run + 2) or starts a new chunk (fc__chunk_full clears t->run): no state is kept outside the
 * records, and a chunk handed to the writer is never touched again. */
#include "record.h"
#include "runtime.h"

#include <string.h>

/* Nanoseconds between two ticks of the event clock, the long way. */
static __attribute__((noinline)) uint64_t span_ns_slow(uint64_t t0, uint64_t t1)
{
    uint64_t a = fc__ticks_ns(&fc__conv, t0), b = fc__ticks_ns(&fc__conv, t1);
    return b > a ? b - a : 0;
}

/* The same: a poll lasts well under a second, so the product fits in 64 bits and the common case
 * takes one multiplication; the writer converts t0 and t1 apart, so the two may differ by a
 * nanosecond. */
static inline uint64_t span_ns(uint64_t t0, uint64_t t1)
{
    uint64_t d = t1 - t0;
    if (FC__LIKELY(t1 >= t0 && d < (1ull << 30) && fc__conv.mult < (1ull << 34)))
        return (d * fc__conv.mult + (1ull << 31)) >> 32;
    return span_ns_slow(t0, t1);
}

/* The 8 bytes at p, whatever their types. */
static inline uint64_t ld64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Whether two records are the same call but for their times: bytes, bytes2, obj, peer, tag, comm
 * and site are 40 contiguous bytes of fc__rec (writer.c checks the layout), kind and flags 4 more. */
static inline int same_call(const fc__rec *a, const fc__rec *b)
{
    const unsigned char *x = (const unsigned char *)&a->bytes, *y = (const unsigned char *)&b->bytes;
    return ((ld64(x) ^ ld64(y)) | (ld64(x + 8) ^ ld64(y + 8)) | (ld64(x + 16) ^ ld64(y + 16)) |
            (ld64(x + 24) ^ ld64(y + 24)) | (ld64(x + 32) ^ ld64(y + 32)) |
            (uint64_t)((a->kind ^ b->kind) | (a->flags ^ b->flags))) == 0;
}

void fc__rec_poll(fc__thread *t, const fc__call *c, int32_t peer, int32_t tag, uint32_t comm,
                  uint64_t obj, uint32_t flags, uint64_t bytes2)
{
    fc__rec n;
    fc__rec_fill(&n, c, peer, tag, comm, 0, obj, flags, bytes2);
    fc__rec *f = t->run;
    if (f != NULL && fc__fold_polls && c->rc == MPI_SUCCESS && same_call(f, &n)) {
        if (t->cur == f + 1 && t->cur != t->end) {
            /* The run's second call: the POLLS record that stands for all but the first. */
            fc__rec *p = t->cur++;
            *p = (fc__rec){.t0 = c->t0, .t1 = c->t1, .bytes = 2,
                           .bytes2 = span_ns(f->t0, f->t1) + span_ns(c->t0, c->t1),
                           .peer = FC_PEER_NONE, .kind = FC_EV_POLLS};
            return;
        }
        if (t->cur == f + 2 && f[1].kind == FC_EV_POLLS) {
            f[1].t0 = c->t0;
            f[1].t1 = c->t1;
            f[1].bytes++;
            f[1].bytes2 += span_ns(c->t0, c->t1);
            return;
        }
    }
    fc__rec *r = fc__slot(t);
    *r = n;
    t->run = c->rc == MPI_SUCCESS ? r : NULL;
}
