/* analyzer/error.c: messages for the FC_E* codes of error.h. */
#include <flowcut/error.h>

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
