/* tests/format/test-format-roundtrip.c: writes a 3-rank trace with the writer, then checks the
 * output of `flowcut dump` and `flowcut info --json` against values this test works out itself
 * (clock alignment by hand, expected fields spelled out per event). */
#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include "fmt-util.h"

typedef struct spec {
    int rank;
    unsigned thread;
    fc_event ev;
    const char *pre;  /* expected fields between kind= and dur= */
    int dur;          /* 1 when dur= is expected */
    const char *post; /* expected text after dur= (flags=, site=) */
} spec;

#define EV(kind, t0, t1, peer, tag, comm, bytes, obj, site, flags, bytes2)                         \
    ((fc_event){FC_EV_##kind, 0, t0, t1, peer, tag, comm, bytes, obj, site, flags, bytes2})
#define NONE FC_PEER_NONE

/* Line of the call that record_site's return address points into; set by where_am_i. */
static int site_line;
static uint64_t site_addr;
static __attribute__((noinline)) void record_site(void)
{
    site_addr = (uint64_t)(uintptr_t)__builtin_return_address(0) - 1;
    __asm__ volatile("" ::: "memory"); /* keep the call a call, not a tail jump */
}
static __attribute__((noinline)) void where_am_i(void)
{
    site_line = __LINE__ + 1;
    record_site();
    __asm__ volatile("" ::: "memory");
}

static spec specs[] = {
    {0, 0, EV(MPI_Init, 1000000, 3000000, NONE, 0, 0, 0, 0, 0, 0, 0), "", 1, ""},
    {0, 0, EV(MPI_Isend, 4000000, 4000500, 1, 7, 0, 1024, 0xA0, 1, 0, 0), "peer=1 tag=7 comm=0 bytes=1024 req=1", 1,
     " site=app+0x1234"},
    {0, 0, EV(MPI_Wait, 5000000, 9000000, NONE, 0, 0, 0, 0xA0, 0, 0, 0), "req=1", 1, ""},
    {0, 0, EV(COMPLETE, 9000000, 9000000, NONE, 0, 0, 0, 0xA0, 0, 0, 0), "req=1", 0, ""},
    {0, 0, EV(MPI_Bcast, 20000000, 21000000, 0, 0, 0, 8, 0, 2, 0, 8), "peer=0 comm=0 bytes=8 bytes2=8", 1, NULL},
    {0, 0, EV(MPI_Finalize, 30000000, 31000000, NONE, 0, 0, 0, 0, 0, 0, 0), "", 1, ""},
    {1, 0, EV(MPI_Init, 0, 2000000, NONE, 0, 0, 0, 0, 0, 0, 0), "", 1, ""},
    {1, 0, EV(MPI_Irecv, 3000000, 3000100, FC_PEER_ANY, FC_TAG_ANY, 0, 1024, 0xA0, 0, FC_EVF_ANY_SOURCE | FC_EVF_ANY_TAG, 0),
     "peer=any tag=any comm=0 bytes=1024 req=1", 1, " flags=any_source,any_tag"},
    {1, 0, EV(MPI_Waitall, 4000000, 8000000, NONE, 0, 0, 0, 0, 0, 0, 1), "bytes2=1", 1, ""},
    {1, 0, EV(COMPLETE, 8000000, 8000000, 0, 7, 0, 1024, 0xA0, 0, FC_EVF_STATUS, 0), "peer=0 tag=7 bytes=1024 req=1", 0,
     " flags=status"},
    {1, 0, EV(MPI_Comm_split, 10000000, 11000000, NONE, 0, 0, 0, 3, 0, 0, 0), "comm=0 newcomm=2", 1, ""},
    {1, 0, EV(MPI_Send, 12000000, 12000200, 0, 3, 2, 16, 0, 0, 0, 0), "peer=2 tag=3 comm=2 bytes=16", 1, ""},
    {1, 0, EV(MPI_Bcast, 19000000, 20000000, 0, 0, 0, 0, 0, 0, 0, 8), "peer=0 comm=0 bytes=0 bytes2=8", 1, ""},
    {1, 0, EV(MPI_Finalize, 29000000, 30000000, NONE, 0, 0, 0, 0, 0, 0, 0), "", 1, ""},
    {2, 0, EV(MPI_Init, 600000, 2000000, NONE, 0, 0, 0, 0, 0, 0, 0), "", 1, ""},
    {2, 0, EV(MPI_Comm_split, 10500000, 11500000, NONE, 0, 0, 0, 3, 0, 0, 0), "comm=0 newcomm=2", 1, ""},
    {2, 0, EV(MPI_Recv, 12600000, 13000000, 1, 3, 2, 16, 0, 0, 0, 0), "peer=1 tag=3 comm=2 bytes=16", 1, ""},
    {2, 1, EV(MPI_Send, 14000000, 14000001, FC_PEER_NULL, 0, 0, 0, 0, 0, 0, 0), "peer=null tag=0 comm=0 bytes=0", 1, ""},
    {2, 0, EV(MPI_Bcast, 20600000, 21000000, 0, 0, 0, 0, 0, 0, 0, 8), "peer=0 comm=0 bytes=0 bytes2=8", 1, ""},
    {2, 0, EV(MPI_Finalize, 30500000, 31000000, NONE, 0, 0, 0, 0, 0, 0, 0), "", 1, ""},
};
#define NSPECS (sizeof specs / sizeof *specs)

/* Clocks: rank 1 drifts from +1 ms to +1.002 ms over 2 s; rank 2 has INIT only; rank 0 none. */
static const fc_clock clk1[] = {{FC_CLOCK_INIT, 0, 1000000, 200, 10, 400},
                                {FC_CLOCK_FINALIZE, 2000000000, 1002000, 300, 10, 600}};
static const fc_clock clk2[] = {{FC_CLOCK_INIT, 5, -500000, 100, 10, 200}};
static const char warn_text[] = "quote \" backslash \\ tab\t end";

/* This test's own alignment: offset = a + (b - a) * (t - la) / (lb - la), here always exact. */
static int64_t hand_align(int rank, uint64_t t)
{
    if (rank == 1)
        return (int64_t)t + 1000000 + (int64_t)((double)2000 * (double)t / 2e9);
    if (rank == 2)
        return (int64_t)t - 500000;
    return (int64_t)t;
}

static void write_trace(const char *dir, const char *self, uint64_t self_off)
{
    static const uint32_t world[] = {0, 1, 2}, sub[] = {2, 1};
    static const char *const nodes[] = {"n0", "n0", "n1"};
    for (int r = 0; r < 3; r++) {
        char path[4200];
        fc_writer *w;
        uint32_t me = (uint32_t)r;
        fc_comm comms[3] = {{0, 0, 3, 0, world, NULL, 0}, {1, 0, 1, 0, &me, NULL, 0}, {2, 0, 2, 0, sub, NULL, 0}};
        fc_rank_info in;
        memset(&in, 0, sizeof in);
        in.present = (UINT64_C(1) << FC_RK_RANK) | (UINT64_C(1) << FC_RK_SIZE) | (UINT64_C(1) << FC_RK_NODE) |
                     (UINT64_C(1) << FC_RK_HOST) | (UINT64_C(1) << FC_RK_MPI_VERSION);
        in.rank = me;
        in.size = 3;
        in.node = nodes[r];
        in.host = nodes[r];
        in.mpi_version = "MPICH Version: 4.0.2";
        rank_file(path, sizeof path, dir, r);
        assert_msg(fc_writer_open(path, me, 3, 0, 100 + me, 0, &w) == 0, "%s", fc_errmsg());
        assert_msg(fc_writer_rank(w, &in) == 0, "%s", fc_errmsg());
        assert_msg(fc_writer_comms(w, comms, r == 0 ? 2 : 3) == 0, "%s", fc_errmsg());
        if (r == 0) {
            fc_module mods[] = {{0, 0x400000, 0x1000, "/nonexistent/dir/app", ""}, {1, 0, 0, self, ""}};
            fc_frame f1[] = {{0, 0x1234}}, f2[] = {{1, self_off}, {0, 0x10}};
            fc_site sites[] = {{1, 1, f1}, {2, 2, f2}};
            assert_msg(fc_writer_modules(w, mods, 2) == 0, "%s", fc_errmsg());
            assert_msg(fc_writer_sites(w, sites, 2) == 0, "%s", fc_errmsg());
        }
        if (r == 1)
            assert_msg(fc_writer_clock(w, clk1, 2) == 0, "%s", fc_errmsg());
        if (r == 2) {
            assert_msg(fc_writer_clock(w, clk2, 1) == 0, "%s", fc_errmsg());
            assert_msg(fc_writer_warn(w, warn_text) == 0, "%s", fc_errmsg());
        }
        /* Each thread's events in chunks of at most 3, to cross block boundaries. */
        for (unsigned th = 0; th < 2; th++) {
            fc_event chunk[3];
            size_t n = 0;
            for (size_t i = 0; i <= NSPECS; i++) {
                int mine = i < NSPECS && specs[i].rank == r && specs[i].thread == th;
                if (mine)
                    chunk[n++] = specs[i].ev;
                if (n > 0 && (n == 3 || i == NSPECS)) {
                    assert_msg(fc_writer_events(w, th, chunk, n) == 0, "%s", fc_errmsg());
                    n = 0;
                }
            }
        }
        assert_msg(fc_writer_end(w, 0, FC_END_FINALIZE, 31000000, 0) == 0, "%s", fc_errmsg());
        assert_msg(fc_writer_close(w) == 0, "%s", fc_errmsg());
    }
}

static int cmp_spec(const void *a, const void *b)
{
    const spec *x = *(const spec *const *)a, *y = *(const spec *const *)b;
    int64_t tx = hand_align(x->rank, x->ev.t0), ty = hand_align(y->rank, y->ev.t0);
    if (tx != ty)
        return tx < ty ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return x < y ? -1 : x > y;
}

static void seconds(char *buf, size_t n, int64_t ns)
{
    snprintf(buf, n, "%s%" PRId64 ".%09" PRId64, ns < 0 ? "-" : "", (ns < 0 ? -ns : ns) / 1000000000,
             (ns < 0 ? -ns : ns) % 1000000000);
}

/* The dump this test expects, for rank filter rank (-1: all) and kind filter kind (-1: all). */
static char *expected_dump(int rank, int kind, int sites)
{
    const spec *order[NSPECS];
    size_t cap = 65536, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    out[0] = '\0';
    for (size_t i = 0; i < NSPECS; i++)
        order[i] = &specs[i];
    qsort(order, NSPECS, sizeof *order, cmp_spec);
    int64_t origin = hand_align(0, specs[0].ev.t0); /* rank 0's first event */
    for (size_t i = 0; i < NSPECS; i++) {
        const spec *s = order[i];
        char t[40], d[40];
        if ((rank >= 0 && s->rank != rank) || (kind >= 0 && (int)s->ev.kind != kind))
            continue;
        seconds(t, sizeof t, hand_align(s->rank, s->ev.t0) - origin);
        seconds(d, sizeof d, (int64_t)(s->ev.t1 - s->ev.t0));
        const char *post = s->post;
        if (!sites && strncmp(post, " site=", 6) == 0)
            post = ""; /* --no-sites */
        n += (size_t)snprintf(out + n, cap - n, "time=%s rank=%d thread=%u kind=%s%s%s%s%s%s\n", t, s->rank,
                              s->thread, fc_event_kind_name(s->ev.kind), s->pre[0] ? " " : "", s->pre,
                              s->dur ? " dur=" : "", s->dur ? d : "", post);
        assert_msg(n < cap - 512, "expected dump too long");
    }
    return out;
}

/* `flowcut dump ARGS` of the trace prints exactly the lines expected_dump gives, and nothing on
 * stderr. */
static void check_dump(const char *args, int rank, int kind, int sites)
{
    char *out, *err, *want = expected_dump(rank, kind, sites);
    int st = run_flowcut(&out, &err, "dump %s '%s'", args, scratch);
    assert_msg(st == 0, "flowcut dump %s exited %d: %s", args, st, err);
    assert_string_equal(out, want);
    assert_string_equal(err, "");
    free(out);
    free(err);
    free(want);
}

/* Resolved call sites need addr2line; without it the sites are not checked. */
static void test_dump_with_sites(void **state)
{
    (void)state;
    if (system("command -v addr2line >/dev/null 2>&1") != 0) {
        print_message("addr2line missing: resolved call sites not checked\n");
        skip();
    }
    check_dump("", -1, -1, 1);
}

static void test_dump_no_sites(void **state)
{
    (void)state;
    check_dump("--no-sites", -1, -1, 0);
}

static void test_dump_rank_filter(void **state)
{
    (void)state;
    check_dump("--no-sites --rank 1", 1, -1, 0);
}

static void test_dump_kind_filter(void **state)
{
    (void)state;
    check_dump("--no-sites --kind COMPLETE", -1, FC_EV_COMPLETE, 0);
}

static void test_dump_kind_and_rank_filters(void **state)
{
    (void)state;
    check_dump("--no-sites --kind MPI_Bcast --rank 2", 2, FC_EV_MPI_Bcast, 0);
}

/* `flowcut info --json`: the counts, bytes, nodes and duration this test works out from specs. */
static void test_info_json_fields(void **state)
{
    (void)state;
    char *out, *err;
    int64_t first = INT64_MAX, last = INT64_MIN;
    uint64_t sends = 0, send_bytes = 0;
    for (size_t i = 0; i < NSPECS; i++) {
        int64_t a = hand_align(specs[i].rank, specs[i].ev.t0), b = hand_align(specs[i].rank, specs[i].ev.t1);
        first = a < first ? a : first;
        last = b > last ? b : last;
        if (specs[i].ev.kind == FC_EV_MPI_Send) {
            sends++;
            send_bytes += specs[i].ev.bytes;
        }
    }
    int st = run_flowcut(&out, &err, "info --json '%s'", scratch);
    assert_msg(st == 0, "flowcut info exited %d: %s", st, err);
    char want[256];
    const char *subs[] = {"\"ranks\": 3", "\"partial\": false",
                          "\"nodes\": [{\"name\": \"n0\", \"ranks\": [0, 1]}, {\"name\": \"n1\", \"ranks\": [2]}]",
                          "\"MPI_Bcast\": 3", "\"COMPLETE\": 2", "\"mpi_version\": \"MPICH Version: 4.0.2\"",
                          "\"max_uncertainty_ns\": 300"};
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++)
        assert_contains(out, subs[i]);
    snprintf(want, sizeof want, "\"events_total\": %zu", NSPECS);
    assert_contains(out, want);
    snprintf(want, sizeof want, "\"events\": {\"MPI_Init\": 3, \"MPI_Finalize\": 3, \"MPI_Send\": %" PRIu64, sends);
    assert_contains(out, want);
    snprintf(want, sizeof want, "\"bytes\": {\"MPI_Send\": %" PRIu64, send_bytes);
    assert_contains(out, want);
    snprintf(want, sizeof want, "\"duration_s\": %.9f", (double)(last - first) / 1e9);
    assert_contains(out, want);
    free(out);
    free(err);
}

/* The JSON parses, and the warning with quotes, backslash and tab comes back intact. */
static void test_info_json_parses(void **state)
{
    (void)state;
    char *out, *err;
    int st = run_flowcut(&out, &err, "info --json '%s'", scratch);
    assert_msg(st == 0, "flowcut info exited %d: %s", st, err);
    FILE *f = fopen(in_scratch("info.json"), "w");
    assert_non_null(f);
    fputs(out, f);
    fclose(f);
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
             "sys.exit(0 if d[\"warnings\"][0][\"text\"] == sys.argv[2] and d[\"ranks\"] == 3 else 3)' '%s' '%s'",
             in_scratch("info.json"), "quote \" backslash \\ tab\t end");
    assert_msg(system(cmd) == 0, "info --json does not parse as expected:\n%s", out);
    free(out);
    free(err);
}

