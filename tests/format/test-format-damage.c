/* tests/format/test-format-damage.c: damaged traces never crash the reader: a file cut at every
 * offset reads up to its last complete block (or fails cleanly inside the file header), flipped
 * bytes are caught, a newer major version, a foreign byte order and bad magic are refused, and in a
 * trace directory each costs the damaged rank only: the commands read the other ranks, exit 0 and
 * name the file and offset in their warnings. The group's setup writes a
 * two-rank trace; each test damages a copy of rank 0's file (or the file itself, which each test
 * that reads the directory writes first). */
#include <inttypes.h>
#include <sys/stat.h>
#include "fmt-util.h"

#define NBLK 6

/* Where the writer put rank 0's EVENTS blocks: start of header, end of payload, events. */
static uint64_t blk_start[NBLK], blk_end[NBLK], blk_count[NBLK];
static uint64_t comms_start, file_size;

static void write_rank(const char *dir, uint32_t r)
{
    char path[4300];
    fc_writer *w;
    static const uint32_t world[] = {0, 1};
    fc_comm comm = {0, 0, 2, 0, world, NULL, 0};
    rank_file(path, sizeof path, dir, (int)r);
    assert_msg(fc_writer_open(path, r, 2, 0, 1, 0, &w) == 0, "%s", fc_errmsg());
    fc_rank_info in;
    memset(&in, 0, sizeof in);
    in.present = (UINT64_C(1) << FC_RK_HOST) | (UINT64_C(1) << FC_RK_RANK);
    in.host = "host";
    in.rank = r;
    assert_msg(fc_writer_rank(w, &in) == 0, "%s", fc_errmsg());
    if (r == 0)
        comms_start = fc_writer_offset(w);
    assert_msg(fc_writer_comms(w, &comm, 1) == 0, "%s", fc_errmsg());
    uint64_t t = 1000;
    for (int b = 0; b < NBLK; b++) {
        fc_event ev[8];
        size_t n = (size_t)b + 1;
        for (size_t i = 0; i < n; i++, t += 100)
            ev[i] = (fc_event){.kind = FC_EV_MPI_Send, .t0 = t, .t1 = t + 50, .peer = 1 - (int)r, .tag = b,
                               .bytes = 8 * i};
        if (r == 0)
            blk_start[b] = fc_writer_offset(w);
        assert_msg(fc_writer_events(w, 0, ev, n) == 0, "%s", fc_errmsg());
        if (r == 0) {
            blk_end[b] = fc_writer_offset(w);
            blk_count[b] = n;
        }
    }
    assert_msg(fc_writer_warn(w, "a warning") == 0, "%s", fc_errmsg());
    assert_msg(fc_writer_end(w, 0, FC_END_FINALIZE, t, 0) == 0, "%s", fc_errmsg());
    if (r == 0)
        file_size = fc_writer_offset(w);
    assert_msg(fc_writer_close(w) == 0, "%s", fc_errmsg());
}

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_msg(f != NULL, "open %s", path);
    unsigned char *b = malloc(1 << 20);
    assert_non_null(b);
    *n = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

