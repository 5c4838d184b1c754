/* tests/fuzz/cmd-analyze.c: the main of `flowcut analyze` as fz_main_analyze, for fuzz-cli. */
int fz_main_analyze(int argc, char **argv);
#define main fz_main_analyze
#include "cmd/analyze.c"
