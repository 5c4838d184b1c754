/* analyzer/trace/symbols.c: turns call sites (module + offset) into function@file:line offline, with one
 * addr2line process per module; offsets are module-relative, so every rank resolves alike. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util/internal.h"

/* Addresses handed to one addr2line command line, well under any argument-size limit. */
#define BATCH 256

typedef struct want {
    const char *path; /* module file */
    uint64_t offset;
    size_t rank, site; /* rank file index and index in its sites[] */
    uint32_t frame;     /* index in the site's frames */
} want;

struct fc_symbols {
    fc__arena arena;
    const fc_trace *t;
    const char ***text;   /* per rank file, per site index: frame 0 */
    const char ****frames; /* per rank file, per site index, per frame */
    const char ***chain;  /* per rank file, per site index: every frame, innermost first */
};

static int cmp_want(const void *a, const void *b)
{
    const want *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    if (c != 0)
        return c;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Runs addr2line on n offsets of path and returns its whole output (malloc'd) or NULL. */
static char *run_addr2line(const char *path, const uint64_t *off, size_t n)
{
    char (*hex)[24] = malloc(n * sizeof *hex);
    const char **argv = malloc((n + 6) * sizeof *argv);
    char *out = NULL;
    size_t len = 0, cap = 0;
    int fds[2] = {-1, -1};
    pid_t pid = -1;
    if (hex == NULL || argv == NULL || pipe(fds) < 0)
        goto out;
    argv[0] = "addr2line";
    argv[1] = "-f";
    argv[2] = "-C";
    argv[3] = "-e";
    argv[4] = path;
    for (size_t i = 0; i < n; i++) {
        snprintf(hex[i], sizeof hex[i], "0x%" PRIx64, off[i]);
        argv[5 + i] = hex[i];
    }
    argv[5 + n] = NULL;
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(fds[1], 1);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 2);
        }
        close(fds[0]);
        execvp("addr2line", (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    fds[1] = -1;
    if (pid < 0)
        goto out;
    for (;;) {
        if (cap - len < 4096) {
            char *p = realloc(out, cap = cap ? cap * 2 : 8192);
            if (p == NULL)
                break;
            out = p;
        }
        ssize_t r = read(fds[0], out + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    if (out != NULL)
        out[len] = '\0';
out:
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    if (pid > 0) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    free(hex);
    free(argv);
    return out;
}

/* Takes the next line of *p (NUL-terminating it in place), or NULL when none is left. */
static char *next_line(char **p)
{
    if (*p == NULL || **p == '\0')
        return NULL;
    char *s = *p, *e = strchr(s, '\n');
    if (e != NULL) {
        *e = '\0';
        *p = e + 1;
    } else {
        *p = s + strlen(s);
    }
    return s;
}

/* "function@file:line" from addr2line's two lines, or NULL when either part is unknown. */
static const char *format_resolved(fc__arena *a, const char *fn, char *loc)
{
    if (fn == NULL || loc == NULL || strcmp(fn, "??") == 0)
        return NULL;
    char *d = strstr(loc, " (discriminator");
    if (d != NULL)
        *d = '\0';
    char *colon = strrchr(loc, ':');
    if (colon == NULL || colon[1] < '1' || colon[1] > '9' || strncmp(loc, "??", 2) == 0)
        return NULL;
    *colon = '\0';
    const char *file = base_name(loc);
    size_t n = strlen(fn) + strlen(file) + strlen(colon + 1) + 3;
    char *s = fc__arena_alloc(a, n);
    if (s != NULL)
        snprintf(s, n, "%s@%s:%s", fn, file, colon + 1);
    return s;
}

/* Resolves w[0..n) (one module, sorted by offset) into their text slots. */
static int resolve_module(fc_symbols *y, const want *w, size_t n, unsigned flags)
{
    uint64_t off[BATCH];
    for (size_t i = 0; i < n;) {
        /* One batch of distinct offsets. */
        size_t k = 0, j = i;
        while (j < n && k < BATCH) {
            if (k == 0 || off[k - 1] != w[j].offset)
                off[k++] = w[j].offset;
            j++;
        }
        while (j < n && w[j].offset == off[k - 1])
            j++;
        char *outbuf = NULL;
        if (!(flags & FC_SYM_NO_ADDR2LINE) && w[i].path[0] == '/' && access(w[i].path, R_OK) == 0)
            outbuf = run_addr2line(w[i].path, off, k);
        char *p = outbuf;
        size_t m = i;
        for (size_t q = 0; q < k; q++) {
            char *fn = next_line(&p), *loc = next_line(&p);
            /* A module named "=TEXT" is a frame that came symbolic (from an OTF2 calling context):
             * TEXT names it, whatever the flags. */
            const char *s = w[i].path[0] == '=' ? w[i].path + 1 : format_resolved(&y->arena, fn, loc);
            if (s == NULL) {
                char tmp[64];
                snprintf(tmp, sizeof tmp, "+0x%" PRIx64, off[q]);
                size_t len = strlen(base_name(w[i].path)) + strlen(tmp) + 1;
                char *t = fc__arena_alloc(&y->arena, len);
                if (t == NULL) {
                    free(outbuf);
                    return FC_ENOMEM;
                }
                snprintf(t, len, "%s%s", base_name(w[i].path), tmp);
                s = t;
            }
            for (; m < j && w[m].offset == off[q]; m++) {
                y->frames[w[m].rank][w[m].site][w[m].frame] = s;
                if (w[m].frame == 0)
                    y->text[w[m].rank][w[m].site] = s;
            }
        }
        free(outbuf);
        i = j;
    }
    return 0;
}

/* Joins each site's frames, innermost first, into "f0<f1<...": the call chain that led to the
 * MPI call, without blanks so that it stays one field of a dump line. A site of one frame is its
 * frame's text. */
static int make_chains(fc_symbols *y)
{
    for (size_t i = 0; i < y->t->nranks; i++) {
        const fc_rank *r = &y->t->ranks[i].pub;
        for (size_t s = 0; s < r->nsites; s++) {
            uint32_t depth = r->sites[s].depth;
            if (depth <= 1) {
                y->chain[i][s] = y->text[i][s];
                continue;
            }
            size_t len = 1;
            for (uint32_t f = 0; f < depth; f++)
                len += strlen(y->frames[i][s][f] ? y->frames[i][s][f] : "?") + 1;
            char *c = fc__arena_alloc(&y->arena, len);
            if (c == NULL)
                return FC_ENOMEM;
            c[0] = '\0';
            for (uint32_t f = 0; f < depth; f++) {
                if (f > 0)
                    strcat(c, "<");
                strcat(c, y->frames[i][s][f] ? y->frames[i][s][f] : "?");
            }
            y->chain[i][s] = c;
        }
    }
    return 0;
}

int fc_symbols_create(const fc_trace *t, unsigned flags, fc_symbols **out)
{
    int rc = 0;
    want *w = NULL;
    size_t nw = 0, cap = 0;
    fc_symbols *y = calloc(1, sizeof *y);
    *out = NULL;
    if (flags & ~FC_SYM_NO_ADDR2LINE) {
        free(y);
        return fc__err(FC_EINVAL, "unknown symbol flags 0x%x", flags);
    }
    size_t nr = t->nranks ? t->nranks : 1;
    if (y == NULL || (y->text = calloc(nr, sizeof *y->text)) == NULL ||
        (y->frames = calloc(nr, sizeof *y->frames)) == NULL || (y->chain = calloc(nr, sizeof *y->chain)) == NULL) {
        rc = fc__err(FC_ENOMEM, "out of memory");
        goto out;
    }
    y->t = t;
    for (size_t i = 0; i < t->nranks; i++) {
        const fc_rank *r = &t->ranks[i].pub;
        if (r->nsites == 0)
            continue;
        if ((y->text[i] = fc__arena_alloc(&y->arena, r->nsites * sizeof *y->text[i])) == NULL ||
            (y->frames[i] = fc__arena_alloc(&y->arena, r->nsites * sizeof *y->frames[i])) == NULL ||
            (y->chain[i] = fc__arena_alloc(&y->arena, r->nsites * sizeof *y->chain[i])) == NULL) {
            rc = fc__err(FC_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t s = 0; s < r->nsites; s++) {
            y->text[i][s] = y->chain[i][s] = NULL;
            y->frames[i][s] = NULL;
            uint32_t depth = r->sites[s].depth;
            if (depth == 0)
                continue;
            if ((y->frames[i][s] = fc__arena_alloc(&y->arena, depth * sizeof *y->frames[i][s])) == NULL) {
                rc = fc__err(FC_ENOMEM, "out of memory");
                goto out;
            }
            for (uint32_t fr = 0; fr < depth; fr++) {
                const fc_module *m = fc_rank_module(r, r->sites[s].frames[fr].module);
                y->frames[i][s][fr] = NULL;
                if (fc__grow((void **)&w, &nw, &cap, sizeof *w) < 0) {
                    rc = fc__err(FC_ENOMEM, "out of memory");
                    goto out;
                }
                w[nw++] = (want){m ? m->path : "?", r->sites[s].frames[fr].offset, i, s, fr};
            }
        }
    }
    if (nw > 0) /* qsort must not see the NULL of an empty list */
        qsort(w, nw, sizeof *w, cmp_want);
    for (size_t i = 0; i < nw;) {
        size_t j = i;
        while (j < nw && strcmp(w[j].path, w[i].path) == 0)
            j++;
        if ((rc = resolve_module(y, w + i, j - i, flags)) < 0) {
            fc__err(rc, "out of memory");
            goto out;
        }
        i = j;
    }
    if ((rc = make_chains(y)) < 0)
        fc__err(rc, "out of memory");
out:
    free(w);
    if (rc < 0)
        fc_symbols_free(y);
    else
        *out = y;
    return rc;
}

const char *fc_symbols_site(const fc_symbols *y, size_t i, uint64_t site)
{
    if (i >= y->t->nranks || site == 0 || y->text[i] == NULL)
        return NULL;
    const fc_rank *r = &y->t->ranks[i].pub;
    const fc_site *s = fc_rank_site(r, site);
    return s ? y->text[i][s - r->sites] : NULL;
}

const char *fc_symbols_chain(const fc_symbols *y, size_t i, uint64_t site)
{
    if (i >= y->t->nranks || site == 0 || y->chain[i] == NULL)
        return NULL;
    const fc_rank *r = &y->t->ranks[i].pub;
    const fc_site *s = fc_rank_site(r, site);
    return s ? y->chain[i][s - r->sites] : NULL;
}

const char *fc__symbols_frame(const fc_symbols *y, size_t i, uint64_t site, uint32_t k)
{
    if (i >= y->t->nranks || site == 0 || y->frames[i] == NULL)
        return NULL;
    const fc_rank *r = &y->t->ranks[i].pub;
    const fc_site *s = fc_rank_site(r, site);
    return s && k < s->depth && y->frames[i][s - r->sites] ? y->frames[i][s - r->sites][k] : NULL;
}

void fc_symbols_free(fc_symbols *y)
{
    if (y == NULL)
        return;
    fc__arena_free(&y->arena);
    free(y->text);
    free(y->frames);
    free(y->chain);
    free(y);
}
