/* libtrace/wrappers.c: placeholder until the generator lands. */
#include "internal.h"
