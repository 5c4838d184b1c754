/* tests/format/test-format-damage.c: damaged traces never crash the reader: a file cut at every
 * offset reads up to its last complete block (or fails cleanly inside the file header), flipped
 * bytes are caught, a newer major version, a foreign byte order and bad magic are refused, and the
 * commands report each with one line naming the file and offset. */
#include <inttypes.h>
#include <sys/stat.h>
#include "fmt-util.h"

#define NBLK 6

/* Where the writer put rank 0's EVENTS blocks: start of header, end of payload, events. */
static uint64_t blk_start[NBLK], blk_end[NBLK], blk_count[NBLK];
static uint64_t comms_start, file_size;

static void write_rank(const char *dir, uint32_t r)
{
    char path[4200];
    fc_writer *w;
    static const uint32_t world[] = {0, 1};
    fc_comm comm = {0, 0, 2, 0, world, NULL, 0};
    rank_file(path, sizeof path, dir, (int)r);
    REQUIRE(fc_writer_open(path, r, 2, 0, 1, 0, &w) == 0, "%s", fc_errmsg());
    fc_rank_info in;
    memset(&in, 0, sizeof in);
    in.present = (UINT64_C(1) << FC_RK_HOST) | (UINT64_C(1) << FC_RK_RANK);
    in.host = "host";
    in.rank = r;
    REQUIRE(fc_writer_rank(w, &in) == 0, "%s", fc_errmsg());
    if (r == 0)
        comms_start = fc_writer_offset(w);
    REQUIRE(fc_writer_comms(w, &comm, 1) == 0, "%s", fc_errmsg());
    uint64_t t = 1000;
    for (int b = 0; b < NBLK; b++) {
        fc_event ev[8];
        size_t n = (size_t)b + 1;
        for (size_t i = 0; i < n; i++, t += 100)
            ev[i] = (fc_event){.kind = FC_EV_MPI_Send, .t0 = t, .t1 = t + 50, .peer = 1 - (int)r, .tag = b,
                               .bytes = 8 * i};
        if (r == 0)
            blk_start[b] = fc_writer_offset(w);
        REQUIRE(fc_writer_events(w, 0, ev, n) == 0, "%s", fc_errmsg());
        if (r == 0) {
            blk_end[b] = fc_writer_offset(w);
            blk_count[b] = n;
        }
    }
    REQUIRE(fc_writer_warn(w, "a warning") == 0, "%s", fc_errmsg());
    REQUIRE(fc_writer_end(w, 0, FC_END_FINALIZE, t, 0) == 0, "%s", fc_errmsg());
    if (r == 0)
        file_size = fc_writer_offset(w);
    REQUIRE(fc_writer_close(w) == 0, "%s", fc_errmsg());
}

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    REQUIRE(f != NULL, "open %s", path);
    unsigned char *b = malloc(1 << 20);
    REQUIRE(b != NULL, "out of memory");
    *n = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

static void write_file(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f != NULL && fwrite(b, 1, n, f) == n && fclose(f) == 0, "write %s", path);
}

/* Opens path and reads every event; returns 0 with *events and *partial, or the error code. */
static int read_everything(const char *path, uint64_t *events, int *partial)
{
    fc_trace *t;
    int rc = fc_trace_open(path, &t);
    *events = 0;
    if (rc < 0)
        return rc;
    *partial = fc_trace_partial(t);
    for (size_t i = 0; i < fc_trace_nranks(t) && rc >= 0; i++) {
        fc_cursor *c;
        fc_record rec;
        if ((rc = fc_cursor_open(t, i, &c)) < 0)
            break;
        while ((rc = fc_cursor_next(c, &rec)) > 0)
            (*events)++;
        fc_cursor_close(c);
    }
    fc_trace_close(t);
    return rc;
}

