/* tests/fuzz/cmd-export.c: the main of `flowcut export` as fz_main_export, for fuzz-cli. */
int fz_main_export(int argc, char **argv);
#define main fz_main_export
#include "cmd/export.c"
