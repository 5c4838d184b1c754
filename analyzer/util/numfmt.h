/* analyzer/util/numfmt.h: the reports' number formatting and output buffer. The reports write every
 * time as printf's "%.9f" and every count as "%" PRIu64; these write the same bytes at a small part
 * of printf's cost, which otherwise makes up most of the time a CSV or JSON report takes. Internal
 * to libflowcut-analyzer. Thread-safe: no state but the caller's. */
#ifndef FLOWCUT_ANALYZER_NUMFMT_H
#define FLOWCUT_ANALYZER_NUMFMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* ---- an output buffer ----------------------------------------------------------------------
 * A JSON document is tens of millions of short pieces; through stdio each piece cost a call that
 * takes the stream's lock and copies through _IO_file_xsputn, most of the time the document took.
 * The pieces are copied into a buffer of the caller's instead, written with one fwrite when it
 * fills. The caller owns the buffer (it may live on the stack: nothing is allocated), must call
 * fc__ob_flush before writing to f by other means and at the end; write errors stay in f's error
 * flag, as for stdio, for the caller's final check. */
typedef struct fc__obuf {
    FILE *f;
    size_t n;
    char b[1 << 16];
} fc__obuf;

static inline void fc__ob_init(fc__obuf *o, FILE *f)
{
    o->f = f;
    o->n = 0;
}

static inline void fc__ob_flush(fc__obuf *o)
{
    if (o->n > 0)
        fwrite(o->b, 1, o->n, o->f);
    o->n = 0;
}

/* Where need more bytes go (need at most sizeof o->b): the buffer is flushed first when they would
 * not fit. The caller adds what it wrote there to o->n. */
static inline char *fc__ob_room(fc__obuf *o, size_t need)
{
    if (o->n + need > sizeof o->b)
        fc__ob_flush(o);
    return o->b + o->n;
}

/* Appends the len bytes at s, of any length. */
static inline void fc__ob_put(fc__obuf *o, const char *s, size_t len)
{
    if (len > sizeof o->b / 2) {
        fc__ob_flush(o);
        fwrite(s, 1, len, o->f);
        return;
    }
    memcpy(fc__ob_room(o, len), s, len);
    o->n += len;
}

/* A string literal, its length known at compile time. */
#define FC__OB_LIT(o, lit) fc__ob_put((o), "" lit, sizeof(lit) - 1)

static inline void fc__ob_char(fc__obuf *o, char c)
{
    *fc__ob_room(o, 1) = c;
    o->n++;
}

static inline void fc__ob_u64(fc__obuf *o, uint64_t v)
{
    o->n += fc__fmt_u64(fc__ob_room(o, FC__FMT_MAX), v);
}

/* v in decimal with its sign, as "%" PRId64. */
void fc__ob_i64(fc__obuf *o, int64_t v);

/* x as "%.9f" (fc__put_secs). */
void fc__ob_secs(fc__obuf *o, double x);

/* s as a JSON string, NULL as null, as fc__json_str writes it (internal.h). */
void fc__ob_json_str(fc__obuf *o, const char *s);

#endif /* FLOWCUT_ANALYZER_NUMFMT_H */
