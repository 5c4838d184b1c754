/* tests/unit/test-runtime-encode.c: records of a chunk become an EVENTS payload that the shared
 * decoder reads back field for field, with ticks converted to nanoseconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
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
    unsigned char *out = malloc(fc__events_bound(5));
    size_t n = fc__encode_chunk(r, 5, 3, &c, &enc, out);
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
    unsigned char out[512];
    size_t n = fc__encode_chunk(r, 3, 0, &id, &enc, out);
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
    assert_int_equal(fc__encode_chunk(r, 0, 0, &id, &enc, out), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(clamps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
