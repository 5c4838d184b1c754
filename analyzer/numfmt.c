/* analyzer/numfmt.c: the reports' number formatting (numfmt.h). */
#include <math.h>
#include <string.h>
#include "numfmt.h"

/* Two digits at a time from a table, written from the last: the reports write millions of ids. */
static const char digits2[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

size_t fc__fmt_u64(char *out, uint64_t v)
{
    size_t n = 1;
    for (uint64_t t = v; t >= 10; t /= 10)
        n++;
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