static void test_truncation(const unsigned char *full, size_t size)
{
    char cut[4200];
    snprintf(cut, sizeof cut, "%s", in_scratch("cut.fct")); /* in_scratch's buffers are reused */
    for (size_t len = 0; len <= size; len++) {
        uint64_t events, want = 0;
        int partial = 0;
        write_file(cut, full, len);
        int rc = read_everything(cut, &events, &partial);
        if (len < FC_FILE_HEADER_SIZE) {
            CHECK(rc == FC_ETRUNCATED, "cut at %zu: rc %d, expected FC_ETRUNCATED", len, rc);
            CHECK(strstr(fc_errmsg(), "cut.fct: offset ") != NULL, "cut at %zu: message '%s'", len, fc_errmsg());
            continue;
        }
        /* Events of the blocks that end within the cut, by the writer's offsets. */
        for (int b = 0; b < NBLK; b++)
            if (blk_end[b] <= len)
                want += blk_count[b];
        CHECK(rc == 0, "cut at %zu: %s", len, fc_errmsg());
        CHECK(events == want, "cut at %zu: %" PRIu64 " events, expected %" PRIu64, len, events, want);
        CHECK(partial == (len < size), "cut at %zu: partial %d", len, partial);
    }
    /* The commands, at a few cuts: inside the header, inside a block, at a block boundary. */
    char *out, *err;
    int st;
    write_file(cut, full, 40);
    st = run_flowcut(&out, &err, "dump '%s'", cut);
    CHECK(st == 1 && count_lines(err) == 1 && strstr(err, "cut.fct: offset 40: file cut inside the file header"),
          "dump of a 40-byte file: exit %d, stderr '%s'", st, err);
    free(out);
    free(err);
    write_file(cut, full, (size_t)blk_end[2] + 5);
    st = run_flowcut(&out, &err, "dump --no-sites '%s'", cut);
    CHECK(st == 0 && count_lines(out) == blk_count[0] + blk_count[1] + blk_count[2],
          "dump of a cut file: exit %d, %zu lines", st, count_lines(out));
    char want[200];
    snprintf(want, sizeof want, "rank 0 is partial: file cut inside a block header at offset %" PRIu64, blk_end[2]);
    CHECK(strstr(err, want) != NULL, "dump of a cut file: stderr '%s', expected '%s'", err, want);
    free(out);
    free(err);
    write_file(cut, full, (size_t)blk_end[3]);
    st = run_flowcut(&out, &err, "info '%s'", cut);
    snprintf(want, sizeof want, "no END block: file ends at offset %" PRIu64, blk_end[3]);
    CHECK(st == 0 && strstr(out, "partial:     yes") && strstr(out, want), "info of a cut file: exit %d\n%s%s", st,
          out, err);
    free(out);
    free(err);
}

static void test_flips(const unsigned char *full, size_t size)
{
    char bad[4200];
    snprintf(bad, sizeof bad, "%s", in_scratch("flip.fct"));
    unsigned char *b = malloc(size);
    REQUIRE(b != NULL, "out of memory");
    uint64_t total = 0;
    for (int k = 0; k < NBLK; k++)
        total += blk_count[k];
    /* Every byte flipped in turn: never a crash, and damage to any payload is an error. */
    for (size_t i = 0; i < size; i++) {
        uint64_t events;
        int partial;
        memcpy(b, full, size);
        b[i] ^= 0x40;
        write_file(bad, b, size);
        int rc = read_everything(bad, &events, &partial);
        /* Damage is an error, or the file is read whole: never fewer events without a word. */
        if (rc == 0 && !partial)
            CHECK(events == total, "flip at %zu: read %" PRIu64 " events of %" PRIu64 ", no error", i, events, total);
        for (int k = 0; k < NBLK; k++)
            if (i >= blk_start[k] + FC_BLOCK_HEADER_SIZE && i < blk_end[k])
                CHECK(rc == FC_ECORRUPT && strstr(fc_errmsg(), "block crc mismatch"),
                      "flip at %zu (EVENTS payload): rc %d '%s'", i, rc, fc_errmsg());
        if (rc < 0)
            CHECK(strstr(fc_errmsg(), "flip.fct") != NULL, "flip at %zu: message '%s'", i, fc_errmsg());
    }
    free(b);
}

