/* tests/fuzz/cmd-remap.c: the main of `flowcut remap` as fz_main_remap, for fuzz-cli. */
int fz_main_remap(int argc, char **argv);
#define main fz_main_remap
#include "cmd/remap.c"
