/* tests/unit/test-runtime-sites.c: call-site dedup, the MPI address ranges, the SITES and MODULES
 * payloads (module base and offset checked against dladdr), and the unwound-site cache, whose
 * frames are checked against __builtin_return_address taken in each function of a call chain and
 * whose unwinds are counted against the number of distinct chains the test makes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <cmocka.h>

#include "runtime.h"

static void here(void)
{
}

static void dedup(void **state)
{
    (void)state;
    uintptr_t a[3] = {0x1000, 0x2000, 0x3000}, b[3] = {0x1000, 0x2000, 0x3004};
    uint32_t s1 = fc__site_intern(a, 1), s2 = fc__site_intern(a + 1, 1);
    assert_int_equal(s1, 1); /* ids start at 1 and follow first sight */
    assert_int_equal(s2, 2);
    assert_int_equal(fc__site_intern(a, 1), 1);
    uint32_t s3 = fc__site_intern(a, 3), s4 = fc__site_intern(b, 3);
    assert_int_equal(s3, 3); /* the frame list, not its first frame, names a site */
    assert_int_equal(s4, 4);
    assert_int_equal(fc__site_intern(b, 3), 4);
    assert_int_equal(fc__site_intern(a, 2), 5);
    assert_int_equal(fc__site_intern(a, 0), 0);
}

static void ranges(void **state)
{
    (void)state;
    assert_true(fc__addr_ignored((uintptr_t)&PMPI_Send));
    assert_false(fc__addr_ignored((uintptr_t)&printf));
}

static void payload(void **state)
{
    (void)state;
    Dl_info info;
    uintptr_t ra = (uintptr_t)&here + 1; /* a "return address" inside this program */
    assert_int_not_equal(dladdr((void *)ra, &info), 0);
    uint32_t id = fc__site_intern(&ra, 1);
    fc__buf mods = {0}, sites = {0};
    uint32_t n = fc__sites_encode(&mods, &sites, 0);
    assert_int_equal(n, id);
    assert_false(mods.failed || sites.failed);
    fc__sites_mark_written(n);

    /* SITES: find our site; its module id names the module whose base dladdr reports. */
    const unsigned char *p = sites.p, *end = sites.p + sites.len;
    uint64_t cnt = 0, sid = 0, depth = 0, mod = 0, off = 0;
    assert_int_equal(fc_get_uvarint(&p, end, &cnt), 0);
    assert_true(cnt == id);
    for (uint64_t i = 0; i < cnt; i++) {
        fc_get_uvarint(&p, end, &sid);
        fc_get_uvarint(&p, end, &depth);
        for (uint64_t j = 0; j < depth; j++) {
            fc_get_uvarint(&p, end, &mod);
            fc_get_uvarint(&p, end, &off);
        }
    }
    assert_ptr_equal(p, end);
    assert_true(sid == id && depth == 1);
    assert_true(off == ra - 1 - (uintptr_t)info.dli_fbase);

    p = mods.p;
    end = mods.p + mods.len;
    assert_int_equal(fc_get_uvarint(&p, end, &cnt), 0);
    int found = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        uint64_t mid = 0, base = 0, size = 0, len = 0;
        fc_get_uvarint(&p, end, &mid);
        fc_get_uvarint(&p, end, &base);
        fc_get_uvarint(&p, end, &size);
        fc_get_uvarint(&p, end, &len);
        const char *path = (const char *)p;
        p += len;
        fc_get_uvarint(&p, end, &len);
        p += len;
        if (mid == mod) {
            found = 1;
            assert_true(base == (uintptr_t)info.dli_fbase);
            assert_true(off < size);
            /* The program is named by its real path; dladdr gives argv[0]'s spelling. */
            const char *slash = strrchr(info.dli_fname, '/');
            assert_non_null(memmem(path, (size_t)(p - (const unsigned char *)path),
                                   slash ? slash + 1 : info.dli_fname,
                                   strlen(slash ? slash + 1 : info.dli_fname)));
        }
    }
    assert_true(found);
    free(mods.p);
    free(sites.p);

    /* Nothing new: nothing to write. */
    fc__buf m2 = {0}, s2 = {0};
    fc__sites_encode(&m2, &s2, 0);
    assert_int_equal(s2.len, 0);
    assert_int_equal(m2.len, 0);
}

