/* analyzer/cmd/cli.h: what every command's main shares: its messages, exit statuses and the
 * parsing of numbers. Conventions, the same for every `flowcut CMD`:
 *   exit 0  success, and --help (the usage on standard output);
 *   exit 1  the command could not do its work (a message naming the problem on standard error);
 *   exit 2  a usage error (one line on standard error: the message and a pointer to --help).
 * Messages are one line, "flowcut CMD: ...". Private to the commands. */
#ifndef FLOWCUT_ANALYZER_CMD_CLI_H
#define FLOWCUT_ANALYZER_CMD_CLI_H

#include <stdint.h>
#include <flowcut/reader.h>

/* Names the command ("analyze") and its usage text (both static) for the calls below. */
void fc__cli_init(const char *name, const char *usage);

/* Prints the usage on standard output; returns 0, the exit status of --help. */
int fc__cli_help(void);

/* Prints "flowcut NAME: ", the formatted message and "(see flowcut NAME --help)" as one line on
 * standard error; returns 2, the exit status of a usage error. */
int fc__cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The usage error for what getopt_long returned as c ('?' or, with an option string that starts
 * with ':', ':' for a missing value) on argv: names the option as the user wrote it. Returns 2. */
int fc__cli_bad_option(char **argv, int c);

/* Prints "flowcut NAME: " and the formatted message on standard error; returns 1. */
int fc__cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* fc__cli_fail with the library's last message (fc_errmsg). */
int fc__cli_failed(void);

/* Parses a whole non-negative decimal number, all of s; returns 0 or -1 (then *out is unchanged). */
int fc__cli_count(const char *s, uint64_t *out);

/* Says what the command is doing now, for a person watching: on standard error when it is a
 * terminal, never into a redirected log. */
void fc__cli_progress(const char *what);

/* Prints one warning line on standard error per rank file of t the reader could not read (the
 * trace was opened without it). */
void fc__cli_trace_warnings(const fc_trace *t);

#endif /* FLOWCUT_ANALYZER_CMD_CLI_H */
