/* tests/format/test-format-older.c: this reader reads the files of older format versions as they
 * were written: format 1 (EVENTS chunks in rows), an older minor of format 2 with chunks in rows or
 * in columns, beside this version's (fc_writer_events). Each file holds the same events, laid out
 * through event.h's encoders and the version patched into the file header; the cursor must give
 * back the events written. And in a file of an older version, an unknown block kind is damage, as
 * in one of this version's. */
#include <sys/stat.h>
#include "fmt-util.h"

#define N 6
static fc_event ev[N];

/* A loop's records: a Send and a Recv repeated with the same fields, times that vary a little. */
static void make_events(void)
{
    uint64_t t = 1000000;
    for (int i = 0; i < N; i++) {
        int recv = i & 1;
        ev[i] = (fc_event){.kind = recv ? FC_EV_MPI_Recv : FC_EV_MPI_Send, .t0 = t, .t1 = t + 150 + 7 * (uint64_t)i,
                           .peer = 1, .tag = 3, .bytes = 8, .site = 0};
        t = ev[i].t1 + 20 + 3 * (uint64_t)i;
    }
}

/* Writes dir/rank-000000.fct at version major.minor with one EVENTS chunk in rows (layout 0) or in
 * columns (layout 2), and, when unknown is set, a block of kind 200 first. Returns the offset of
 * that block. */
static uint64_t write_file(const char *dir, unsigned major, unsigned minor, int layout, int unknown)
{
    char path[4300];
    unsigned char payload[4096], gaps[256], durs[256];
    size_t n = 0;
    fc_event_codec *c = malloc(sizeof *c);
    fc_writer *w;
    assert_non_null(c);
    assert_int_equal(mkdir(dir, 0777), 0);
    rank_file(path, sizeof path, dir, 0);
    n += fc_put_uvarint(payload + n, 0);
    n += fc_put_uvarint(payload + n, N);
    n += fc_put_uvarint(payload + n, ev[0].t0);
    fc_event_codec_reset(c, ev[0].t0);
    if (layout == 0) {
        for (int i = 0; i < N; i++)
            n += fc_event_encode(c, &ev[i], payload + n);
    } else {
        fc_event_cols o = {.rec = payload + n + FC_EVENT_COLS_DIR, .gap = gaps, .dur = durs};
        for (int i = 0; i < N; i++)
            fc_event_encode_cols(c, &ev[i], &o);
        n += fc_event_cols_finish(&o, payload + n);
    }
    free(c);
    assert_msg(fc_writer_open(path, 0, 2, 0, 1, 0, &w) == 0, "%s", fc_errmsg());
    uint64_t at = fc_writer_offset(w);
    if (unknown)
        assert_msg(fc_writer_block(w, 200, 0, "x", 1) == 0, "%s", fc_errmsg());
    assert_msg(fc_writer_block(w, FC_BLK_EVENTS, FC_BLKF_ZLIB, payload, n) == 0, "%s", fc_errmsg());
    assert_msg(fc_writer_end(w, 0, 0, ev[N - 1].t1, 0) == 0, "%s", fc_errmsg());
    assert_msg(fc_writer_close(w) == 0, "%s", fc_errmsg());
    unsigned char v[4];
    fc_put_u16(v, (uint16_t)major);
    fc_put_u16(v + 2, (uint16_t)minor);
    FILE *fh = fopen(path, "r+b");
    assert_msg(fh != NULL && fseek(fh, FC_FH_MAJOR, SEEK_SET) == 0 && fwrite(v, 1, 4, fh) == 4 && fclose(fh) == 0,
               "cannot set the version of %s", path);
    return at;
}

/* The events of dir's rank 0 as the cursor reads them equal ev[]. */
static void check_reads(const char *dir, unsigned major, unsigned minor)
{
    fc_trace *t;
    fc_cursor *cur;
    fc_record rec;
    int got = 0, rc;
    assert_msg(fc_trace_open(dir, &t) == 0, "%s", fc_errmsg());
    assert_int_equal(fc_trace_rank(t, 0)->info.major, major);
    assert_int_equal(fc_trace_rank(t, 0)->info.minor, minor);
    assert_msg(!fc_trace_rank(t, 0)->partial, "partial: %s", fc_trace_rank(t, 0)->partial_why);
    assert_msg(fc_cursor_open(t, 0, &cur) == 0, "%s", fc_errmsg());
    while ((rc = fc_cursor_next(cur, &rec)) > 0) {
        assert_true(got < N);
        assert_int_equal(rec.ev.kind, ev[got].kind);
        assert_int_equal(rec.ev.t0, ev[got].t0);
        assert_int_equal(rec.ev.t1, ev[got].t1);
        assert_int_equal(rec.ev.peer, ev[got].peer);
        assert_int_equal(rec.ev.tag, ev[got].tag);
        assert_int_equal(rec.ev.bytes, ev[got].bytes);
        got++;
    }
    assert_msg(rc == 0, "cursor: %s", fc_errmsg());
    assert_int_equal(got, N);
    fc_cursor_close(cur);
    fc_trace_close(t);
}

static void test_format1_rows(void **state)
{
    (void)state;
    write_file(in_scratch("v1"), 1, 0, 0, 0);
    check_reads(in_scratch("v1"), 1, 0);
}

static void test_format20_columns(void **state)
{
    (void)state;
    write_file(in_scratch("v20"), 2, 0, 2, 0);
    check_reads(in_scratch("v20"), 2, 0);
}

static void test_format20_rows(void **state)
{
    (void)state;
    write_file(in_scratch("v20rows"), 2, 0, 0, 0);
    check_reads(in_scratch("v20rows"), 2, 0);
}

/* fc_writer_events writes this version's columns, which read back the same. */
static void test_writer_events(void **state)
{
    (void)state;
    char path[4300];
    fc_writer *w;
    const char *dir = in_scratch("w");
    assert_int_equal(mkdir(dir, 0777), 0);
    rank_file(path, sizeof path, dir, 0);
    assert_msg(fc_writer_open(path, 0, 2, 0, 1, 0, &w) == 0, "%s", fc_errmsg());
    assert_msg(fc_writer_events(w, 0, ev, N) == 0, "%s", fc_errmsg());
    assert_msg(fc_writer_end(w, 0, 0, ev[N - 1].t1, 0) == 0, "%s", fc_errmsg());
    assert_msg(fc_writer_close(w) == 0, "%s", fc_errmsg());
    check_reads(dir, FC_FORMAT_MAJOR, FC_FORMAT_MINOR);
}

/* Version 1.0 has no block kind 200: damage there, as in this version's files. */
static void test_unknown_kind_in_older_version_is_refused(void **state)
{
    (void)state;
    char path[4300], msg[4400], *out, *err;
    uint64_t at = write_file(in_scratch("v1u"), 1, 0, 0, 1);
    rank_file(path, sizeof path, in_scratch("v1u"), 0);
    snprintf(msg, sizeof msg, "%s: offset %llu: unknown block kind 200 in a format 1.0 file\n", path,
             (unsigned long long)at);
    int st = run_flowcut(&out, &err, "dump '%s'", path);
    assert_msg(st == 1, "unknown kind in a 1.0 file: exit %d, '%s'", st, err);
    assert_contains(err, msg);
    free(out);
    free(err);
}

static int setup(void **state)
{
    (void)state;
    scratch_make();
    make_events();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    scratch_remove();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format1_rows),
        cmocka_unit_test(test_format20_columns),
        cmocka_unit_test(test_format20_rows),
        cmocka_unit_test(test_writer_events),
        cmocka_unit_test(test_unknown_kind_in_older_version_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