/* ---- unwound call sites ----------------------------------------------------------------------
 * entry() plays an MPI wrapper: it hands its frame address to fc__site, as the generated wrappers
 * do. Each function of the chain notes its own return address, which is the frame the unwind must
 * report one level further out. The chains below pass through the same immediate caller at the
 * same stack depth, so they share the cache's key (return address and stack pointer) and differ
 * only further out: the cache must tell them apart. noipa keeps the compiler from merging or
 * inlining the look-alike functions. */
#define NOIPA __attribute__((noinline, noipa))
#define DEPTH 3
static fc__thread thr;
static uintptr_t want[DEPTH]; /* the return addresses of entry, leaf, and mid or top */
static void *seen_fp;
static volatile uint32_t sink;

static NOIPA uint32_t entry(void)
{
    void *fp = __builtin_frame_address(0);
    seen_fp = fp;
    want[0] = (uintptr_t)__builtin_return_address(0);
    sink = fc__site(&thr, fp); /* stored, not returned: a tail call would drop the frame record */
    return sink;
}

static NOIPA uint32_t leaf(int x)
{
    want[1] = (uintptr_t)__builtin_return_address(0);
    uint32_t id = entry();
    sink = (uint32_t)x;
    return id;
}

#define MID(name, x)                                                                               \
    static NOIPA uint32_t name(void)                                                               \
    {                                                                                              \
        want[2] = (uintptr_t)__builtin_return_address(0);                                          \
        uint32_t id = leaf(x);                                                                     \
        sink = id;                                                                                 \
        return id;                                                                                 \
    }
MID(mid_a, 1)
MID(mid_b, 2)

/* Two callers of mid_a alike but for their address: the chains differ in the third frame only
 * (the return address into top_a or top_b, which mid_a notes as want[2]). */
#define TOP(name, x)                                                                               \
    static NOIPA uint32_t name(void)                                                               \
    {                                                                                              \
        uint32_t id = mid_a();                                                                     \
        sink = id + (x);                                                                           \
        return id;                                                                                 \
    }
TOP(top_a, 1)
TOP(top_b, 2)

/* Checks that site id names exactly the frames noted in want[] (innermost first). */
static void check_frames(uint32_t id, unsigned n)
{
    unsigned got = 0;
    const uintptr_t *f = fc__site_frames(id, &got);
    assert_non_null(f);
    assert_int_equal(got, n);
    for (unsigned i = 0; i < n; i++)
        assert_true(f[i] == want[i]);
}

/* Unwinds so far. */
static uint64_t unwinds(void)
{
    uint64_t u, r;
    uint32_t c;
    fc__site_stats(&u, &r, &c);
    return u;
}

/* Calls chain a then chain b, rounds times, each twice in a row; checks each call's frames, that
 * the ids stay apart, and that each chain is unwound once: the two chains share the cache's key,
 * which must hold both. */
static void alternate(uint32_t (*a)(void), uint32_t (*b)(void))
{
    uint64_t u0 = unwinds();
    uint32_t ida = 0, idb = 0;
    void *fpa = NULL, *fpb = NULL;
    for (int round = 0; round < 3; round++) {
        for (int twice = 0; twice < 2; twice++) {
            uint32_t id = a();
            check_frames(id, DEPTH);
            assert_true(ida == 0 || id == ida);
            ida = id;
            fpa = seen_fp;
        }
        for (int twice = 0; twice < 2; twice++) {
            uint32_t id = b();
            check_frames(id, DEPTH);
            assert_true(idb == 0 || id == idb);
            idb = id;
            fpb = seen_fp;
        }
    }
    assert_int_not_equal(ida, 0);
    assert_int_not_equal(idb, 0);
    assert_int_not_equal(ida, idb);
    /* The chains did share the cache key, so the test exercised the checks. */
    assert_ptr_equal(fpa, fpb);
    assert_int_equal(unwinds() - u0, 2);
}