static void test_info_text(void **state)
{
    (void)state;
    char *out, *err;
    int st = run_flowcut(&out, &err, "info '%s'", scratch);
    assert_msg(st == 0, "flowcut info exited %d: %s", st, err);
    assert_contains(out, "partial:     no");
    assert_contains(out, "n1: rank 2");
    free(out);
    free(err);
}

/* Writes the trace once for all the tests; site 2's first frame is a call inside this program. */
static int write_once(void **state)
{
    (void)state;
    static char self[PATH_MAX], site[512];
    Dl_info dl;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_msg(n > 0, "readlink /proc/self/exe");
    self[n] = '\0';
    where_am_i();
    /* ELF virtual address of the call inside this (position-independent) executable. */
    assert_msg(dladdr((void *)(uintptr_t)site_addr, &dl) != 0, "dladdr");
    uint64_t self_off = site_addr - (uint64_t)(uintptr_t)dl.dli_fbase;
    /* Site 2 has two frames: this call, then offset 0x10 of a module that does not exist (named by
     * module and offset); dump prints the chain innermost first, joined by '<'. */
    snprintf(site, sizeof site, " site=where_am_i@test-format-roundtrip.c:%d<app+0x10", site_line);
    specs[4].post = site;
    scratch_make();
    write_trace(scratch, self, self_off);
    return 0;
}

static int remove_scratch(void **state)
{
    (void)state;
    scratch_remove();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump_with_sites),
        cmocka_unit_test(test_dump_no_sites),
        cmocka_unit_test(test_dump_rank_filter),
        cmocka_unit_test(test_dump_kind_filter),
        cmocka_unit_test(test_dump_kind_and_rank_filters),
        cmocka_unit_test(test_info_json_fields),
        cmocka_unit_test(test_info_json_parses),
        cmocka_unit_test(test_info_text),
    };
    return cmocka_run_group_tests(tests, write_once, remove_scratch);
}
