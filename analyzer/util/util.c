/* analyzer/util/util.c: small helpers of the analyzer library: arena, growable arrays, reads, inflate. */
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zlib.h>
#include "util/internal.h"
#include "util/numfmt.h"

struct fc__arena_chunk {
    struct fc__arena_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

void *fc__arena_alloc(fc__arena *a, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    struct fc__arena_chunk *c = a->head;
    if (c == NULL || c->cap - c->used < n) {
        /* Big requests get a chunk of their own so small ones keep filling the current chunk. */
        size_t cap = n > 16384 ? n : 65536;
        c = malloc(sizeof *c + cap);
        if (c == NULL)
            return NULL;
        c->used = 0;
        c->cap = cap;
        if (a->head != NULL && n > 16384) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *fc__arena_strndup(fc__arena *a, const char *s, size_t n)
{
    char *p = fc__arena_alloc(a, n + 1);
    if (p == NULL)
        return NULL;
    if (n > 0) /* s may be NULL for an empty string (an empty block payload) */
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void fc__arena_free(fc__arena *a)
{
    struct fc__arena_chunk *c = a->head;
    while (c != NULL) {
        struct fc__arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}

int fc__grow(void **v, size_t *n, size_t *cap, size_t sz)
{
    if (*n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*v, ncap * sz);
    if (p == NULL)
        return FC_ENOMEM;
    *v = p;
    *cap = ncap;
    return 0;
}

/* The capacity an array of cap elements of sz bytes grows to for need (> cap): doubled from 16
 * until it holds them, or 0 when that many bytes, plus slack bytes, would not fit in a size_t. */
static size_t grown_cap(size_t cap, size_t need, size_t sz, size_t slack)
{
    size_t ncap = cap ? cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return 0;
        ncap *= 2;
    }
    return ncap <= (SIZE_MAX - slack) / sz ? ncap : 0;
}

int fc__reserve_lines(void *p, size_t *cap, size_t need, size_t sz)
{
    enum { LINE = 64 };
    void **v = p;
    if (need <= *cap)
        return 0;
    size_t ncap = grown_cap(*cap, need, sz, LINE);
    char *q = ncap ? aligned_alloc(LINE, (ncap * sz + LINE - 1) / LINE * LINE) : NULL;
    if (q == NULL)
        return FC_ENOMEM;
    if (*cap)
        memcpy(q, *v, *cap * sz);
    memset(q + *cap * sz, 0, (ncap - *cap) * sz);
    free(*v);
    *v = q;
    *cap = ncap;
    return 0;
}

int fc__pread(int fd, void *buf, size_t n, uint64_t off, size_t *got)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            *got = done;
            return FC_EIO;
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    *got = done;
    return done == n ? 0 : 1;
}

int fc__inflate(struct libdeflate_decompressor **keep, const unsigned char *in, size_t stored,
                unsigned char *out, size_t raw)
{
    /* libdeflate reads the zlib streams the tracer writes at two to three times zlib's speed, and
     * inflating is most of what reading a trace costs. It checks the Adler-32 sum, and with no
     * actual size asked for it fails unless the stream fills exactly raw bytes: more or fewer
     * means the block header lies. A decompressor holds 10 KiB of tables, which it fills anew
     * for each stream: one is enough for all the blocks a reader inflates. */
    struct libdeflate_decompressor *d = keep != NULL ? *keep : NULL;
    if (d == NULL && (d = libdeflate_alloc_decompressor()) == NULL)
        return FC_ENOMEM;
    enum libdeflate_result r = libdeflate_zlib_decompress(d, in, stored, out, raw, NULL);
    if (keep != NULL)
        *keep = d;
    else
        libdeflate_free_decompressor(d);
    return r == LIBDEFLATE_SUCCESS ? 0 : FC_EZLIB;
}

void fc__inflate_end(struct libdeflate_decompressor *d)
{
    if (d != NULL)
        libdeflate_free_decompressor(d);
}

int fc__chunk_header(const unsigned char **p, const unsigned char *end, uint64_t *thread, uint64_t *count,
                     uint64_t *base_ns)
{
    const unsigned char *q = *p;
    if (fc_get_uvarint(&q, end, thread) < 0 || fc_get_uvarint(&q, end, count) < 0 ||
        fc_get_uvarint(&q, end, base_ns) < 0)
        return -1;
    *p = q;
    return 0;
}

/* Writes s as a JSON string (NULL as null): quotes, backslashes and control bytes escaped, and
 * bytes that are not UTF-8 replaced by U+FFFD so that the output always parses. The escaping is the
 * reports' buffered writer's (numfmt.h); its buffer is on the stack and only the string's length of
 * it is touched. */
void fc__json_str(FILE *f, const char *s)
{
    fc__obuf o;
    fc__ob_init(&o, f);
    fc__ob_json_str(&o, s);
    fc__ob_flush(&o);
}

int fc__reserve_grow(void *p, size_t *cap, size_t need, size_t sz)
{
    void **v = p;
    if (need <= *cap)
        return 0;
    size_t ncap = grown_cap(*cap, need, sz, 0);
    void *q = ncap ? realloc(*v, ncap * sz) : NULL;
    if (q == NULL)
        return FC_ENOMEM;
    memset((char *)q + *cap * sz, 0, (ncap - *cap) * sz);
    *v = q;
    *cap = ncap;
    return 0;
}