static void write_file(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_msg(f != NULL && fwrite(b, 1, n, f) == n && fclose(f) == 0, "write %s", path);
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

/* Rank 0's file as the writer left it, and the trace directory. */
static unsigned char *full;
static size_t size;
static char dir[4200], path[4300];

static int write_trace(void **state)
{
    (void)state;
    scratch_make();
    snprintf(dir, sizeof dir, "%s/trace", scratch);
    assert_int_equal(mkdir(dir, 0777), 0);
    assert_int_equal(mkdir(in_scratch("empty"), 0777), 0);
    write_rank(dir, 0);
    write_rank(dir, 1);
    rank_file(path, sizeof path, dir, 0);
    full = read_file(path, &size);
    assert_msg(size == file_size, "file size %zu, writer said %" PRIu64, size, file_size);
    return 0;
}

static int remove_trace(void **state)
{
    (void)state;
    free(full);
    scratch_remove();
    return 0;
}

static uint64_t total_events(void)
{
    uint64_t total = 0;
    for (int k = 0; k < NBLK; k++)
        total += blk_count[k];
    return total;
}

/* The library on the file cut at every offset: inside the file header an error naming the file
 * and offset; after it, the events of the blocks that end within the cut, partial unless whole. */
static void test_cut_at_every_offset(void **state)
{
    (void)state;
    char cut[4200];
    snprintf(cut, sizeof cut, "%s", in_scratch("cut.fct")); /* in_scratch's buffers are reused */
    for (size_t len = 0; len <= size; len++) {
        uint64_t events, want = 0;
        int partial = 0;
        write_file(cut, full, len);
        int rc = read_everything(cut, &events, &partial);
        if (len < FC_FILE_HEADER_SIZE) {
            assert_msg(rc == FC_ETRUNCATED, "cut at %zu: rc %d, expected FC_ETRUNCATED", len, rc);
            assert_msg(strstr(fc_errmsg(), "cut.fct: offset ") != NULL, "cut at %zu: message '%s'", len, fc_errmsg());
            continue;
        }
        /* Events of the blocks that end within the cut, by the writer's offsets. */
        for (int b = 0; b < NBLK; b++)
            if (blk_end[b] <= len)
                want += blk_count[b];
        assert_msg(rc == 0, "cut at %zu: %s", len, fc_errmsg());
        assert_msg(events == want, "cut at %zu: %" PRIu64 " events, expected %" PRIu64, len, events, want);
        assert_msg(partial == (len < size), "cut at %zu: partial %d", len, partial);
    }
}

/* The commands on a file cut inside the file header: one line naming the offset, exit 1. */
static void test_cut_in_header_commands(void **state)
{
    (void)state;
    char *out, *err, cut[4200];
    snprintf(cut, sizeof cut, "%s", in_scratch("cut.fct"));
    write_file(cut, full, 40);
    int st = run_flowcut(&out, &err, "dump '%s'", cut);
    assert_msg(st == 1, "dump of a 40-byte file: exit %d, stderr '%s'", st, err);
    assert_int_equal(count_lines(err), 1);
    assert_contains(err, "cut.fct: offset 40: file cut inside the file header");
    free(out);
    free(err);
}

/* Cut inside a block header: dump prints the events before it and says where the rank ends. */
static void test_cut_in_block_commands(void **state)
{
    (void)state;
    char *out, *err, cut[4200], want[200];
    snprintf(cut, sizeof cut, "%s", in_scratch("cut.fct"));
    write_file(cut, full, (size_t)blk_end[2] + 5);
    int st = run_flowcut(&out, &err, "dump --no-sites '%s'", cut);
    assert_msg(st == 0, "dump of a cut file: exit %d, '%s'", st, err);
    assert_int_equal(count_lines(out), blk_count[0] + blk_count[1] + blk_count[2]);
    snprintf(want, sizeof want, "rank 0 is partial: file cut inside a block header at offset %" PRIu64, blk_end[2]);
    assert_contains(err, want);
    free(out);
    free(err);
}

/* Cut at a block boundary before END: info calls the rank partial and says where the file ends. */
static void test_cut_at_block_boundary_info(void **state)
{
    (void)state;
    char *out, *err, cut[4200], want[200];
    snprintf(cut, sizeof cut, "%s", in_scratch("cut.fct"));
    write_file(cut, full, (size_t)blk_end[3]);
    int st = run_flowcut(&out, &err, "info '%s'", cut);
    assert_msg(st == 0, "info of a cut file: exit %d\n%s%s", st, out, err);
    snprintf(want, sizeof want, "no END block: file ends at offset %" PRIu64, blk_end[3]);
    assert_contains(out, "partial:     yes");
    assert_contains(out, want);
    free(out);
    free(err);
}

/* Every byte flipped in turn: never a crash, damage to an EVENTS payload is a crc error, every
 * error names the file, and a file read without error or partial mark holds every event. */
static void test_flip_every_byte(void **state)
{
    (void)state;
    char bad[4200];
    snprintf(bad, sizeof bad, "%s", in_scratch("flip.fct"));
    unsigned char *b = malloc(size);
    assert_non_null(b);
    uint64_t total = total_events();
    for (size_t i = 0; i < size; i++) {
        uint64_t events;
        int partial;
        memcpy(b, full, size);
        b[i] ^= 0x40;
        write_file(bad, b, size);
        int rc = read_everything(bad, &events, &partial);
        /* Damage is an error, or the file is read whole: never fewer events without a word. */
        if (rc == 0 && !partial)
            assert_msg(events == total, "flip at %zu: read %" PRIu64 " events of %" PRIu64 ", no error", i, events,
                       total);
        for (int k = 0; k < NBLK; k++)
            if (i >= blk_start[k] + FC_BLOCK_HEADER_SIZE && i < blk_end[k])
                assert_msg(rc == FC_ECORRUPT && strstr(fc_errmsg(), "block crc mismatch"),
                           "flip at %zu (EVENTS payload): rc %d '%s'", i, rc, fc_errmsg());
        if (rc < 0)
            assert_msg(strstr(fc_errmsg(), "flip.fct") != NULL, "flip at %zu: message '%s'", i, fc_errmsg());
    }
    free(b);
}

/* Writes rank 0's file of the directory as full with the changes of damage applied. */
static void write_damaged(void (*damage)(unsigned char *b))
{
    unsigned char *b = malloc(size);
    assert_non_null(b);
    memcpy(b, full, size);
    if (damage)
        damage(b);
    write_file(path, b, size);
    free(b);
}

/* Runs `flowcut CMD DIR`, and checks its exit status and that stderr contains want (in one line
 * when one_line is set). */
static void expect_error(const char *cmd, int status, int one_line, const char *want)
{
    char *out, *err;
    int st = run_flowcut(&out, &err, "%s '%s'", cmd, dir);
    assert_msg(st == status, "flowcut %s: exit %d, expected %d, stderr '%s'", cmd, st, status, err);
    if (one_line)
        assert_msg(count_lines(err) == 1, "flowcut %s: stderr '%s' is not one line", cmd, err);
    assert_contains(err, want);
    free(out);
    free(err);
}

/* One command on the trace directory, whose rank 0 is damaged and rank 1 whole: the damage costs
 * rank 0 only. The command exits 0, names the file and offset (want) in its warnings, on standard
 * error or in its report, and still reads rank 1: its 21 sends in dump, sends in info. */
static void expect_rank_lost(const char *cmd, const char *want)
{
    char *out, *err;
    int st = run_flowcut(&out, &err, "%s '%s'", cmd, dir);
    assert_msg(st == 0, "flowcut %s: exit %d, stderr '%s'", cmd, st, err);
    assert_msg(strstr(err, want) != NULL || strstr(out, want) != NULL, "flowcut %s does not name '%s': stderr '%s'",
               cmd, want, err);
    if (strncmp(cmd, "dump", 4) == 0) {
        int rank1 = 0;
        for (const char *p = out; (p = strstr(p, " rank=1 ")) != NULL; p++)
            rank1++;
        assert_msg(rank1 >= 21, "flowcut %s: %d records of rank 1, expected 21", cmd, rank1);
    } else {
        assert_contains(out, "MPI_Send");
    }
    free(out);
    free(err);
}

static const char *const cmds[] = {"dump --no-sites", "info", "info --json"};

static void flip_events_payload(unsigned char *b)
{
    b[blk_start[2] + FC_BLOCK_HEADER_SIZE + 2] ^= 1;
}

/* A flipped byte in the payload of the third EVENTS block: each command says where, reads rank 0
 * up to the damage and marks it partial. */
static void test_flip_in_events_commands(void **state)
{
    (void)state;
    char want[4600], *out, *err;
    write_damaged(flip_events_payload);
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": block crc mismatch", path, blk_start[2]);
    for (size_t k = 0; k < 3; k++)
        expect_rank_lost(cmds[k], want);
    int st = run_flowcut(&out, &err, "info --json '%s'", dir);
    assert_msg(st == 0, "info --json: exit %d, '%s'", st, err);
    assert_contains(out, "\"ranks_partial\": [{\"rank\": 0, \"file\": ");
    assert_contains(out, "\"ranks_missing\": []");
    free(out);
    free(err);
}

