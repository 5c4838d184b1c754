/* analyzer/numfmt.h: the reports' number formatting. The reports write every time as printf's
 * "%.9f" and every count as "%" PRIu64; these write the same bytes at a small part of printf's
 * cost, which otherwise makes up most of the time a CSV or JSON report takes. Internal to
 * libflowcut-analyzer. Thread-safe: no state. */
#ifndef FLOWCUT_ANALYZER_NUMFMT_H
#define FLOWCUT_ANALYZER_NUMFMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Room for what fc__fmt_u64 and fc__fmt_secs write (a sign, ten integer digits, a point and nine
 * decimals; twenty digits for a uint64_t), with spare bytes. */
#define FC__FMT_MAX 24

/* Writes v in decimal at out, which has FC__FMT_MAX bytes (no terminating NUL is written), and
 * returns the number of bytes written. */
size_t fc__fmt_u64(char *out, uint64_t v);

/* Writes x at out (FC__FMT_MAX bytes, no terminating NUL) exactly as printf's "%.9f" does under
 * the default rounding mode: the exact binary value rounded to nine decimals, ties to even, with a
 * '-' for every negative x, -0 included. Returns the bytes written, or 0, having written nothing,
 * when x is not finite or |x| >= 1e10: the caller then uses printf. */
size_t fc__fmt_secs(char *out, double x);

/* Writes x to f as "%.9f" does, through fc__fmt_secs where it can. Errors stay in f's error flag,
 * as for fprintf. */
void fc__put_secs(FILE *f, double x);

#endif /* FLOWCUT_ANALYZER_NUMFMT_H */
