/* tests/unit/test-runtime-sites.c: call-site dedup, the MPI address ranges, and the SITES and
 * MODULES payloads, whose module base and offset are checked against dladdr. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dedup),
        cmocka_unit_test(ranges),
        cmocka_unit_test(payload),
    };
    if (fc__sites_init(3) < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