static void unwound_differ_at_caller(void **state)
{
    (void)state;
    /* The runtime is linked into this program, whose frames it would skip as its own. */
    fc__sites_unignore((uintptr_t)&entry);
    assert_false(fc__addr_ignored((uintptr_t)&entry));
    assert_non_null(thr.deep);
    alternate(mid_a, mid_b);
}

static void unwound_differ_further_out(void **state)
{
    (void)state;
    alternate(top_a, top_b);
}

/* One helper (leaf) called from K lines of one function, as a halo exchange posts to each
 * neighbour: K chains that differ only in the return address into fan, all through the same call
 * entry. Called round-robin, they are unwound once each, K in all, and never again. */
#define K 6
static NOIPA uint32_t fan(int line)
{
    want[2] = (uintptr_t)__builtin_return_address(0);
    uint32_t id = 0;
    switch (line) {
    case 0: id = leaf(10); break;
    case 1: id = leaf(11); break;
    case 2: id = leaf(12); break;
    case 3: id = leaf(13); break;
    case 4: id = leaf(14); break;
    default: id = leaf(15); break;
    }
    sink = id;
    return id;
}

static void helper_from_k_lines(void **state)
{
    (void)state;
    uint32_t ids[K] = {0};
    uint64_t u0 = unwinds(), r0, u1, r1;
    uint32_t c0, c1;
    fc__site_stats(&u1, &r0, &c0);
    for (int round = 0; round < 20; round++)
        for (int line = 0; line < K; line++) {
            uint32_t id = fan(line);
            check_frames(id, DEPTH);
            assert_true(ids[line] == 0 || ids[line] == id);
            ids[line] = id;
        }
    for (int i = 0; i < K; i++)
        for (int j = 0; j < i; j++)
            assert_int_not_equal(ids[i], ids[j]);
    fc__site_stats(&u1, &r1, &c1);
    assert_int_equal(u1 - u0, K);
    assert_int_equal(r1 - r0, 0);
    assert_int_equal(c1 - c0, K);
}

/* Recursion: rec(n) reaches leaf n frames deeper. Each depth is a call entry of its own (another
 * stack pointer); from n = 1 on, the DEPTH frames recorded are the same chain (the return
 * addresses into leaf, into rec at its call of leaf, into rec at its call of itself), so four
 * depths make two chains and four unwinds, two of them of a chain already known, and more rounds
 * add none. */
static NOIPA uint32_t rec(int n)
{
    uint32_t id = n > 0 ? rec(n - 1) : leaf(20);
    sink = id;
    return id;
}

static void recursion(void **state)
{
    (void)state;
    uint64_t u0 = unwinds(), r0, u1, r1;
    uint32_t c0, c1, ids[4];
    fc__site_stats(&u1, &r0, &c0);
    for (int round = 0; round < 10; round++)
        for (int n = 0; n < 4; n++) {
            uint32_t id = rec(n);
            assert_true(round == 0 || ids[n] == id);
            ids[n] = id;
        }
    fc__site_stats(&u1, &r1, &c1);
    assert_int_equal(u1 - u0, 4);
    assert_int_equal(c1 - c0, 2);
    assert_int_equal(r1 - r0, 2); /* rec(2) and rec(3) found the chain of rec(1) */
    assert_int_not_equal(ids[0], ids[1]);
    assert_int_equal(ids[1], ids[2]);
    assert_int_equal(ids[2], ids[3]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dedup),
        cmocka_unit_test(ranges),
        cmocka_unit_test(payload),
        cmocka_unit_test(unwound_differ_at_caller),
        cmocka_unit_test(unwound_differ_further_out),
        cmocka_unit_test(helper_from_k_lines),
        cmocka_unit_test(recursion),
    };
    if (fc__sites_init(DEPTH) < 0)
        return 1;
    fc__depth = DEPTH;
    fc__site_thread(&thr);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
