/* tests/fuzz/cmd-dump.c: the main of `flowcut dump` as fz_main_dump, for fuzz-cli. */
int fz_main_dump(int argc, char **argv);
#define main fz_main_dump
#include "cmd/dump.c"
