/* analyzer/util/version.c: the library's own version, for programs that check at run time what
 * they were linked against (flowcut/version.h). */
#include <flowcut/version.h>

int fc_version(void)
{
    return FLOWCUT_VERSION;
}

const char *fc_version_string(void)
{
    return FLOWCUT_VERSION_STRING;
}
