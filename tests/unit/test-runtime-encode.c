/* tests/unit/test-runtime-encode.c: records of a chunk become an EVENTS payload (in columns) that
 * the shared decoder reads back field for field, with ticks converted to nanoseconds; the decoder
 * still reads chunks in rows (format 1), and columns laid out by hand from format.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime.h"

static fc_event_codec enc, dec;

static fc__rec mk(unsigned kind, uint64_t t0, uint64_t t1, int peer, int tag, uint32_t comm, uint64_t bytes,
                  uint32_t site)
{
    fc__rec r = {.t0 = t0, .t1 = t1, .bytes = bytes, .peer = peer, .tag = tag, .comm = comm, .site = site,
                 .kind = (uint16_t)kind};
    return r;
}

static void round_trip(void **state)
{
    (void)state;
    fc__clock_conv c;
    /* 3 ticks per ns from tick 0 = ns 0, so the expected times are the ticks divided by 3. */
    fc__clock_conv_from(&c, 0, 0, 3000000, 1000000);
    fc__rec r[5] = {
        mk(FC_EV_MPI_Send, 3000, 3300, 1, 7, 0, 800, 1),
        mk(FC_EV_MPI_Recv, 6000, 9000, 1, 7, 0, 800, 2),
        mk(FC_EV_MPI_Send, 9300, 9600, 1, 8, 0, 800, 1),
        mk(FC_EV_MPI_Barrier, 12000, 30000, FC_PEER_NONE, 0, 3, 0, 3),
        mk(FC_EV_MPI_Send, 30000, 30003, FC_PEER_NULL, -1, 2, 1ull << 40, 0),
    };
    r[3].flags = FC_EVF_ERROR;
    r[4].obj = 0xdeadbeef;
    r[4].bytes2 = 17;
    unsigned char *out = malloc(fc__events_bound(5)), *scratch = malloc(fc__events_scratch(5));
    size_t n = fc__encode_chunk(r, 5, 3, &c, &enc, out, scratch);
    const unsigned char *p = out, *end = out + n;
    uint64_t thread = 0, count = 0, base = 0;
    assert_int_equal(fc_get_uvarint(&p, end, &thread), 0);
    assert_int_equal(fc_get_uvarint(&p, end, &count), 0);
    assert_int_equal(fc_get_uvarint(&p, end, &base), 0);
    assert_true(thread == 3 && count == 5 && base == 1000);
    fc_event_codec_reset(&dec, base);
    for (int i = 0; i < 5; i++) {
        fc_event ev = {.thread = 3};
        assert_int_equal(fc_event_decode(&dec, &p, end, &ev), 0);
        assert_int_equal(ev.kind, r[i].kind);
        assert_true(ev.t0 == r[i].t0 / 3);
        assert_true(ev.t1 == r[i].t1 / 3);
        assert_true(ev.peer == r[i].peer);
        assert_true(ev.tag == r[i].tag);
        assert_true(ev.comm == r[i].comm);
        assert_true(ev.bytes == r[i].bytes);
        assert_true(ev.obj == r[i].obj);
        assert_true(ev.site == r[i].site);
        assert_true(ev.flags == r[i].flags);
        assert_true(ev.bytes2 == r[i].bytes2);
    }
    assert_ptr_equal(p, end);
    free(out);
    free(scratch);
}