static void flip_comms(unsigned char *b)
{
    b[comms_start + FC_BLOCK_HEADER_SIZE] ^= 0x80;
}

static void test_flip_in_comms_command(void **state)
{
    (void)state;
    char want[4600];
    write_damaged(flip_comms);
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": block crc mismatch", path, comms_start);
    expect_rank_lost("dump --no-sites", want);
}

static void newer_major(unsigned char *b)
{
    fc_put_u16(b + FC_FH_MAJOR, FC_FORMAT_MAJOR + 1);
}

/* A newer major version is left out; the other rank is read. */
static void test_newer_major_left_out(void **state)
{
    (void)state;
    char want[4600];
    write_damaged(newer_major);
    snprintf(want, sizeof want, "%s: offset %d: format version %d.%d is newer", path, FC_FH_MAJOR, FC_FORMAT_MAJOR + 1,
             FC_FORMAT_MINOR);
    for (size_t k = 0; k < 3; k++)
        expect_rank_lost(cmds[k], want);
}

static void newer_minor(unsigned char *b)
{
    fc_put_u16(b + FC_FH_MINOR, FC_FORMAT_MINOR + 7);
}

static void test_newer_minor_read(void **state)
{
    (void)state;
    char *out, *err;
    write_damaged(newer_minor);
    int st = run_flowcut(&out, &err, "dump --no-sites '%s'", dir);
    assert_msg(st == 0, "newer minor: exit %d, '%s'", st, err);
    assert_string_equal(err, "");
    free(out);
    free(err);
}

