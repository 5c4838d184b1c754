/* tests/unit/test-runtime-options.c: parsing of FLOWCUT_BUFFER, FLOWCUT_CALLSITE_DEPTH,
 * FLOWCUT_WRITE_AT, FLOWCUT_REQUEST_TIMES and FLOWCUT_ZLIB_LEVEL, and the split of the buffer budget
 * into chunks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "runtime.h"
#include <flowcut/error.h>

static void sizes(void **state)
{
    (void)state;
    uint64_t b = 0;
    assert_int_equal(fc__parse_size("4M", &b), 0);
    assert_true(b == 4ull * 1024 * 1024);
    assert_int_equal(fc__parse_size("64k", &b), 0);
    assert_true(b == 65536);
    assert_int_equal(fc__parse_size("2G", &b), 0);
    assert_true(b == 2147483648ull);
    assert_int_equal(fc__parse_size("1000", &b), 0);
    assert_true(b == 1000);
    assert_int_equal(fc__parse_size("16MiB", &b), 0);
    assert_true(b == 16ull << 20);
    const char *bad[] = {"", "M", "12Q", "-1", "0", "4 M", "4MM", "99999999999999999999", "17179869184G"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        b = 7;
        assert_int_equal(fc__parse_size(bad[i], &b), FC_EINVAL);
        assert_true(b == 7); /* untouched on error */
    }
    assert_int_equal(fc__parse_size(NULL, &b), FC_EINVAL);
}

static void depths(void **state)
{
    (void)state;
    int d = -1;
    assert_int_equal(fc__parse_depth("0", &d), 0);
    assert_int_equal(d, 0);
    assert_int_equal(fc__parse_depth("4", &d), 0);
    assert_int_equal(d, 4);
    assert_int_equal(fc__parse_depth("32", &d), 0);
    assert_int_equal(d, 32);
    assert_int_equal(fc__parse_depth("33", &d), FC_EINVAL);
    assert_int_equal(fc__parse_depth("-1", &d), FC_EINVAL);
    assert_int_equal(fc__parse_depth("one", &d), FC_EINVAL);
    assert_int_equal(fc__parse_depth("", &d), FC_EINVAL);
}

/* FLOWCUT_WRITE_AT: a whole percentage 0..100, with or without '%'. */
static void percents(void **state)
{
    (void)state;
    unsigned p = 7;
    assert_int_equal(fc__parse_percent("0", &p), 0);
    assert_int_equal(p, 0);
    assert_int_equal(fc__parse_percent("50%", &p), 0);
    assert_int_equal(p, 50);
    assert_int_equal(fc__parse_percent("100", &p), 0);
    assert_int_equal(p, 100);
    const char *bad[] = {"101", "-1", "", "%", "half", "50%%", "5 0", "1e2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(fc__parse_percent(bad[i], &p), FC_EINVAL);
    assert_int_equal(p, 100); /* untouched by a refusal */
    assert_int_equal(fc__parse_percent(NULL, &p), FC_EINVAL);
}

/* FLOWCUT_REQUEST_TIMES: exactly "1" or "0". */
static void switches(void **state)
{
    (void)state;
    int on = 7;
    assert_int_equal(fc__parse_switch("0", &on), 0);
    assert_int_equal(on, 0);
    assert_int_equal(fc__parse_switch("1", &on), 0);
    assert_int_equal(on, 1);
    const char *bad[] = {"", "2", "10", "01", "on", "yes", " 1", "1 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(fc__parse_switch(bad[i], &on), FC_EINVAL);
    assert_int_equal(on, 1); /* untouched by a refusal */
    assert_int_equal(fc__parse_switch(NULL, &on), FC_EINVAL);
}

/* FLOWCUT_ZLIB_LEVEL: one digit. */
static void levels(void **state)
{
    (void)state;
    int l = 7;
    assert_int_equal(fc__parse_level("0", &l), 0);
    assert_int_equal(l, 0);
    assert_int_equal(fc__parse_level("9", &l), 0);
    assert_int_equal(l, 9);
    const char *bad[] = {"99", "10", "-1", "", " 1", "1 ", "a", "1.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(fc__parse_level(bad[i], &l), FC_EINVAL);
    assert_int_equal(l, 9); /* untouched by a refusal */
    assert_int_equal(fc__parse_level(NULL, &l), FC_EINVAL);
}

static void geometry(void **state)
{
    (void)state;
    uint32_t per;
    unsigned n;
    /* 64-byte records: 4 MiB = 65536 records = 8 chunks of 8192. */
    assert_int_equal(sizeof(fc__rec), 64);
    fc__pool_geometry(4u << 20, &per, &n);
    assert_int_equal(per, 8192);
    assert_int_equal(n, 8);
    /* 1 MiB = 16384 records: chunks of 4096 so that there are 4. */
    fc__pool_geometry(1u << 20, &per, &n);
    assert_int_equal(per, 4096);
    assert_int_equal(n, 4);
    /* 64 KiB = 1024 records: chunks of 256 so that there are 4. */
    fc__pool_geometry(64u << 10, &per, &n);
    assert_int_equal(per, 256);
    assert_int_equal(n, 4);
    /* A tiny budget still gets 4 chunks of 16 records (4 KiB). */
    fc__pool_geometry(100, &per, &n);
    assert_int_equal(per, 16);
    assert_int_equal(n, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes),
        cmocka_unit_test(depths),
        cmocka_unit_test(percents),
        cmocka_unit_test(switches),
        cmocka_unit_test(levels),
        cmocka_unit_test(geometry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
