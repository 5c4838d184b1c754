/* analyzer/model/names.c: the contention models' names and the check that a profile holds what a model
 * needs, so that a command can refuse a model once, up front, with the reason. */
#include <math.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "model/model.h"

static const char *const model_names[FC_NMODELS] = {
#define FC__X(name, num, text) [FC_MODEL_##name] = text,
    FC_MODELS(FC__X)
#undef FC__X
};

const char *fc__model_name(unsigned model)
{
    return model < FC_NMODELS ? model_names[model] : "unknown";
}

int fc__model_parse(const char *name)
{
    if (name == NULL)
        return -1;
    for (unsigned i = 0; i < FC_NMODELS; i++)
        if (strcmp(name, model_names[i]) == 0)
            return (int)i;
    return -1;
}

/* 1 when the segments of one list can give every size a finite time: at least one segment, and
 * figures that are numbers (a profile edited by hand may hold "nan"). */
static int segments_ok(const fc__segment *v, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i].latency) || !isfinite(v[i].per_byte))
            return 0;
    return 1;
}

int fc__model_usable(const fc__profile *p, unsigned model)
{
    if (p == NULL) {
        fc__err(FC_EINVAL, "no platform profile");
        return 0;
    }
    if (model >= FC_NMODELS) {
        fc__err(FC_EINVAL, "unknown model number %u", model);
        return 0;
    }
    /* Every model times intra-node messages (and the flowcut and fairshare models their
     * uncontended rates) from the segments; the intra-node list may be empty, the inter-node
     * one then stands in (fc__profile_time). */
    if (!segments_ok(p->inter, p->ninter)) {
        fc__err(FC_EINVAL, "the profile has no usable inter-node latency/bandwidth segment");
        return 0;
    }
    if (p->nintra && !segments_ok(p->intra, p->nintra)) {
        fc__err(FC_EINVAL, "an intra-node segment of the profile is not a number");
        return 0;
    }
    if (model == FC_MODEL_FLOWCUT && p->ncuts == 0) {
        /* A profile may lack some conflict kinds (self-calibration fits only those the trace
         * shows); those then cost nothing (model/netsim.c). Without any cut the model is linear. */
        fc__err(FC_EINVAL, "the profile has no flow cuts (calibrate conflicts first)");
        return 0;
    }
    if (model == FC_MODEL_MAXRATE) {
        const fc__maxrate *m = &p->maxrate;
        if (!p->has_maxrate) {
            fc__err(FC_EINVAL, "the profile has no max-rate parameters");
            return 0;
        }
        if (!(m->r_nic > 0) || !(m->r_core_base > 0) || !isfinite(m->r_nic) ||
            !isfinite(m->r_core_base) || !isfinite(m->r_core_incr) || !isfinite(m->s)) {
            fc__err(FC_EINVAL, "the profile's max-rate figures must be finite, its rates "
                               "positive (r_nic %g, r_core_base %g, r_core_incr %g, s %g)",
                    m->r_nic, m->r_core_base, m->r_core_incr, m->s);
            return 0;
        }
    }
    return 1;
}
