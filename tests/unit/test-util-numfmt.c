/* tests/unit/test-util-numfmt.c: the reports' own number formatting (fc__fmt_u64, fc__fmt_secs)
 * against printf's "%" PRIu64 and "%.9f", the reference it must reproduce byte for byte, on
 * edge cases (ties, carries, signed zeros, subnormals, the fast path's bound) and on a million
 * random doubles spread over every magnitude the fast path takes; and the buffered writer
 * (fc__obuf): its JSON strings against escapes written out by hand, its numbers against printf,
 * and its bytes in order across many flushes. */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "util/numfmt.h"

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
    /* Where the number of digits changes, which fc__fmt_u64 finds without dividing. */
    for (uint64_t p = 10;; p *= 10) {
        same_u64(p - 1);
        same_u64(p);
        same_u64(p + 1);
        if (p > UINT64_MAX / 10)
            break;
    }
    for (unsigned b = 0; b < 64; b++) {
        same_u64(UINT64_C(1) << b);
        same_u64((UINT64_C(1) << b) - 1);
    }
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

/* What the writer wrote, through a memory stream. */
typedef struct sink {
    FILE *f;
    char *buf;
    size_t len;
    fc__obuf *o;
} sink;

static void sink_open(sink *k)
{
    k->buf = NULL;
    k->len = 0;
    k->f = open_memstream(&k->buf, &k->len);
    assert_non_null(k->f);
    k->o = malloc(sizeof *k->o);
    assert_non_null(k->o);
    fc__ob_init(k->o, k->f);
}

/* Flushes and returns the bytes (NUL-terminated by the memory stream); sink_close frees them. */
static const char *sink_text(sink *k)
{
    fc__ob_flush(k->o);
    assert_int_equal(fflush(k->f), 0);
    return k->buf;
}

static void sink_close(sink *k)
{
    fclose(k->f);
    free(k->buf);
    free(k->o);
}

static void same_json(const char *in, const char *want)
{
    sink k;
    sink_open(&k);
    fc__ob_json_str(k.o, in);
    const char *got = sink_text(&k);
    if (strcmp(got, want) != 0)
        fail_msg("JSON string of '%s': got '%s', want '%s'", in ? in : "(null)", got, want);
    sink_close(&k);
}

static void test_json_str(void **state)
{
    (void)state;
    same_json(NULL, "null");
    same_json("", "\"\"");
    same_json("node-07.cluster", "\"node-07.cluster\"");
    same_json("a\"b\\c", "\"a\\\"b\\\\c\"");
    same_json("l1\nl2\tx", "\"l1\\nl2\\tx\"");
    same_json("\x01\x1f\x7f ~", "\"\\u0001\\u001f\\u007f ~\"");
    /* UTF-8 of two, three and four bytes passes as it is. */
    same_json("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    /* Not UTF-8: a lone continuation byte, an overlong lead, a sequence cut short, a byte that
     * leads nothing; each bad lead is replaced and the scan goes on after it. */
    same_json("a\x80" "b", "\"a\\ufffdb\"");
    same_json("\xc0\xaf", "\"\\ufffd\\ufffd\"");
    same_json("x\xe2\x82", "\"x\\ufffd\\ufffd\"");
    same_json("\xff!", "\"\\ufffd!\"");
}

static void test_obuf_numbers(void **state)
{
    (void)state;
    const int64_t iv[] = {0, -1, 1, INT64_MIN, INT64_MAX, -1234567890123};
    const double dv[] = {0.0, -0.0, 1.5, -2.000000001, 123456.123456789, 9999999999.9999, 1e10, -3e15, 1e300};
    for (size_t i = 0; i < sizeof iv / sizeof iv[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "%" PRId64, iv[i]);
        sink k;
        sink_open(&k);
        fc__ob_i64(k.o, iv[i]);
        assert_string_equal(sink_text(&k), want);
        sink_close(&k);
    }
    for (size_t i = 0; i < sizeof dv / sizeof dv[0]; i++) {
        char want[400];
        snprintf(want, sizeof want, "%.9f", dv[i]);
        sink k;
        sink_open(&k);
        fc__ob_secs(k.o, dv[i]);
        assert_string_equal(sink_text(&k), want);
        sink_close(&k);
    }
}

/* Pieces of every size, some longer than the buffer, come out whole and in order. */
static void test_obuf_order(void **state)
{
    (void)state;
    size_t total = 0, cap = 4 << 20;
    char *want = malloc(cap), *piece = malloc(200000);
    assert_non_null(want);
    assert_non_null(piece);
    sink k;
    sink_open(&k);
    uint64_t x = 12345;
    for (int i = 0; total < 3 << 20; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        size_t len = i % 97 == 0 ? (size_t)(x >> 40) % 200000 : (size_t)(x >> 58);
        for (size_t j = 0; j < len; j++)
            piece[j] = (char)('a' + (i + j) % 26);
        if (len == 1)
            fc__ob_char(k.o, piece[0]);
        else
            fc__ob_put(k.o, piece, len);
        memcpy(want + total, piece, len);
        total += len;
    }
    const char *got = sink_text(&k);
    assert_int_equal(k.len, total);
    assert_memory_equal(got, want, total);
    sink_close(&k);
    free(want);
    free(piece);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64),
        cmocka_unit_test(test_secs_edges),
        cmocka_unit_test(test_secs_random),
        cmocka_unit_test(test_json_str),
        cmocka_unit_test(test_obuf_numbers),
        cmocka_unit_test(test_obuf_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
