/* analyzer/analysis/inputs.c: hands fc_trace_open the input back-ends of the layers above the
 * trace layer, so that the reader opens OTF2 archives without calling into otf2/. */
#include "analysis/analysis.h"
#include "otf2/common.h"
#include "trace/input.h"

int fc__analysis_init(void)
{
    return fc__input_add(&fc__otf2_input);
}

/* For the shared library's users, who call no internal function: the back-ends are there from
 * the library's load. */
__attribute__((constructor)) static void add_inputs(void)
{
    (void)fc__analysis_init();
}
