/* tests/fuzz/cmd-info.c: the main of `flowcut info` as fz_main_info, for fuzz-cli. */
int fz_main_info(int argc, char **argv);
#define main fz_main_info
#include "cmd/info.c"
