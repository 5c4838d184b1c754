/* tests/format/fmt-util.h: helpers of the format tests (cmocka): scratch directories, running a
 * flowcut command from the build tree and capturing its output, and assertions that print what
 * they looked at when they fail. */
#ifndef FMT_UTIL_H
#define FMT_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <flowcut/reader.h>
#include <flowcut/writer.h>

/* Fails the current test unless cond holds; the message says which case (a cut, a flipped byte,
 * a command) and what the command printed, which cmocka's own assertions cannot show. */
#define assert_msg(cond, fmt, ...)                                                                 \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg("%s: " fmt, #cond, ##__VA_ARGS__);                                            \
    } while (0)

/* Fails the current test unless the text s contains sub, and prints both when it does not. */
#define assert_contains(s, sub)                                                                    \
    do {                                                                                           \
        const char *s_ = (s), *sub_ = (sub);                                                       \
        if (strstr(s_, sub_) == NULL)                                                              \
            fail_msg("'%s' does not contain '%s'", s_, sub_);                                      \
    } while (0)

static char scratch[4096];

static inline void scratch_make(void)
{
    snprintf(scratch, sizeof scratch, "%s/fc-format-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(scratch));
}

static inline void scratch_remove(void)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", scratch);
}

/* The path of name inside the scratch directory (a static buffer per call slot). */
static inline const char *in_scratch(const char *name)
{
    static char buf[4][4200];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", scratch, name);
    return buf[k];
}

static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return strdup("");
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    size_t r;
    while (s != NULL && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2) {
            char *p = realloc(s, cap *= 2);
            if (p == NULL) {
                free(s);
                s = NULL;
                break;
            }
            s = p;
        }
    }
    fclose(f);
    assert_non_null(s);
    s[n] = '\0';
    return s;
}

/* Runs `flowcut ARGS` (ARGS is shell text) from the build tree; returns its exit status and
 * leaves its output in *out and *err (malloc'd; pass NULL to drop). */
static int run_flowcut(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int run_flowcut(char **out, char **err, const char *fmt, ...)
{
    char args[8192], cmd[16384];
    const char *fc = getenv("FLOWCUT");
    va_list ap;
    assert_msg(fc != NULL, "FLOWCUT is not set (run through make check)");
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", fc, args, in_scratch("cmd.out"), in_scratch("cmd.err"));
    int st = system(cmd);
    if (out)
        *out = slurp(in_scratch("cmd.out"));
    if (err)
        *err = slurp(in_scratch("cmd.err"));
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* Number of lines of s. */
static inline size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static inline void rank_file(char *out, size_t n, const char *dir, int r)
{
    char name[32];
    snprintf(name, sizeof name, FC_TRACE_FILE_FMT, r);
    snprintf(out, n, "%s/%s", dir, name);
}

#endif
