/* tests/format/test-format-unknown.c: what a newer minor version may add is skipped: block kinds
 * this reader does not know (stored and compressed), event kinds it does not know, and record
 * bodies longer than the fields it knows. An unknown block kind in a file of this reader's own
 * version is damage, and refused. The group's setup writes one rank file twice: as this reader's
 * version wrote it (this/) and as a newer minor version did (newer/). */
#include <sys/stat.h>
#include "fmt-util.h"

/* Appends ev, encoded, to buf at *n; extra > 0 pads the body with that many bytes of a future field. */
static void put_event(fc_event_codec *c, const fc_event *ev, unsigned char *buf, size_t *n, unsigned extra)
{
    unsigned char rec[FC_EVENT_MAX_ENCODED];
    size_t len = fc_event_encode(c, ev, rec);
    if (extra == 0) {
        memcpy(buf + *n, rec, len);
        *n += len;
        return;
    }
    /* kind, one-byte length (bodies here are short), body: rewrite the length and pad. */
    assert_msg(rec[1] < 0x80 - extra, "body too long for this test");
    buf[(*n)++] = rec[0];
    buf[(*n)++] = (unsigned char)(rec[1] + extra);
    memcpy(buf + *n, rec + 2, len - 2);
    *n += len - 2;
    memset(buf + *n, 0x7f, extra);
    *n += extra;
}

static fc_event e[5];
static char this_dir[4200], newer_dir[4200], this_path[4300];
static uint64_t future_at;

/* Writes rank 0's file in this/: a block of kind 200, the EVENTS block (zlib) with an event of an
 * unknown kind and one with a longer body than this reader knows, a compressed block of kind 201;
 * then the same file with the minor version one above this reader's in newer/. */
static int write_files(void **state)
{
    (void)state;
    char newer_path[4300];
    fc_writer *w;
    unsigned char payload[1024];
    size_t n = 0;
    fc_event_codec *c = malloc(sizeof *c);
    static const unsigned char future[] = "a block from the future";
    assert_non_null(c);
    scratch_make();
    snprintf(this_dir, sizeof this_dir, "%s", in_scratch("this"));
    snprintf(newer_dir, sizeof newer_dir, "%s", in_scratch("newer"));
    assert_int_equal(mkdir(this_dir, 0777), 0);
    assert_int_equal(mkdir(newer_dir, 0777), 0);
    rank_file(this_path, sizeof this_path, this_dir, 0);
    rank_file(newer_path, sizeof newer_path, newer_dir, 0);

    memset(e, 0, sizeof e);
    e[0] = (fc_event){.kind = FC_EV_MPI_Send, .t0 = 1000, .t1 = 1100, .peer = 1, .tag = 5, .bytes = 64};
    e[1] = (fc_event){.kind = 126, .t0 = 2000, .t1 = 2500, .peer = 9, .tag = 9, .bytes = 999, .obj = 77};
    e[2] = (fc_event){.kind = FC_EV_MPI_Send, .t0 = 3000, .t1 = 3050, .peer = 1, .tag = 5, .bytes = 128};
    e[3] = (fc_event){.kind = FC_EV_MPI_Recv, .t0 = 4000, .t1 = 4200, .peer = 1, .tag = 6, .bytes = 32};
    e[4] = (fc_event){.kind = FC_EV_MPI_Recv, .t0 = 5000, .t1 = 5001, .peer = 1, .tag = 6, .bytes = 32};
    n += fc_put_uvarint(payload + n, 0);    /* thread */
    n += fc_put_uvarint(payload + n, 5);    /* count */
    n += fc_put_uvarint(payload + n, 1000); /* base_ns */
    fc_event_codec_reset(c, 1000);
    put_event(c, &e[0], payload, &n, 0);
    put_event(c, &e[1], payload, &n, 0);
    put_event(c, &e[2], payload, &n, 0);
    put_event(c, &e[3], payload, &n, 3); /* a future field after bytes2 */
    put_event(c, &e[4], payload, &n, 0); /* deltas against e[3]: mask leaves peer, tag, bytes out */
    free(c);

    assert_msg(fc_writer_open(this_path, 0, 2, 0, 1, 0, &w) == 0, "%s", fc_errmsg());
    future_at = fc_writer_offset(w);
    assert_msg(fc_writer_block(w, 200, 0, future, sizeof future) == 0, "%s", fc_errmsg());
    assert_msg(fc_writer_block(w, FC_BLK_EVENTS, FC_BLKF_ZLIB, payload, n) == 0, "%s", fc_errmsg());
    assert_msg(fc_writer_block(w, 201, FC_BLKF_ZLIB, future, sizeof future) == 0, "%s", fc_errmsg());
    assert_msg(fc_writer_end(w, 0, 0, 6000, 0) == 0, "%s", fc_errmsg());
    assert_msg(fc_writer_close(w) == 0, "%s", fc_errmsg());

    /* The same bytes as a newer minor version wrote them. */
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", this_path, newer_path);
    assert_int_equal(system(cmd), 0);
    FILE *fh = fopen(newer_path, "r+b");
    unsigned char minor[2];
    fc_put_u16(minor, FC_FORMAT_MINOR + 1);
    assert_msg(fh != NULL && fseek(fh, FC_FH_MINOR, SEEK_SET) == 0 && fwrite(minor, 1, 2, fh) == 2 && fclose(fh) == 0,
               "cannot set the minor version of %s", newer_path);
    return 0;
}