static void clamps(void **state)
{
    (void)state;
    fc__clock_conv id;
    fc__clock_conv_from(&id, 0, 0, 1000, 1000);
    /* A t0 behind the previous one (another core's TSC) and a t1 before t0 are clamped, and a
     * kind past the table (a slot half-written when a signal struck) becomes 127. */
    fc__rec r[3] = {
        mk(FC_EV_MPI_Send, 500, 600, 0, 0, 0, 0, 0),
        mk(FC_EV_MPI_Send, 400, 300, 0, 0, 0, 0, 0),
        mk(300, 700, 800, 0, 0, 0, 0, 0),
    };
    unsigned char out[512], scratch[64];
    size_t n = fc__encode_chunk(r, 3, 0, &id, &enc, out, scratch);
    const unsigned char *p = out, *end = out + n;
    uint64_t v;
    fc_get_uvarint(&p, end, &v);
    fc_get_uvarint(&p, end, &v);
    fc_get_uvarint(&p, end, &v);
    assert_true(v == 500);
    fc_event_codec_reset(&dec, v);
    fc_event ev = {0};
    assert_int_equal(fc_event_decode(&dec, &p, end, &ev), 0);
    assert_int_equal(fc_event_decode(&dec, &p, end, &ev), 0);
    assert_true(ev.t0 == 500 && ev.t1 == 500);
    assert_int_equal(fc_event_decode(&dec, &p, end, &ev), 0);
    assert_int_equal(ev.kind, 127);
    assert_true(ev.t0 == 700);
    /* An empty chunk is just its three header fields. */
    assert_int_equal(fc__encode_chunk(r, 0, 0, &id, &enc, out, scratch), 3);
}

/* The tracer's chunk encoder writes records straight from memory: its bytes must be those of the
 * shared encoder (event.h) for every record, on a long random chunk where records repeat, differ
 * in any field (negative peers and tags, large values), or change kind. */
static void same_as_shared(void **state)
{
    (void)state;
    enum { N = 3000 };
    fc__clock_conv id;
    fc__clock_conv_from(&id, 0, 0, 1000, 1000);
    fc__rec *r = calloc(N, sizeof *r);
    unsigned char *out = malloc(N * 64), *want = malloc(N * 64), *scratch = malloc(N * 2 * FC_EVENT_COLS_TIME);
    unsigned char *times = malloc(N * 2 * FC_EVENT_COLS_TIME);
    static const unsigned kinds[] = {FC_EV_MPI_Send, FC_EV_MPI_Recv, FC_EV_MPI_Isend, FC_EV_MPI_Waitall};
    uint64_t t = 1000, seed = 99;
    for (size_t i = 0; i < N; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned roll = (unsigned)(seed >> 33);
        fc__rec x = i ? r[i - 1] : mk(FC_EV_MPI_Send, 0, 0, 1, 7, 0, 800, 1);
        if (roll % 4 == 0)
            x.kind = kinds[(roll >> 4) % 4];
        if (roll % 7 == 0)
            x.tag = (int)((roll >> 8) % 50);
        if (roll % 11 == 0)
            x.bytes = (roll >> 8) % 100000;
        if (roll % 13 == 0)
            x.obj = (roll >> 8) % 9;
        if (roll % 17 == 0)
            x.peer = (int)((roll >> 8) % 7) - 4; /* FC_PEER_* values among them */
        if (roll % 19 == 0)
            x.comm = (roll >> 8) % 3;
        if (roll % 23 == 0)
            x.site = (roll >> 8) % 5;
        if (roll % 29 == 0)
            x.flags = (uint16_t)((roll >> 8) % 4);
        if (roll % 31 == 0)
            x.bytes2 = (roll & 1) ? (uint64_t)1 << 40 : (roll >> 8) % 70;
        if (roll % 37 == 0)
            x.tag = -1 - (int)((roll >> 8) % 3);
        t += 100 + (roll >> 20) % 5000;
        x.t0 = t;
        x.t1 = t + (roll >> 12) % 300;
        r[i] = x;
    }
    size_t n = fc__encode_chunk(r, N, 2, &id, &enc, out, scratch);
    /* The same chunk by hand: header, then every record through fc_event_encode_cols. */
    size_t m = 0;
    m += fc_put_uvarint(want + m, 2);
    m += fc_put_uvarint(want + m, N);
    m += fc_put_uvarint(want + m, r[0].t0);
    fc_event_codec_reset(&dec, r[0].t0);
    fc_event_cols o = {.rec = want + m + FC_EVENT_COLS_DIR, .gap = times, .dur = times + N * FC_EVENT_COLS_TIME};
    for (size_t i = 0; i < N; i++) {
        fc_event ev = {.kind = r[i].kind, .thread = 2, .t0 = r[i].t0, .t1 = r[i].t1, .peer = r[i].peer,
                       .tag = r[i].tag, .comm = r[i].comm, .bytes = r[i].bytes, .obj = r[i].obj,
                       .site = r[i].site, .flags = r[i].flags, .bytes2 = r[i].bytes2};
        fc_event_encode_cols(&dec, &ev, &o);
    }
    m += fc_event_cols_finish(&o, want + m);
    assert_int_equal(n, m);
    assert_memory_equal(out, want, n);
    free(r);
    free(out);
    free(want);
    free(scratch);
    free(times);
}


