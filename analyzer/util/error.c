/* analyzer/util/error.c: messages for the FC_E* codes of error.h and the last failure of this thread. */
#include <stdarg.h>
#include <stdio.h>
#include <flowcut/error.h>
#include "util/internal.h"

static __thread char last[512];

const char *fc_strerror(int code)
{
    switch (code) {
#define FC__X(name, num, msg)                                                                      \
    case -(num):                                                                                   \
        return msg;
        FC_ERRORS(FC__X)
#undef FC__X
    default:
        return "unknown error";
    }
}

int fc__err(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last, sizeof last, fmt, ap);
    va_end(ap);
    return code;
}

const char *fc_errmsg(void)
{
    return last;
}
