/* tests/format/test-format-unknown.c: what a newer minor version may add is skipped: block kinds
 * this reader does not know (stored and compressed), event kinds it does not know, and record
 * bodies longer than the fields it knows. An unknown block kind in a file of this reader's own
 * version is damage, and refused. */
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
    REQUIRE(rec[1] < 0x80 - extra, "body too long for this test");
    buf[(*n)++] = rec[0];
    buf[(*n)++] = (unsigned char)(rec[1] + extra);
    memcpy(buf + *n, rec + 2, len - 2);
    *n += len - 2;
    memset(buf + *n, 0x7f, extra);
    *n += extra;
}

int main(void)
{
    char path[4200];
    fc_writer *w;
    unsigned char payload[1024];
    size_t n = 0;
    fc_event_codec *c = malloc(sizeof *c);
    static const unsigned char future[] = "a block from the future";
    REQUIRE(c != NULL, "out of memory");
    scratch_make();
    rank_file(path, sizeof path, scratch, 0);

    fc_event e[5];
    memset(e, 0, sizeof e);
    e[0] = (fc_event){.kind = FC_EV_MPI_Send, .t0 = 1000, .t1 = 1100, .peer = 1, .tag = 5, .bytes = 64};
    e[1] = (fc_event){.kind = 100, .t0 = 2000, .t1 = 2500, .peer = 9, .tag = 9, .bytes = 999, .obj = 77};
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

    REQUIRE(fc_writer_open(path, 0, 2, 0, 1, 0, &w) == 0, "%s", fc_errmsg());
    uint64_t future_at = fc_writer_offset(w);
    REQUIRE(fc_writer_block(w, 200, 0, future, sizeof future) == 0, "%s", fc_errmsg());
    REQUIRE(fc_writer_block(w, FC_BLK_EVENTS, FC_BLKF_ZLIB, payload, n) == 0, "%s", fc_errmsg());
    REQUIRE(fc_writer_block(w, 201, FC_BLKF_ZLIB, future, sizeof future) == 0, "%s", fc_errmsg());
    REQUIRE(fc_writer_end(w, 0, 0, 6000, 0) == 0, "%s", fc_errmsg());
    REQUIRE(fc_writer_close(w) == 0, "%s", fc_errmsg());

    /* Only a newer minor version adds block kinds: in a file of this reader's version, kind 200
     * is a damaged header, refused with its offset. */
    char *out, *err, msg[4400];
    snprintf(msg, sizeof msg, "%s: offset %llu: unknown block kind 200 in a format %d.%d file\n", path,
             (unsigned long long)future_at, FC_FORMAT_MAJOR, FC_FORMAT_MINOR);
    int st = run_flowcut(&out, &err, "dump '%s'", scratch);
    CHECK(st == 1 && count_lines(err) == 1 && strstr(err, msg) != NULL, "unknown kind at this minor: exit %d, '%s', expected '%s'", st, err, msg);
    free(out);
    free(err);
    /* The same file as a newer minor version wrote it. */
    FILE *fh = fopen(path, "r+b");
    unsigned char minor[2];
    fc_put_u16(minor, FC_FORMAT_MINOR + 1);
    REQUIRE(fh != NULL && fseek(fh, FC_FH_MINOR, SEEK_SET) == 0 && fwrite(minor, 1, 2, fh) == 2 && fclose(fh) == 0,
            "cannot set the minor version of %s", path);

    /* The library: four known records, with their values. */
    fc_trace *t;
    fc_cursor *cur;
    fc_record rec[8];
    size_t got = 0;
    int rc;
    REQUIRE(fc_trace_open(scratch, &t) == 0, "%s", fc_errmsg());
    CHECK(!fc_trace_rank(t, 0)->partial, "partial: %s", fc_trace_rank(t, 0)->partial_why);
    REQUIRE(fc_cursor_open(t, 0, &cur) == 0, "%s", fc_errmsg());
    while (got < 8 && (rc = fc_cursor_next(cur, &rec[got])) > 0)
        got++;
    CHECK(rc == 0, "cursor: %s", fc_errmsg());
    CHECK(got == 4, "%zu records, expected 4", got);
    const fc_event *want[] = {&e[0], &e[2], &e[3], &e[4]};
    for (size_t i = 0; i < got && i < 4; i++) {
        CHECK(rec[i].ev.kind == want[i]->kind && rec[i].ev.t0 == want[i]->t0 && rec[i].ev.t1 == want[i]->t1 &&
                  rec[i].ev.peer == want[i]->peer && rec[i].ev.tag == want[i]->tag &&
                  rec[i].ev.bytes == want[i]->bytes,
              "record %zu differs", i);
    }
    fc_cursor_close(cur);
    fc_trace_close(t);

    /* The command: the same four lines; times from rank 0's first event at 1000 ns. */
    const char *expect = "time=0.000000000 rank=0 thread=0 kind=MPI_Send peer=1 tag=5 comm=0 bytes=64 dur=0.000000100\n"
                         "time=0.000002000 rank=0 thread=0 kind=MPI_Send peer=1 tag=5 comm=0 bytes=128 dur=0.000000050\n"
                         "time=0.000003000 rank=0 thread=0 kind=MPI_Recv peer=1 tag=6 comm=0 bytes=32 dur=0.000000200\n"
                         "time=0.000004000 rank=0 thread=0 kind=MPI_Recv peer=1 tag=6 comm=0 bytes=32 dur=0.000000001\n";
    rc = run_flowcut(&out, &err, "dump '%s'", scratch);
    CHECK(rc == 0, "dump exited %d: %s", rc, err);
    CHECK(strcmp(out, expect) == 0, "dump printed\n%s\nexpected\n%s", out, expect);
    free(out);
    free(err);
    rc = run_flowcut(&out, &err, "info --json '%s'", scratch);
    CHECK(rc == 0 && strstr(out, "\"events_total\": 4") != NULL, "info exited %d:\n%s%s", rc, out, err);
    free(out);
    free(err);
    free(c);
    scratch_remove();
    if (fmt_failures)
        printf("FAIL: %d checks failed\n", fmt_failures);
    return fmt_failures ? 1 : 0;
}