static int remove_files(void **state)
{
    (void)state;
    scratch_remove();
    return 0;
}

/* Only a newer minor version adds block kinds: in a file of this reader's version, kind 200 is a
 * damaged header, refused with its offset in one line (read alone: in a directory, the damage makes
 * the rank partial instead). */
static void test_unknown_kind_at_this_minor_is_refused(void **state)
{
    (void)state;
    char *out, *err, msg[4400];
    snprintf(msg, sizeof msg, "%s: offset %llu: unknown block kind 200 in a format %d.%d file\n", this_path,
             (unsigned long long)future_at, FC_FORMAT_MAJOR, FC_FORMAT_MINOR);
    int st = run_flowcut(&out, &err, "dump '%s'", this_path);
    assert_msg(st == 1, "unknown kind at this minor: exit %d, '%s'", st, err);
    assert_int_equal(count_lines(err), 1);
    assert_contains(err, msg);
    free(out);
    free(err);
}

/* The library skips the unknown blocks and the unknown event, and reads the longer body's known
 * fields: four records, with their values, and the rank is not partial. */
static void test_library_reads_known_records(void **state)
{
    (void)state;
    fc_trace *t;
    fc_cursor *cur;
    fc_record rec[8];
    size_t got = 0;
    int rc;
    assert_msg(fc_trace_open(newer_dir, &t) == 0, "%s", fc_errmsg());
    assert_msg(!fc_trace_rank(t, 0)->partial, "partial: %s", fc_trace_rank(t, 0)->partial_why);
    assert_msg(fc_cursor_open(t, 0, &cur) == 0, "%s", fc_errmsg());
    while (got < 8 && (rc = fc_cursor_next(cur, &rec[got])) > 0)
        got++;
    assert_msg(rc == 0, "cursor: %s", fc_errmsg());
    assert_int_equal(got, 4);
    const fc_event *want[] = {&e[0], &e[2], &e[3], &e[4]};
    for (size_t i = 0; i < got; i++) {
        assert_int_equal(rec[i].ev.kind, want[i]->kind);
        assert_int_equal(rec[i].ev.t0, want[i]->t0);
        assert_int_equal(rec[i].ev.t1, want[i]->t1);
        assert_int_equal(rec[i].ev.peer, want[i]->peer);
        assert_int_equal(rec[i].ev.tag, want[i]->tag);
        assert_int_equal(rec[i].ev.bytes, want[i]->bytes);
    }
    fc_cursor_close(cur);
    fc_trace_close(t);
}

/* The command prints the same four lines; times from rank 0's first event at 1000 ns. */
static void test_dump_prints_known_records(void **state)
{
    (void)state;
    char *out, *err;
    const char *expect = "time=0.000000000 rank=0 thread=0 kind=MPI_Send peer=1 tag=5 comm=0 bytes=64 dur=0.000000100\n"
                         "time=0.000002000 rank=0 thread=0 kind=MPI_Send peer=1 tag=5 comm=0 bytes=128 dur=0.000000050\n"
                         "time=0.000003000 rank=0 thread=0 kind=MPI_Recv peer=1 tag=6 comm=0 bytes=32 dur=0.000000200\n"
                         "time=0.000004000 rank=0 thread=0 kind=MPI_Recv peer=1 tag=6 comm=0 bytes=32 dur=0.000000001\n";
    int rc = run_flowcut(&out, &err, "dump '%s'", newer_dir);
    assert_msg(rc == 0, "dump exited %d: %s", rc, err);
    assert_string_equal(out, expect);
    free(out);
    free(err);
}

static void test_info_counts_known_records(void **state)
{
    (void)state;
    char *out, *err;
    int rc = run_flowcut(&out, &err, "info --json '%s'", newer_dir);
    assert_msg(rc == 0, "info exited %d:\n%s%s", rc, out, err);
    assert_contains(out, "\"events_total\": 4");
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_kind_at_this_minor_is_refused),
        cmocka_unit_test(test_library_reads_known_records),
        cmocka_unit_test(test_dump_prints_known_records),
        cmocka_unit_test(test_info_counts_known_records),
    };
    return cmocka_run_group_tests(tests, write_files, remove_files);
}