/* The encoder's times are fc__ticks_ns's (runtime.h), the map every other time of the trace goes
 * through, to the nanosecond: over calibrations of 1 to 5 GHz TSCs and of clock_gettime, a map
 * whose every other tick lands on a tie of the rounding (1.5 ns a tick), ticks from before the
 * calibration point to 2^50 ticks (days) after it, records that repeat (no field but the times
 * written) and records that differ. Expected times are fc__ticks_ns's, clamped as the format
 * says (t0 never behind the previous record's, t1 never behind its own t0). */
static void times_are_the_clock_map(void **state)
{
    (void)state;
    enum { N = 4000 };
    fc__rec *r = calloc(N, sizeof *r);
    unsigned char *out = malloc(fc__events_bound(N)), *scratch = malloc(fc__events_scratch(N));
    uint64_t seed = 12345;
#define RND() (seed = seed * 6364136223846793005ull + 1442695040888963407ull, seed >> 11)
    for (int cal = 0; cal < 40; cal++) {
        fc__clock_conv c;
        uint64_t tick0 = (RND() & ((1ull << 52) - 1)) + (1ull << 40), ns0 = RND() & ((1ull << 50) - 1);
        if (cal == 0) {
            c.tick0 = 0, c.ns0 = 0, c.mult = 1ull << 32; /* clock_gettime: ticks are nanoseconds */
        } else if (cal == 1) {
            c.tick0 = tick0, c.ns0 = ns0, c.mult = 3ull << 31; /* odd tick offsets are exact ties */
        } else {
            uint64_t hz = 1000000000ull + RND() % 4000000000ull;
            fc__clock_conv_from(&c, tick0, ns0, tick0 + hz / 200, ns0 + 5000000);
        }
        /* Half of the chunks start before the calibration point; steps from a tick to 2^26 ticks,
         * and one jump of up to 2^50. */
        uint64_t t = c.tick0 - (cal % 2 ? RND() % 100000 : 0);
        for (int i = 0; i < N; i++) {
            fc__rec x = i ? r[i - 1] : mk(FC_EV_MPI_Send, 0, 0, 1, 7, 0, 800, 1);
            if (RND() % 3 == 0)
                x.tag = (int)(RND() % 5);
            t += i == N / 2 ? RND() & ((1ull << 50) - 1) : RND() % (RND() % 2 ? 3 : 1ull << 26);
            x.t0 = t;
            x.t1 = t + RND() % (RND() % 2 ? 4 : 1ull << 24);
            if (RND() % 50 == 0) /* another core's TSC, a few ticks behind */
                x.t1 = x.t0 - RND() % 4, x.t0 -= RND() % 8;
            r[i] = x;
        }
        size_t n = fc__encode_chunk(r, N, 0, &c, &enc, out, scratch);
        const unsigned char *p = out, *end = out + n;
        uint64_t thread, count, base;
        assert_int_equal(fc_get_uvarint(&p, end, &thread), 0);
        assert_int_equal(fc_get_uvarint(&p, end, &count), 0);
        assert_int_equal(fc_get_uvarint(&p, end, &base), 0);
        assert_true(base == fc__ticks_ns(&c, r[0].t0));
        fc_event_codec_reset(&dec, base);
        uint64_t prev0 = base;
        for (int i = 0; i < N; i++) {
            fc_event ev = {0};
            assert_int_equal(fc_event_decode(&dec, &p, end, &ev), 0);
            uint64_t w0 = fc__ticks_ns(&c, r[i].t0), w1 = fc__ticks_ns(&c, r[i].t1);
            w0 = w0 < prev0 ? prev0 : w0;
            w1 = w1 < w0 ? w0 : w1;
            prev0 = w0;
            if (ev.t0 != w0 || ev.t1 != w1)
                fail_msg("calibration %d record %d: %llu %llu, want %llu %llu", cal, i, (unsigned long long)ev.t0,
                         (unsigned long long)ev.t1, (unsigned long long)w0, (unsigned long long)w1);
        }
    }
#undef RND
    free(r);
    free(out);
    free(scratch);
}

