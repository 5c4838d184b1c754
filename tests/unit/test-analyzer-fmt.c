/* tests/unit/test-analyzer-fmt.c: the reports' own number formatting (fc__fmt_u64, fc__fmt_secs)
 * against printf's "%" PRIu64 and "%.9f", the reference it must reproduce byte for byte, on
 * edge cases (ties, carries, signed zeros, subnormals, the fast path's bound) and on a million
 * random doubles spread over every magnitude the fast path takes. */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "numfmt.h"

/* x through fc__fmt_secs must read as printf's "%.9f" of x; returns 1 if the fast path took it. */
static int same_secs(double x)
{
    char want[400], got[FC__FMT_MAX + 1];
    snprintf(want, sizeof want, "%.9f", x);
    memset(got, 'x', sizeof got);
    size_t n = fc__fmt_secs(got, x);
    if (n == 0)
        return 0;
    assert_true(n <= FC__FMT_MAX);
    got[n] = '\0';
    if (strcmp(got, want) != 0)
        fail_msg("%a: got '%s', printf gives '%s'", x, got, want);
    return 1;
}

static void same_u64(uint64_t v)
{
    char want[32], got[FC__FMT_MAX + 1];
    snprintf(want, sizeof want, "%" PRIu64, v);
    size_t n = fc__fmt_u64(got, v);
    got[n] = '\0';
    assert_string_equal(got, want);
}

static void test_u64(void **state)
{
    (void)state;
    uint64_t v[] = {0, 1, 9, 10, 99, 100, 4294967295u, 4294967296u, 999999999999999999u,
                    1000000000000000000u, UINT64_MAX};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        same_u64(v[i]);
    for (uint64_t x = 1; x < UINT64_MAX / 3; x = x * 3 + 1)
        same_u64(x);
}

static void test_secs_edges(void **state)
{
    (void)state;
    double v[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-9, -1e-9, 5e-10, -5e-10, 4.9999999999e-10, 1.5e-9, 2.5e-9,
                  0.9999999995, 0.99999999949999, 9.9999999995, 123.456789012345, 1e9, 9999999999.9999,
                  -9999999999.9999, 4.9e-324, -4.9e-324, 2.2250738585072014e-308, 0x1p-30, 0x1p-31, 0x1p-33};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        assert_true(same_secs(v[i]));
    /* Exact ties at the ninth decimal: dyadic values m / 2^10 whose ninth-decimal remainder is a
     * half (1/1024 = 0.0009765625, and so on): printf rounds them to even. */
    for (int m = -4096; m <= 4096; m++)
        assert_true(same_secs(m / 1024.0));
    for (int m = 1; m <= 20000; m += 7)
        assert_true(same_secs(ldexp(m, -11)) && same_secs(ldexp(m, -20)) && same_secs(ldexp(m, -40)));
    /* Outside the fast path, nothing is written and printf is left to do it. */
    char b[FC__FMT_MAX];
    assert_int_equal(fc__fmt_secs(b, 1e10), 0);
    assert_int_equal(fc__fmt_secs(b, -1e10), 0);
    assert_int_equal(fc__fmt_secs(b, INFINITY), 0);
    assert_int_equal(fc__fmt_secs(b, NAN), 0);
    assert_true(same_secs(nextafter(1e10, 0)));
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_secs_random(void **state)
{
    (void)state;
    size_t fast = 0, n = 1000000;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next();
        double x;
        if (i % 4 == 0) { /* any bit pattern: mostly outside the fast path, which must decline */
            memcpy(&x, &r, sizeof x);
        } else { /* a random mantissa at a binary exponent from 2^-60 to 2^33 */
            x = ldexp((double)(r >> 11) / 9007199254740992.0 + 0.5, (int)(next() % 94) - 60);
            if (r & 1)
                x = -x;
        }
        fast += (size_t)same_secs(x);
    }
    assert_true(fast > n / 2); /* the fast path was exercised, not declined throughout */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64),
        cmocka_unit_test(test_secs_edges),
        cmocka_unit_test(test_secs_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