/* The commands on a directory with one damaged rank file. */
static void test_commands(const char *dir, const unsigned char *full, size_t size)
{
    char path[4200], *out, *err, want[4600];
    unsigned char *b = malloc(size);
    REQUIRE(b != NULL, "out of memory");
    rank_file(path, sizeof path, dir, 0);

    /* A flipped byte in the payload of the third EVENTS block. */
    memcpy(b, full, size);
    b[blk_start[2] + FC_BLOCK_HEADER_SIZE + 2] ^= 1;
    write_file(path, b, size);
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": block crc mismatch\n", path, blk_start[2]);
    const char *cmds[] = {"dump", "info", "info --json"};
    for (size_t k = 0; k < 3; k++) {
        int st = run_flowcut(&out, &err, "%s '%s'", cmds[k], dir);
        CHECK(st == 1 && count_lines(err) == 1 && strstr(err, want) != NULL, "%s of a flipped byte: exit %d, '%s'",
              cmds[k], st, err);
        free(out);
        free(err);
    }
    /* In the COMMS block. */
    memcpy(b, full, size);
    b[comms_start + FC_BLOCK_HEADER_SIZE] ^= 0x80;
    write_file(path, b, size);
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": block crc mismatch", path, comms_start);
    int st = run_flowcut(&out, &err, "dump '%s'", dir);
    CHECK(st == 1 && strstr(err, want) != NULL, "dump of a flipped COMMS byte: exit %d, '%s'", st, err);
    free(out);
    free(err);

    /* A newer major version is refused; a newer minor is read. */
    memcpy(b, full, size);
    fc_put_u16(b + FC_FH_MAJOR, FC_FORMAT_MAJOR + 1);
    write_file(path, b, size);
    snprintf(want, sizeof want, "%s: offset %d: format version %d.%d is newer", path, FC_FH_MAJOR, FC_FORMAT_MAJOR + 1,
             FC_FORMAT_MINOR);
    st = run_flowcut(&out, &err, "info '%s'", dir);
    CHECK(st == 1 && count_lines(err) == 1 && strstr(err, want), "newer major: exit %d, '%s'", st, err);
    free(out);
    free(err);
    memcpy(b, full, size);
    fc_put_u16(b + FC_FH_MINOR, FC_FORMAT_MINOR + 7);
    write_file(path, b, size);
    st = run_flowcut(&out, &err, "dump --no-sites '%s'", dir);
    CHECK(st == 0 && err[0] == '\0', "newer minor: exit %d, '%s'", st, err);
    free(out);
    free(err);

    /* A damaged block kind: the crc covers the payload only. In a file of this version an unknown
     * kind is refused; in a newer minor's it is skipped, and END's count of events, which the
     * EVENTS blocks no longer hold, gives it away. */
    uint64_t total = 0, end_at = file_size;
    for (int k = 0; k < NBLK; k++)
        total += blk_count[k];
    memcpy(b, full, size);
    fc_put_u32(b + blk_start[2] + FC_BH_KIND, 200);
    write_file(path, b, size);
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": unknown block kind 200", path, blk_start[2]);
    st = run_flowcut(&out, &err, "info '%s'", dir);
    CHECK(st == 1 && count_lines(err) == 1 && strstr(err, want), "unknown kind: exit %d, '%s'", st, err);
    free(out);
    free(err);
    fc_put_u16(b + FC_FH_MINOR, FC_FORMAT_MINOR + 1);
    write_file(path, b, size);
    /* END is the last block; its header starts where the file's last block does. */
    for (uint64_t off = blk_end[NBLK - 1]; off + FC_BLOCK_HEADER_SIZE <= size;) {
        uint64_t next = off + FC_BLOCK_HEADER_SIZE + fc_get_u32(b + off + FC_BH_STORED_LEN);
        if (fc_get_u32(b + off + FC_BH_KIND) == FC_BLK_END)
            end_at = off;
        off = next;
    }
    CHECK(end_at < size, "no END block found in the test file");
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": END block counts %" PRIu64 " events, the EVENTS blocks before it hold %" PRIu64,
             path, end_at, total, total - blk_count[2]);
    st = run_flowcut(&out, &err, "dump --no-sites '%s'", dir);
    CHECK(st == 1 && count_lines(err) == 1 && strstr(err, want), "newer minor, a kind damaged: exit %d, '%s', expected '%s'",
          st, err, want);
    free(out);
    free(err);
    /* An EVENTS block whose kind reads END: the file's end comes early, and is refused. */
    memcpy(b, full, size);
    fc_put_u32(b + blk_start[2] + FC_BH_KIND, FC_BLK_END);
    write_file(path, b, size);
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": ", path, blk_start[2]);
    st = run_flowcut(&out, &err, "info '%s'", dir);
    CHECK(st == 1 && count_lines(err) == 1 && strstr(err, want), "EVENTS read as END: exit %d, '%s'", st, err);
    free(out);
    free(err);

    /* Foreign byte order, bad magic, a sequence gap. */
    memcpy(b, full, size);
    b[FC_FH_BOM] = 0x0A, b[FC_FH_BOM + 1] = 0x0B, b[FC_FH_BOM + 2] = 0x0C, b[FC_FH_BOM + 3] = 0x0D;
    write_file(path, b, size);
    st = run_flowcut(&out, &err, "dump '%s'", dir);
    CHECK(st == 1 && strstr(err, "foreign byte order"), "foreign byte order: exit %d, '%s'", st, err);
    free(out);
    free(err);
    memcpy(b, full, size);
    b[0] = 'X';
    write_file(path, b, size);
    snprintf(want, sizeof want, "%s: offset 0: not a flowcut trace", path);
    st = run_flowcut(&out, &err, "dump '%s'", dir);
    CHECK(st == 1 && strstr(err, want), "bad magic: exit %d, '%s'", st, err);
    free(out);
    free(err);
    memcpy(b, full, size);
    fc_put_u32(b + blk_start[1] + FC_BH_SEQ, 99);
    write_file(path, b, size);
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": block sequence number 99", path, blk_start[1]);
    st = run_flowcut(&out, &err, "info '%s'", dir);
    CHECK(st == 1 && strstr(err, want), "sequence gap: exit %d, '%s'", st, err);
    free(out);
    free(err);

    /* In a directory, a rank file cut inside its header is a partial rank, not an error. */
    write_file(path, full, 40);
    snprintf(want, sizeof want, "rank 0: %s: offset 40: file cut inside the file header", path);
    st = run_flowcut(&out, &err, "info '%s'", dir);
    CHECK(st == 0 && strstr(out, "partial:     yes") && strstr(out, want), "header cut in a directory: exit %d\n%s%s",
          st, out, err);
    free(out);
    free(err);

    /* Missing trace and a directory without rank files. */
    st = run_flowcut(&out, &err, "dump '%s/nothing-here'", scratch);
    CHECK(st == 1 && count_lines(err) == 1 && strstr(err, "nothing-here"), "missing trace: exit %d, '%s'", st, err);
    free(out);
    free(err);
    st = run_flowcut(&out, &err, "info '%s'", in_scratch("empty"));
    CHECK(st == 1 && strstr(err, "no rank-*.fct files"), "empty directory: exit %d, '%s'", st, err);
    free(out);
    free(err);

    write_file(path, full, size);
    st = run_flowcut(&out, &err, "info --json '%s'", dir);
    CHECK(st == 0 && strstr(out, "\"partial\": false"), "restored trace: exit %d, '%s'", st, err);
    free(out);
    free(err);
    free(b);
}

int main(void)
{
    size_t size;
    scratch_make();
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/trace", scratch);
    REQUIRE(mkdir(dir, 0777) == 0 && mkdir(in_scratch("empty"), 0777) == 0, "mkdir");
    write_rank(dir, 0);
    write_rank(dir, 1);
    char path[4200];
    rank_file(path, sizeof path, dir, 0);
    unsigned char *full = read_file(path, &size);
    REQUIRE(size == file_size, "file size %zu, writer said %" PRIu64, size, file_size);
    test_truncation(full, size);
    test_flips(full, size);
    test_commands(dir, full, size);
    free(full);
    scratch_remove();
    if (fmt_failures)
        printf("FAIL: %d checks failed\n", fmt_failures);
    return fmt_failures ? 1 : 0;
}