/* A damaged block kind: the crc covers the payload only. In a file of this version an unknown
 * kind is damage. */
static void third_block_kind_200(unsigned char *b)
{
    fc_put_u32(b + blk_start[2] + FC_BH_KIND, 200);
}

static void test_unknown_block_kind_damage(void **state)
{
    (void)state;
    char want[4600];
    write_damaged(third_block_kind_200);
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": unknown block kind 200", path, blk_start[2]);
    expect_rank_lost("info", want);
}

/* In a newer minor's file the unknown kind is skipped, and END's count of events, which the
 * EVENTS blocks no longer hold, gives it away. */
static void third_block_kind_200_newer_minor(unsigned char *b)
{
    third_block_kind_200(b);
    fc_put_u16(b + FC_FH_MINOR, FC_FORMAT_MINOR + 1);
}

static void test_unknown_block_kind_newer_minor_counted(void **state)
{
    (void)state;
    char want[4600];
    uint64_t total = total_events(), end_at = file_size;
    write_damaged(third_block_kind_200_newer_minor);
    /* END is the last block; its header starts where the file's last block does. */
    for (uint64_t off = blk_end[NBLK - 1]; off + FC_BLOCK_HEADER_SIZE <= size;) {
        uint64_t next = off + FC_BLOCK_HEADER_SIZE + fc_get_u32(full + off + FC_BH_STORED_LEN);
        if (fc_get_u32(full + off + FC_BH_KIND) == FC_BLK_END)
            end_at = off;
        off = next;
    }
    assert_msg(end_at < size, "no END block found in the test file");
    snprintf(want, sizeof want,
             "%s: offset %" PRIu64 ": END block counts %" PRIu64 " events, the EVENTS blocks before it hold %" PRIu64,
             path, end_at, total, total - blk_count[2]);
    expect_rank_lost("dump --no-sites", want);
}

/* An EVENTS block whose kind reads END: the file's end comes early, and is damage. */
static void third_block_kind_end(unsigned char *b)
{
    fc_put_u32(b + blk_start[2] + FC_BH_KIND, FC_BLK_END);
}

static void test_events_read_as_end_damage(void **state)
{
    (void)state;
    char want[4600];
    write_damaged(third_block_kind_end);
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": ", path, blk_start[2]);
    expect_rank_lost("info", want);
}

static void foreign_bom(unsigned char *b)
{
    b[FC_FH_BOM] = 0x0A, b[FC_FH_BOM + 1] = 0x0B, b[FC_FH_BOM + 2] = 0x0C, b[FC_FH_BOM + 3] = 0x0D;
}

static void test_foreign_byte_order_left_out(void **state)
{
    (void)state;
    char want[4600];
    write_damaged(foreign_bom);
    snprintf(want, sizeof want, "%s: offset %d: trace has a foreign byte order", path, FC_FH_BOM);
    expect_rank_lost("dump --no-sites", want);
}

static void bad_magic(unsigned char *b)
{
    b[0] = 'X';
}

static void test_bad_magic_left_out(void **state)
{
    (void)state;
    char want[4600];
    write_damaged(bad_magic);
    snprintf(want, sizeof want, "%s: offset 0: not a flowcut trace", path);
    for (size_t k = 0; k < 3; k++)
        expect_rank_lost(cmds[k], want);
}

/* When no rank file can be read, that is an error, named in one line. */
static void test_no_rank_readable(void **state)
{
    (void)state;
    char want[4600], path1[4300];
    size_t size1;
    write_damaged(bad_magic);
    rank_file(path1, sizeof path1, dir, 1);
    unsigned char *b1 = read_file(path1, &size1);
    unsigned char *b = malloc(size);
    assert_non_null(b);
    memcpy(b, full, size);
    bad_magic(b);
    write_file(path1, b, size);
    free(b);
    snprintf(want, sizeof want, "%s: offset 0: not a flowcut trace", path);
    expect_error("info", 1, 1, want);
    write_file(path1, b1, size1);
    free(b1);
}

static void sequence_gap(unsigned char *b)
{
    fc_put_u32(b + blk_start[1] + FC_BH_SEQ, 99);
}

static void test_sequence_gap_damage(void **state)
{
    (void)state;
    char want[4600];
    write_damaged(sequence_gap);
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": block sequence number 99", path, blk_start[1]);
    expect_rank_lost("info", want);
}

/* A symbolic link where rank 0's file belongs, even to a valid rank file, is not followed: the rank
 * is missing, named in ranks_missing and in the warnings. */
