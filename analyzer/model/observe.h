/* analyzer/model/observe.h: what each flow's observed time is made of, and so whether a contention
 * model can be judged on it. From the events of both ends (match.h's wait entries) it splits the
 * time into waiting for the peer, time when neither end was inside MPI, time on the wire at the
 * platform's rate, and the rest; from the ranks' hosts and CPU affinity, whether the flow's
 * machines ran more ranks than cores; and gives each flow one class (docs/analyze.md). Internal to
 * libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_OBSERVE_H
#define FLOWCUT_ANALYZER_OBSERVE_H

#include <stddef.h>
#include <stdint.h>
#include <flowcut/reader.h>
#include "match/match.h"
#include "model/profile.h"

/* The classes, in the order a flow is tested for them after below-wire (observe.c): X(name,
 * number, text). */
#define FC_OBS_CLASSES(X)                                                                          \
    X(NETWORK, 0, "network")                                                                      \
    X(LATE_PEER, 1, "late-peer")                                                                  \
    X(NO_PROGRESS, 2, "no-progress")                                                              \
    X(LATENCY, 3, "latency")                                                                      \
    X(OVERSUBSCRIBED, 4, "oversubscribed")                                                        \
    X(BELOW_WIRE, 5, "below-wire")

enum fc__obs_class {
#define FC__X(name, num, text) FC_OBS_##name = num,
    FC_OBS_CLASSES(FC__X)
#undef FC__X
    FC_OBS_NCLASSES
};

/* A share of the observed time a part must reach to give the flow its class. */
#define FC_OBS_MAJOR_SHARE 0.5
/* The share of a flow's time its busier NIC direction must have been kept busy for the flow's
 * time to be set by moving bytes on an oversubscribed machine (observe.c): below it, the bytes
 * that crossed that NIC while the flow was active would have crossed in less than this share of
 * its time at the platform's rate, and the ranks' turns at the cores set the time. */
#define FC_OBS_BUSY_SHARE 0.75
/* A flow is below the wire when its observed time (plus the clock uncertainties) is below this
 * share of its data time: more than twice the platform's rate, which no estimate of the rate
 * misses by, so that only clock problems remain. */
#define FC_OBS_WIRE_MARGIN 0.5

/* One flow's observation. The four parts are seconds; for a flow of non-negative observed time
 * they add up to it. */
typedef struct fc__obs {
    uint32_t cls;       /* FC_OBS_* */
    uint32_t clock;     /* 1 when its ends contradict the clocks beyond the two ranks' uncertainties
                           (receive completing before the send started, or a waiting send
                           completing before the receive was posted) */
    double late_peer;   /* one end inside MPI waiting for the other */
    double no_progress; /* (rendezvous) neither end inside MPI: the transfer could not progress */
    double wire;        /* latency + bytes x per-byte of the platform, at most what is left */
    double rest;        /* what is left: contention, descheduling, noise */
    /* Bytes that crossed the flow's NICs while it was active, each flow counted at its average
     * rate (bytes / observed time), itself included: out of and into its source node, into and
     * out of its destination node. */
    double src_out, src_in, dst_in, dst_out;
    double busy;        /* the share of its time its busier NIC direction was kept busy at the
                           platform's rate (observe.c), 0 without a platform */
} fc__obs;

/* A machine (host name) and the ranks it ran. */
typedef struct fc__obs_host {
    const char *name;   /* the trace's (valid while the trace is open) */
    uint32_t ranks;     /* ranks whose files name it */
    uint32_t cores;     /* CPUs in the union of those ranks' affinity lists; 0 when unknown */
    uint32_t nodes;     /* the trace's nodes among its ranks */
} fc__obs_host;

typedef struct fc__observation {
    size_t n;           /* inter-node flows (m->ninter) */
    fc__obs *flow;      /* by flow id */
    int have_platform;  /* the classes used a platform's wire times */
    int all;            /* the statistics count every class (--flows all) */
    uint8_t *judged;    /* by flow id: 1 when the error statistics count the flow */
    size_t njudged;
    /* Per class: flows, and the sums of their observed times and parts. */
    uint64_t count[FC_OBS_NCLASSES];
    double observed_s[FC_OBS_NCLASSES], late_peer_s[FC_OBS_NCLASSES], no_progress_s[FC_OBS_NCLASSES],
        wire_s[FC_OBS_NCLASSES], rest_s[FC_OBS_NCLASSES];
    /* Flows faster than their bytes can cross at the platform's rate (beyond the two ranks' clock
     * uncertainties): the worst by the time it lacks. */
    uint64_t below_wire;
    double worst_below_s;
    uint64_t worst_below_flow;
    /* Flows whose ends contradict the clocks (fc__obs.clock): the worst by the time by which its
     * receive completed before its send started, or its waiting send before its receive was
     * posted. */
    uint64_t contradicting;
    double worst_contradiction_s;
    uint64_t worst_contradicting_flow;
    /* Machines. oversub[w]: world rank w's machine ran more ranks than cores (0 when unknown). */
    size_t nhosts;
    fc__obs_host *hosts;
    uint8_t *oversub;
    uint32_t world;
    int cores_known;    /* every rank recorded its affinity */
    char platform_note[512]; /* why there is no platform (self-calibration declined), or "" */
} fc__observation;

/* The parts of every inter-node flow of m that come from its events alone (waiting for the peer,
 * no progress) and the machines of trace t, into a new *out owned by the caller
 * (fc__observation_free); no class yet. m must come from fc__match_trace (m->waits). all: the
 * statistics will count every class. Returns 0, FC_EINVAL (m has no wait entries) or FC_ENOMEM. */
int fc__observe_new(const fc_trace *t, const fc__match *m, int all, fc__observation **out);

/* Gives every flow its wire part, busy share, rest and class with profile p (NULL: no platform,
 * see observe.c), and sets judged[], the counts and the sums; may be called again with another
 * profile. Never fails. */
void fc__observe_classify(fc__observation *o, const fc__match *m, const fc__profile *p);

/* The name of a class ("network" ...), or "unknown". */
const char *fc__obs_class_name(unsigned cls);

/* Frees an observation; NULL is a no-op. */
void fc__observation_free(fc__observation *o);

#endif /* FLOWCUT_ANALYZER_OBSERVE_H */
