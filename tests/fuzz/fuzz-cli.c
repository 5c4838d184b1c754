/* tests/fuzz/fuzz-cli.c: the command-line parsers of flowcut info, dump, analyze, export and
 * remap, each command's own main (compiled from analyzer/cmd/ with main renamed), on argument
 * vectors made from the input: the first byte chooses the command, the rest splits at NUL bytes
 * into at most 32 arguments. Arguments with a '/' are refused, and the commands run in the
 * scratch directory, so that whatever the parsers accept can only read and write there. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz.h"

int fz_main_info(int argc, char **argv);
int fz_main_dump(int argc, char **argv);
int fz_main_analyze(int argc, char **argv);
int fz_main_export(int argc, char **argv);
int fz_main_remap(int argc, char **argv);

static int (*const mains[])(int, char **) = {fz_main_info, fz_main_dump, fz_main_analyze,
                                             fz_main_export, fz_main_remap};
static const char *const names[] = {"flowcut-info", "flowcut-dump", "flowcut-analyze",
                                    "flowcut-export", "flowcut-remap"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int in_dir;
    char *argv[34];
    int argc = 0;
    if (size < 1 || memchr(data, '/', size) != NULL || fz_dir() == NULL)
        return 0;
    if (!in_dir) {
        if (chdir(fz_dir()) < 0)
            return 0;
        in_dir = 1;
    }
    unsigned which = data[0] % (sizeof mains / sizeof mains[0]);
    char *buf = malloc(size);
    if (buf == NULL)
        return 0;
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    argv[argc++] = (char *)names[which];
    for (char *p = buf; p < buf + size - 1 && argc < 33; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;
    optind = 0; /* glibc: start getopt afresh */
    mains[which](argc, argv);
    fz_clear();
    free(buf);
    return 0;
}