static void test_symbolic_link_not_followed(void **state)
{
    (void)state;
    char want[4600], target[4400], member[9300], *out, *err;
    snprintf(target, sizeof target, "%s.elsewhere", path);
    write_file(target, full, size);
    assert_msg(unlink(path) == 0 && symlink(target, path) == 0, "symlink %s", path);
    snprintf(want, sizeof want, "%s: a symbolic link, not a rank file", path);
    for (size_t k = 0; k < 3; k++)
        expect_rank_lost(cmds[k], want);
    int st = run_flowcut(&out, &err, "info --json '%s'", dir);
    assert_msg(st == 0, "info --json: exit %d, '%s'", st, err);
    snprintf(member, sizeof member, "\"ranks_missing\": [{\"rank\": 0, \"file\": \"%s\", \"reason\": \"%s", path,
             want);
    assert_contains(out, member);
    assert_contains(out, "\"ranks_partial\": []");
    assert_contains(out, "\"warnings\": [{\"rank\": 0, \"text\": \"rank file not read");
    free(out);
    free(err);
    assert_msg(unlink(path) == 0 && unlink(target) == 0, "unlink %s", path);
}

/* A directory where rank 0's file belongs is not a rank file either. */
static void test_directory_as_rank_file(void **state)
{
    (void)state;
    char want[4600];
    unlink(path);
    assert_msg(mkdir(path, 0700) == 0, "mkdir %s", path);
    snprintf(want, sizeof want, "%s: not a regular file", path);
    expect_rank_lost("info --json", want);
    assert_msg(rmdir(path) == 0, "rmdir %s", path);
}

/* In a directory, a rank file cut inside its header is a partial rank, not an error. */
static void test_header_cut_in_directory_is_partial(void **state)
{
    (void)state;
    char *out, *err, want[4600];
    write_file(path, full, 40);
    snprintf(want, sizeof want, "rank 0: %s: offset 40: file cut inside the file header", path);
    int st = run_flowcut(&out, &err, "info '%s'", dir);
    assert_msg(st == 0, "header cut in a directory: exit %d\n%s%s", st, out, err);
    assert_contains(out, "partial:     yes");
    assert_contains(out, want);
    free(out);
    free(err);
}

static void test_missing_trace(void **state)
{
    (void)state;
    char *out, *err;
    int st = run_flowcut(&out, &err, "dump '%s/nothing-here'", scratch);
    assert_msg(st == 1, "missing trace: exit %d, '%s'", st, err);
    assert_int_equal(count_lines(err), 1);
    assert_contains(err, "nothing-here");
    free(out);
    free(err);
}

static void test_directory_without_rank_files(void **state)
{
    (void)state;
    char *out, *err;
    int st = run_flowcut(&out, &err, "info '%s'", in_scratch("empty"));
    assert_msg(st == 1, "empty directory: exit %d, '%s'", st, err);
    assert_contains(err, "no rank-*.fct files");
    free(out);
    free(err);
}

/* The undamaged file reads whole again after all the damage above. */
static void test_restored_trace(void **state)
{
    (void)state;
    char *out, *err;
    write_file(path, full, size);
    int st = run_flowcut(&out, &err, "info --json '%s'", dir);
    assert_msg(st == 0, "restored trace: exit %d, '%s'", st, err);
    assert_contains(out, "\"partial\": false");
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_at_every_offset),
        cmocka_unit_test(test_cut_in_header_commands),
        cmocka_unit_test(test_cut_in_block_commands),
        cmocka_unit_test(test_cut_at_block_boundary_info),
        cmocka_unit_test(test_flip_every_byte),
        cmocka_unit_test(test_flip_in_events_commands),
        cmocka_unit_test(test_flip_in_comms_command),
        cmocka_unit_test(test_newer_major_left_out),
        cmocka_unit_test(test_newer_minor_read),
        cmocka_unit_test(test_unknown_block_kind_damage),
        cmocka_unit_test(test_unknown_block_kind_newer_minor_counted),
        cmocka_unit_test(test_events_read_as_end_damage),
        cmocka_unit_test(test_foreign_byte_order_left_out),
        cmocka_unit_test(test_bad_magic_left_out),
        cmocka_unit_test(test_no_rank_readable),
        cmocka_unit_test(test_sequence_gap_damage),
        cmocka_unit_test(test_symbolic_link_not_followed),
        cmocka_unit_test(test_directory_as_rank_file),
        cmocka_unit_test(test_header_cut_in_directory_is_partial),
        cmocka_unit_test(test_missing_trace),
        cmocka_unit_test(test_directory_without_rank_files),
        cmocka_unit_test(test_restored_trace),
    };
    return cmocka_run_group_tests(tests, write_trace, remove_trace);
}
