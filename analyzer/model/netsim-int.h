/* analyzer/model/netsim-int.h: what the fluid simulation (netsim.c) and the models' rate solvers
 * (speeds.c) share: a message in flight, the simulation's state, the solvers' scratch and the
 * handle. model/netsim.c explains the simulation, model/speeds.c the models. Internal to
 * model/netsim.c and model/speeds.c. */
#ifndef FLOWCUT_ANALYZER_NETSIM_INT_H
#define FLOWCUT_ANALYZER_NETSIM_INT_H

#include <stddef.h>
#include <stdint.h>
#include "conflict/intervals.h"
#include "model/model.h"

/* PH_HELD: the data is through, but an earlier message of its connection has not ended (a
 * profile whose connections end in order, fc__profile_conn_ordered): it ends with that one. */
enum { PH_LAT, PH_DATA, PH_HELD, PH_DONE };

typedef struct msg {
    uint64_t key;
    uint64_t conn;       /* the caller's connection (0: none); see hold_connections */
    uint32_t src, dst;   /* the caller's node numbers */
    uint32_t isrc, idst; /* the same as dense indices into the per-node scratch arrays */
    int intra;
    int phase;           /* PH_* */
    double lat_end;      /* PH_LAT: when the data phase begins */
    double work;         /* uncontended seconds of data left, as of the state's time */
    double speed;        /* PH_DATA: fraction of the uncontended rate, set by the last solve */
    double fin;          /* PH_DATA: completion at that speed; PH_DONE: when it completed */
    /* The late joiner's share (flowcut model, profile with late-joiner): fresh from the step
     * that begins the data phase (at data_start) until the next solve, which counts the messages
     * whose data phase began before, through either of its NIC directions (the larger count of
     * the two), and fixes its weight. */
    int fresh;
    double data_start, weight;
    /* The opposite direction's delay (flowcut model, profile with opposite entries): decided at
     * the first solve that lists the message moving data; until stall_end it moves none. */
    int decided;
    double stall_end;
} msg;

typedef struct state {
    double now;
    msg *v; /* sorted by key; equal keys in order of start */
    size_t n, ndone;
    /* v lies in buf (aux.vcap long) from index head, with room on both sides: a message joins
     * near the end (keys mostly arrive in increasing order) and the first completed one leaves
     * near the front, so each moves the messages on its shorter side, not the whole array. */
    msg *buf;
    size_t head;
    /* With known set, the earliest lat_end of the messages in their latency phase and the
     * earliest fin of those moving data (INFINITY for none), as a scan of v in order finds them:
     * solve works them out in the loop that sets fin, so that run() need not go over the messages
     * once more for each event. Between two solves only the work changes, but for a message
     * started (fc__net_start adds its latency end) and completed ones removed (they have no part
     * in either time). */
    int known;
    double elat, efin;
} state;

/* One NIC direction in the fairshare solve. */
typedef struct nicdir {
    uint32_t live;      /* messages through it not yet frozen */
    int sat;            /* full this round */
    double cap;         /* capacity left, in speeds (1: one message alone) */
    double q;           /* this round's cap / live, while live */
    size_t start, fill; /* its messages in aux.bucket */
} nicdir;

/* Conflicts of fewer flows than this have their flow cuts remembered (aux.alpha). */
#define ALPHA_K 32

/* What fc__net_next fills in although it takes a const handle (its result is memoized: the
 * handle is logically const), and the solvers' scratch. Sized by fc__net_start, the one place
 * that may grow the set of messages or nodes, so the solvers never allocate (but for the flowcut
 * labelling's working memory, which grows when a re-solve has more messages than any before). */
typedef struct aux {
    int err;      /* a failed re-solve (FC_E*): the simulation cannot go on */
    int valid;    /* look and next hold the look-ahead from the current state */
    double next;
    state look;   /* the state at time next, once the first completion is marked; also
                     fc__net_start's trial run towards a start time */
    size_t mcap;  /* capacity of the per-message arrays below */
    size_t vcap;  /* capacity of both states' buf */
    size_t *idx;  /* the inter-node messages in their data phase, in key order */
    uint32_t *src, *dst;
    fc__label *lab;
    unsigned char *frozen;
    size_t ncap;  /* capacity of the per-node arrays */
    uint32_t *cout, *cin;
    nicdir *res;  /* fairshare: 2 per node, output then input */
    size_t *rlist; /* fairshare: the resources in use (2 per message at most) */
    size_t *bucket; /* fairshare: each resource's messages (2 per message) */
    /* flowcut: fc__profile_alpha's answer for a same-direction conflict (0 outgoing, 1
     * incoming) of k flows and the flow's place i in it, and for the two mixed roles, once asked
     * (has_*): every re-solve asks again for every message, and the answer, a search of the
     * profile's cuts, depends on the profile alone, which does not change under a simulation. */
    fc__label_scratch lsc; /* flowcut: the labelling's working memory, kept between re-solves */
    /* hold_connections: an open-addressing set of the connections met in one re-solve (0 marks
     * an empty slot), ccap long, a power of two at least twice the messages in flight. */
    uint64_t *cset;
    size_t ccap;
    double alpha[2][ALPHA_K][ALPHA_K], alpha_mixed[2];
    unsigned char has_alpha[2][ALPHA_K][ALPHA_K], has_mixed[2];
} aux;

struct fc__net {
    const fc__profile *p;
    unsigned model;
    state s;
    /* The caller's node numbers to dense indices, index + 1 (0: not seen yet). Numbers below
     * NODE_DIRECT, which are all a trace of node or rank numbers has, index a plain table (dir,
     * dcap long) at the cost of one load; larger ones go to a hash table (open addressing, key
     * and val, hcap long, nhash of them in it). */
    uint32_t *dir;
    size_t dcap;
    uint32_t *hkey, *hval;
    size_t hcap, nhash, nnodes;
    aux *a;
};

/* Gropp's aggregate rate, bytes per second, of k messages sharing a NIC direction. A negative
 * r_core_incr (a fit extrapolated past the k it saw) would make it vanish for large k: it is
 * kept at r_core_base / k or more, as if one core time-shared the k messages. */
static inline double maxrate_agg(const fc__maxrate *m, uint32_t k)
{
    double core = m->r_core_base + (double)(k - 1) * m->r_core_incr;
    if (core < m->r_core_base / k)
        core = m->r_core_base / k;
    return core < m->r_nic ? core : m->r_nic;
}

/* ---- the models' speeds (speeds.c) --------------------------------------------------------------
 * Each sets the speed of the d messages listed in a->idx (inter-node, in their data phase, in key
 * order) at the state's time; step() has set them to 1 before. */

/* Flow cuts: labels (into a->lab) by the rules of intervals.h, then alpha for the flow's place in
 * its conflict. Returns 0 or the labelling's FC_E* code. */
int fc__speeds_flowcut(const fc__net *n, aux *a, state *s, size_t d);
/* Max-min fair shares of the NIC directions. */
void fc__speeds_fairshare(aux *a, state *s, size_t d);
/* The flowcut model's weighted share (the late joiner), after fc__speeds_flowcut, whose labels and
 * speeds it reads; first, with the profile's opposite entries, the delay of each message listed
 * for the first time (msg.decided, msg.stall_end). Returns how many it delayed: their speeds are
 * then unset, and the caller solves again without them. */
size_t fc__speeds_share(const fc__net *n, aux *a, state *s, size_t d);
/* Gropp's max-rate. */
void fc__speeds_maxrate(const fc__net *n, aux *a, state *s, size_t d);

#endif /* FLOWCUT_ANALYZER_NETSIM_INT_H */
