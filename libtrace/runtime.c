/* libtrace/runtime.c: placeholder until the runtime lands. */
#include "internal.h"