/* Two records in columns written byte by byte from format.h's description, so that the layout
 * itself (not only encoder and decoder agreeing) is checked: a Send (peer 3, tag 5, 8 bytes) at
 * t = 1000..1010 and a Send to peer 1, tag 6, 16 bytes at t = 1030..1032. */
static void columns_by_hand(void **state)
{
    (void)state;
    unsigned char buf[64] = {0};
    size_t k = 0;
    buf[k++] = 0xff; /* mark, then rec_len (filled below) and gap_len 2 */
    fc_put_u32(buf + 5, 2);
    k += 8;
    /* Records: kind, len, mask (peer | tag | bytes), fields as zigzag differences to the previous
     * Send: +3 +5 +8 (6 10 16), then -2 +1 +8 (3 2 16). The first body (len 5) carries one byte
     * a newer minor version added, which the decoder skips. */
    const unsigned char r0[] = {FC_EV_MPI_Send, 5, 0x0b, 6, 10, 16, 0x7f};
    const unsigned char r1[] = {FC_EV_MPI_Send, 4, 0x0b, 3, 2, 16};
    memcpy(buf + k, r0, sizeof r0);
    k += sizeof r0;
    memcpy(buf + k, r1, sizeof r1);
    k += sizeof r1;
    fc_put_u32(buf + 1, (uint32_t)(sizeof r0 + sizeof r1));
    buf[k++] = 0;  /* gap of the first record: t0 = base */
    buf[k++] = 40; /* 1030 - 1010 = 20, zigzag 40 */
    buf[k++] = 10;
    buf[k++] = 2;
    const unsigned char *p = buf, *end = buf + k;
    fc_event_codec_reset(&dec, 1000);
    fc_event ev = {0};
    assert_int_equal(fc_event_decode(&dec, &p, end, &ev), 0);
    assert_true(ev.kind == FC_EV_MPI_Send && ev.t0 == 1000 && ev.t1 == 1010);
    assert_true(ev.peer == 3 && ev.tag == 5 && ev.bytes == 8);
    assert_int_equal(fc_event_decode(&dec, &p, end, &ev), 0);
    assert_true(ev.t0 == 1030 && ev.t1 == 1032);
    assert_true(ev.peer == 1 && ev.tag == 6 && ev.bytes == 16);
    assert_ptr_equal(p, end);
    /* A directory whose columns run past the payload is refused, not read past the end. */
    fc_put_u32(buf + 5, 200);
    p = buf;
    fc_event_codec_reset(&dec, 1000);
    assert_int_equal(fc_event_decode(&dec, &p, end, &ev), -1);
    assert_ptr_equal(p, buf);
}

