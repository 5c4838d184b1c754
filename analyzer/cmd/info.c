/* analyzer/cmd/info.c: `flowcut info`, a summary of a trace, as text or JSON (report/info.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <flowcut/reader.h>
#include "report/report.h"
#include "analysis/analysis.h"
#include "cmd/cli.h"

static const char usage[] =
    "usage: flowcut info [--json] TRACE\n"
    "Summarises TRACE (a trace directory or one rank file).\n"
    "  --json   print one JSON object instead of text\n"
    "  --help   print this help\n";

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int json = 0, c, status = 1;
    fc_trace *t = NULL;
    fc__cli_init("info", usage);
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = 1;
            break;
        case 'h':
            return fc__cli_help();
        default:
            return fc__cli_bad_option(argv, c);
        }
    }
    if (argc - optind != 1)
        return fc__cli_usage("expects exactly one TRACE");
    fc__analysis_init(); /* OTF2 input for fc_trace_open */
    if (fc_trace_open(argv[optind], &t) < 0)
        return fc__cli_failed();
    fc__cli_trace_warnings(t);
    if (fc__report_info(stdout, t, argv[optind], json) < 0)
        status = fc__cli_failed();
    else if (fflush(stdout) != 0)
        status = fc__cli_fail("standard output: %s", strerror(errno));
    else
        status = 0;
    fc_trace_close(t);
    return status;
}
