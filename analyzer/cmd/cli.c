/* analyzer/cmd/cli.c: the commands' shared messages and exit statuses (cli.h). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    fprintf(stderr, " (see flowcut %s --help)\n", cli_name);
    return 2;
}

int fc__cli_bad_option(char **argv, int c)
{
    /* getopt_long leaves optind past the word it stopped at, except inside a bundle of short
     * options ("-jx"), where optopt names the letter. */
    const char *word = argv[optind - 1];
    char letter[3] = {'-', (char)optopt, '\0'};
    if (word[0] != '-' || (word[1] != '-' && optopt > ' ' && optopt < 127))
        word = letter;
    if (c == ':')
        return fc__cli_usage("option '%s' needs a value", word);
    /* A known long option given a value it does not take comes back with optopt set to it. */
    if (optopt != 0 && word[1] == '-' && strchr(word, '=') != NULL)
        return fc__cli_usage("option '%.*s' takes no value", (int)(strchr(word, '=') - word), word);
    return fc__cli_usage("unknown option '%s'", word);
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