/* The same records encoded in rows (format 1, fc_event_encode) and in columns decode alike. */
static void rows_and_columns(void **state)
{
    (void)state;
    fc_event in[4] = {
        {.kind = FC_EV_MPI_Isend, .t0 = 500, .t1 = 520, .peer = 2, .tag = 9, .bytes = 64, .obj = 0xac000001},
        {.kind = FC_EV_MPI_Waitall, .t0 = 600, .t1 = 9000, .peer = -1, .bytes2 = 2, .site = 4},
        {.kind = FC_EV_COMPLETE, .t0 = 9000, .t1 = 9000, .peer = 2, .obj = 0xac000001, .flags = FC_EVF_STATUS},
        {.kind = FC_EV_MPI_Isend, .t0 = 9000, .t1 = 9001, .peer = 1, .tag = 9, .bytes = 32, .obj = 0xac000000},
    };
    unsigned char rows[512], cols[512], tgap[64], tdur[64];
    size_t nr = 0;
    fc_event_codec_reset(&enc, 500);
    for (int i = 0; i < 4; i++)
        nr += fc_event_encode(&enc, &in[i], rows + nr);
    fc_event_codec_reset(&enc, 500);
    fc_event_cols o = {.rec = cols + FC_EVENT_COLS_DIR, .gap = tgap, .dur = tdur};
    for (int i = 0; i < 4; i++)
        fc_event_encode_cols(&enc, &in[i], &o);
    size_t nc = fc_event_cols_finish(&o, cols);
    const unsigned char *bufs[2] = {rows, cols};
    size_t lens[2] = {nr, nc};
    for (int b = 0; b < 2; b++) {
        const unsigned char *p = bufs[b], *end = bufs[b] + lens[b];
        fc_event_codec_reset(&dec, 500);
        for (int i = 0; i < 4; i++) {
            fc_event ev = {0};
            assert_int_equal(fc_event_decode(&dec, &p, end, &ev), 0);
            assert_int_equal(memcmp(&ev, &in[i], sizeof ev), 0);
        }
        assert_ptr_equal(p, end);
        assert_int_equal(fc_event_decode(&dec, &p, end, &(fc_event){0}), -1);
    }
}

/* Every byte of a chunk in columns replaced by several values: the decoder either reads a record
 * or refuses it, never reads outside the chunk (the sanitizer build checks) and never moves *p
 * outside [start, end]. */
static void columns_damaged(void **state)
{
    (void)state;
    fc__clock_conv id;
    fc__clock_conv_from(&id, 0, 0, 1000, 1000);
    fc__rec r[6];
    for (int i = 0; i < 6; i++) {
        r[i] = mk(i % 2 ? FC_EV_MPI_Recv : FC_EV_MPI_Send, 1000u * i, 1000u * i + 300u * i, i, 7 + i, 0,
                  8u << i, 1 + i % 2);
        r[i].obj = 0xac000000u + (unsigned)i;
    }
    unsigned char good[1024], bad[1024], scratch[256];
    size_t n = fc__encode_chunk(r, 6, 0, &id, &enc, good, scratch);
    const unsigned char *p = good, *end = good + n;
    uint64_t v = 0, base = 0;
    fc_get_uvarint(&p, end, &v);
    fc_get_uvarint(&p, end, &v);
    fc_get_uvarint(&p, end, &base);
    size_t start = (size_t)(p - good);
    static const unsigned char vals[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
    for (size_t k = start; k < n; k++)
        for (size_t j = 0; j < sizeof vals; j++) {
            memcpy(bad, good, n);
            bad[k] = vals[j];
            for (size_t cut = n; cut + 3 >= n && cut > start; cut--) {
                /* malloc'd to size, so that reading past the end is caught */
                unsigned char *buf = malloc(cut - start);
                memcpy(buf, bad + start, cut - start);
                const unsigned char *q = buf, *qend = buf + (cut - start);
                fc_event_codec_reset(&dec, base);
                for (int i = 0; i < 6; i++) {
                    fc_event ev = {0};
                    if (fc_event_decode(&dec, &q, qend, &ev) < 0)
                        break;
                    assert_true(q > buf && q <= qend);
                }
                free(buf);
            }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(clamps),
        cmocka_unit_test(same_as_shared),
        cmocka_unit_test(times_are_the_clock_map),
        cmocka_unit_test(columns_by_hand),
        cmocka_unit_test(rows_and_columns),
        cmocka_unit_test(columns_damaged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
