/* analyzer/cmd/cli.c: the commands' shared messages and exit statuses (cli.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <flowcut/reader.h>
#include "cmd/cli.h"

static const char *cli_name = "?", *cli_usage_text = "";

void fc__cli_init(const char *name, const char *usage)
{
    cli_name = name;
    cli_usage_text = usage;
}

int fc__cli_help(void)
{
    fputs(cli_usage_text, stdout);
    return 0;
}

int fc__cli_usage(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "flowcut %s: ", cli_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fputs(cli_usage_text, stderr);
    return 2;
}

int fc__cli_fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "flowcut %s: ", cli_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

int fc__cli_failed(void)
{
    return fc__cli_fail("%s", fc_errmsg());
}

int fc__cli_count(const char *s, uint64_t *out)
{
    char *end;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

void fc__cli_progress(const char *what)
{
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "flowcut %s: %s\n", cli_name, what);
}

void fc__cli_trace_warnings(const fc_trace *t)
{
    for (size_t i = 0; i < fc_trace_nskipped(t); i++) {
        const fc_skipped *k = fc_trace_skipped(t, i);
        fprintf(stderr, "flowcut %s: warning: rank %u left out: %s\n", cli_name, k->rank, k->why);
    }
}
