/* tests/otf2/otf2-crash.c: preloaded by test-otf2-corrupt.sh in place of OTF2's
 * OTF2_Reader_ReadAllGlobalDefinitions, it dies of SIGSEGV as the library itself can on a damaged
 * archive (docs/results.md, "Fuzzing"): what the import must survive is a crash inside the library,
 * which no archive on disk reproduces every time. */
#include <signal.h>
#include <otf2/otf2.h>

OTF2_ErrorCode OTF2_Reader_ReadAllGlobalDefinitions(OTF2_Reader *reader, OTF2_GlobalDefReader *defs,
                                                    uint64_t *count)
{
    (void)reader, (void)defs, (void)count;
    raise(SIGSEGV);
    return OTF2_ERROR_INVALID;
}
