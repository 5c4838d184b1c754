/* flowcut/error.h: the error codes every fallible flowcut library function returns.
 *
 * Convention, for the whole public API: a function that can fail returns 0 on success (or a count,
 * where its declaration says so) and a negative FC_E* code on failure. Codes are append-only. */
#ifndef FLOWCUT_ERROR_H
#define FLOWCUT_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#define FC_ERRORS(X)                                                                               \
    X(OK, 0, "success")                                                                           \
    X(NOMEM, 1, "out of memory")                                                                  \
    X(IO, 2, "input/output error")                                                                \
    X(NOENT, 3, "no such file or trace")                                                          \
    X(NOTTRACE, 4, "not a flowcut trace (bad magic)")                                             \
    X(VERSION, 5, "trace written by a newer major format version")                                \
    X(TRUNCATED, 6, "trace file is truncated")                                                    \
    X(CORRUPT, 7, "trace file is corrupt")                                                        \
    X(INVAL, 8, "invalid argument")                                                               \
    X(ENDIAN, 9, "trace has a foreign byte order")                                                \
    X(ZLIB, 10, "compressed block cannot be inflated")                                            \
    X(EXISTS, 11, "file exists")                                                                  \
    X(UNSUPPORTED, 12, "unsupported input")

enum fc_error {
#define FC__X(name, num, msg) FC_E##name = -(num),
    FC_ERRORS(FC__X)
#undef FC__X
};

/* Returns a static, never-freed English message for an FC_E* code (or "unknown error"). */
const char *fc_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCUT_ERROR_H */
