/* analyzer/util/numfmt.c: the reports' number formatting (numfmt.h). */
#include <math.h>
#include <string.h>
#include "util/numfmt.h"

/* Two digits at a time from a table, written from the last: the reports write millions of ids. */
static const char digits2[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

static const uint64_t tens[20] = {
    UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000), UINT64_C(100000),
    UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000),
    UINT64_C(10000000000), UINT64_C(100000000000), UINT64_C(1000000000000), UINT64_C(10000000000000),
    UINT64_C(100000000000000), UINT64_C(1000000000000000), UINT64_C(10000000000000000),
    UINT64_C(100000000000000000), UINT64_C(1000000000000000000), UINT64_C(10000000000000000000)};

size_t fc__fmt_u64(char *out, uint64_t v)
{
    /* The number of digits without a division per digit: log10 from the bit length (1233 / 4096
     * is just above log10(2)), then one look at the power of ten it may have overshot. */
    unsigned bitlen = 64 - (unsigned)__builtin_clzll(v | 1);
    size_t n = (bitlen * 1233) >> 12;
    n += (v | 1) >= tens[n]; /* v | 1: zero has one digit */
    char *p = out + n;
    while (v >= 100) {
        const char *d = &digits2[2 * (v % 100)];
        v /= 100;
        *--p = d[1];
        *--p = d[0];
    }
    if (v >= 10) {
        *--p = digits2[2 * v + 1];
        *--p = digits2[2 * v];
    } else {
        *--p = (char)('0' + v);
    }
    return n;
}

/* printf's "%.9f" expands the double's exact decimal value, several thousand instructions a
 * number. Below 1e10 the value times 1e9 fits in 64 bits, so the same rounding is done in
 * integers: x = mant * 2^-sh exactly, mant * 1e9 (under 2^83) is shifted right by sh, and the bits
 * shifted out decide the rounding, a half going to the even neighbour as printf's does. */
size_t fc__fmt_secs(char *out, double x)
{
    if (!(fabs(x) < 1e10))
        return 0; /* not finite, or too large: printf's */
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int bexp = (int)(bits >> 52 & 0x7ff);
    uint64_t mant = bits & ((UINT64_C(1) << 52) - 1);
    if (bexp == 0)
        bexp = 1; /* subnormal */
    else
        mant |= UINT64_C(1) << 52;
    int sh = 1075 - bexp; /* > 18, since |x| < 1e10 < 2^34 */
    uint64_t q = 0;
    if (sh < 128) { /* otherwise x * 1e9 < 2^83 / 2^127 rounds to 0 */
        unsigned __int128 p = (unsigned __int128)mant * 1000000000u;
        q = (uint64_t)(p >> sh);
        unsigned __int128 r = p - ((unsigned __int128)q << sh), half = (unsigned __int128)1 << (sh - 1);
        if (r > half || (r == half && (q & 1)))
            q++;
    }
    size_t n = 0;
    if (bits >> 63)
        out[n++] = '-';
    n += fc__fmt_u64(out + n, q / 1000000000u);
    out[n++] = '.';
    uint32_t frac = (uint32_t)(q % 1000000000u);
    char *p = out + n + 9;
    for (int i = 0; i < 4; i++) {
        const char *d = &digits2[2 * (frac % 100)];
        frac /= 100;
        *--p = d[1];
        *--p = d[0];
    }
    *--p = (char)('0' + frac);
    return n + 9;
}

void fc__put_secs(FILE *f, double x)
{
    char b[FC__FMT_MAX];
    size_t n = fc__fmt_secs(b, x);
    if (n > 0)
        fwrite(b, 1, n, f);
    else
        fprintf(f, "%.9f", x);
}

void fc__ob_i64(fc__obuf *o, int64_t v)
{
    if (v < 0) {
        fc__ob_char(o, '-');
        fc__ob_u64(o, 0 - (uint64_t)v); /* INT64_MIN included */
    } else {
        fc__ob_u64(o, (uint64_t)v);
    }
}

void fc__ob_secs(fc__obuf *o, double x)
{
    char *p = fc__ob_room(o, FC__FMT_MAX);
    size_t n = fc__fmt_secs(p, x);
    if (n > 0) {
        o->n += n;
        return;
    }
    /* Beyond 1e10 s or not finite: printf's, which needs up to 309 integer digits. */
    p = fc__ob_room(o, 330);
    int w = snprintf(p, 330, "%.9f", x);
    if (w > 0 && w < 330)
        o->n += (size_t)w;
}

/* Bytes that a JSON string holds as they are: printable ASCII but the quote and the backslash. */
static int json_plain(unsigned c)
{
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

void fc__ob_json_str(fc__obuf *o, const char *s)
{
    if (s == NULL) {
        FC__OB_LIT(o, "null");
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    fc__ob_char(o, '"');
    while (*p) {
        /* The usual name is all plain bytes: copied by runs. */
        const unsigned char *q = p;
        while (json_plain(*q))
            q++;
        if (q > p) {
            fc__ob_put(o, (const char *)p, (size_t)(q - p));
            p = q;
            continue;
        }
        unsigned c = *p;
        int n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : -1;
        int ok = n >= 0 && !(n == 1 && c < 0xc2);
        for (int k = 1; ok && k <= n; k++)
            ok = (p[k] & 0xc0) == 0x80;
        char *w = fc__ob_room(o, 8);
        if (!ok) { /* not UTF-8: U+FFFD, so that the document always parses */
            memcpy(w, "\\ufffd", 6);
            o->n += 6;
            p++;
        } else if (n > 0) {
            memcpy(w, p, (size_t)n + 1);
            o->n += (size_t)n + 1;
            p += n + 1;
        } else {
            static const char hex[] = "0123456789abcdef";
            size_t k = 0;
            w[k++] = '\\';
            if (c == '"' || c == '\\')
                w[k++] = (char)c;
            else if (c == '\n')
                w[k++] = 'n';
            else if (c == '\t')
                w[k++] = 't';
            else { /* the other control bytes and DEL, as "\\u%04x" */
                memcpy(w + k, "u00", 3);
                k += 3;
                w[k++] = hex[c >> 4];
                w[k++] = hex[c & 15];
            }
            o->n += k;
            p++;
        }
    }
    fc__ob_char(o, '"');
}
