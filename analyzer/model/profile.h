/* analyzer/model/profile.h: a platform profile, the measured figures every contention model reads: the
 * uncontended one-way message time (piecewise linear in the size, between nodes and inside one),
 * the eager/rendezvous threshold, the flow cuts of each conflict kind and k, and Gropp's max-rate
 * parameters, with the conditions they were measured under. flowcut-calibrate writes it; the
 * analyzer reads it (--platform) or fits one from a trace (self-calibration). The text format,
 * version 1, is documented in docs/platform-profile.md and in profile.c. Internal to
 * libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_PROFILE_H
#define FLOWCUT_ANALYZER_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FC_PROFILE_VERSION 1
/* The minor version this code reads and writes: a minor adds keys only (see profile.c). */
#define FC_PROFILE_MINOR 5

/* One-way time of a message of b bytes, lo <= b < hi (hi = UINT64_MAX for the last segment):
 * latency + b * per_byte, in seconds. eps is the relative standard error reached when the
 * segment's end points were measured (0 when unknown). */
typedef struct fc__segment {
    uint64_t lo, hi;
    double latency, per_byte;
    double eps;
} fc__segment;

/* The flow cuts of one conflict kind (FC_CONFLICT_* of flow.h) with k flows: a flow so labelled
 * moves its data at 1 / (1 + alpha) of its uncontended rate (Martinasso & Mehaut, section 5.1).
 * alpha[i], i < nalpha, is the cut of the i-th flow of the conflict in the order its flows are
 * listed (ascending flow id; in the calibration, ascending rank); the report's even conflicts
 * alternate two values. A mixed conflict is stored as two entries, kind MIXED_IN and MIXED_OUT,
 * k = 2, one alpha each. */
typedef struct fc__cut {
    uint32_t kind, k;
    size_t nalpha;
    double *alpha;
    double eps;
} fc__cut;

/* Gropp's max-rate model for k flows leaving one node for another:
 * T = s + k * n / min(r_nic, r_core_base + (k - 1) * r_core_incr), rates in bytes per second. */
typedef struct fc__maxrate {
    double s, r_nic, r_core_base, r_core_incr;
    double eps; /* relative residual of the least-squares fit */
} fc__maxrate;

/* The most opposite entries a profile holds (one per measured k). */
#define FC_OPPOSITE_MAX 16

typedef struct fc__profile {
    int version;             /* FC_PROFILE_VERSION when read or built */
    char source[64];         /* "calibrate", "trace" (self-calibrated), or another word */
    /* Conditions of the measurement. */
    uint32_t nodes, ranks_per_node;
    char mpi[256];           /* the MPI library's version string, one line */
    char date[32];           /* ISO 8601, UTC */
    char network[128];       /* free text, e.g. "emulated 200mbit full duplex" */
    double eps_target;       /* the epsilon asked for (e.g. 0.03) */
    uint64_t eager_threshold; /* bytes; 0 when unknown */
    size_t ninter, nintra;
    fc__segment *inter, *intra; /* sorted by lo, contiguous, the first from 0 */
    size_t ncuts;
    fc__cut *cuts;           /* sorted by kind then k */
    int has_maxrate;
    fc__maxrate maxrate;
    /* Hager & Wellein's model of IMB's multi-mode ping-pong (two pairs between two nodes), fitted
     * to such measurements (minor version 1): chunk size (bytes), raw unidirectional bandwidth
     * (bytes/s), latency (s), the OVERALL_VOL and MSGSPERSAMPLE the measurement ran with, and the
     * fit's relative RMS residual. */
    int has_imb;
    double imb_chunk, imb_bandwidth, imb_latency, imb_overall_vol, imb_msgs_per_sample, imb_eps;
    /* The late joiner's share (minor version 2), which the tcpshare model reads: a message that
     * begins moving data while n others already move data through one of its NIC directions
     * weighs 1 / (1 + g n) in that direction's weighted fair share, for its whole life. g >= 0
     * (0: plain fair share); kmax the most flows the measurement saw on one NIC; eps the largest
     * relative standard error of the times g came from. */
    int has_latejoin;
    double latejoin_g, latejoin_eps;
    uint32_t latejoin_kmax;
    /* The order of the messages of one connection (minor version 3): the messages from one rank
     * to another travel one connection of the transport, and with conn_serial set a message that
     * finds an earlier one of its connection still moving data waits for it to end, the
     * connection being one flow for the NICs (unless conn_ends, below, says they move side by
     * side and end in order); without it every message is a flow of its own.
     * conn_wait is the measured share of a later message's data time spent waiting for the
     * earlier one (0 side by side, 1 one after the other; conn_serial is conn_wait >= 1/2), eps
     * the largest relative standard error of the times it came from. */
    int has_conn;
    int conn_serial;
    double conn_wait, conn_eps;
    /* How the earlier message of a connection ends (minor version 5): conn_ends is the measured
     * share of the later message's data time by which the earlier one ended later than alone (0:
     * it ended as alone, the later one waiting behind it; 1: the later one took its share of the
     * NIC beside it). With conn_serial set and conn_ends >= 1/2 the connection's messages move
     * side by side, each a flow of its own, but end in the order they started: a message whose
     * data is through waits for the earlier ones of its connection to end (fc__profile_conn_ordered).
     * eps the largest relative standard error of the times it came from. */
    int has_conn_ends;
    double conn_ends, conn_ends_eps;
    /* The opposite direction's load (minor version 4): a message that begins moving data while
     * its destination's output is full first waits p_in seconds, and one whose source's input is
     * full p_out, where the delay grows with k, the number of messages that fill that opposite
     * direction (over TCP the message's acknowledgements queue behind their data). One entry per
     * measured k, sorted by k, at most FC_OPPOSITE_MAX; eps the largest relative standard error
     * of the times the entry came from. fc__profile_opposite interpolates. */
    size_t nopp;
    struct fc__opposite {
        uint32_t k;
        double p_in, p_out, eps;
    } opp[FC_OPPOSITE_MAX];
} fc__profile;

/* Whether the messages of one connection move side by side but end in the order they started
 * (connection serial with connection-ends 1/2 or more), and whether they move one at a time
 * (connection serial otherwise). */
static inline int fc__profile_conn_ordered(const fc__profile *p)
{
    return p->has_conn && p->conn_serial && p->has_conn_ends && p->conn_ends >= 0.5;
}
static inline int fc__profile_conn_one_at_a_time(const fc__profile *p)
{
    return p->has_conn && p->conn_serial && !fc__profile_conn_ordered(p);
}

/* Reads a profile file into a new *out, owned by the caller (fc__profile_free). Returns 0,
 * FC_EIO (file cannot be read), FC_ECORRUPT (a line that does not parse, with its number in
 * fc_errmsg), FC_EVERSION (a newer major format) or FC_ENOMEM. *out is NULL on failure. */
int fc__profile_read(const char *path, fc__profile **out);

/* Writes p in the text format to f. Returns 0 or FC_EIO when the stream reports an error. */
int fc__profile_write(FILE *f, const fc__profile *p);

/* A new empty profile (version set, no segments, cuts or max-rate), or NULL when out of memory. */
fc__profile *fc__profile_new(void);

/* Frees p and everything it owns; NULL is a no-op. */
void fc__profile_free(fc__profile *p);

/* The uncontended one-way time in seconds of a message of `bytes` between two nodes (intra = 0)
 * or inside one node (intra = 1), from the matching segment; the inter-node segments stand in
 * when there are no intra-node ones. Returns a negative value when the profile has no segment. */
double fc__profile_time(const fc__profile *p, int intra, uint64_t bytes);

/* The segment that holds `bytes` (NULL when there is none). */
const fc__segment *fc__profile_segment(const fc__profile *p, int intra, uint64_t bytes);

/* The flow cut of the i-th flow (0-based) of a conflict of kind with k flows: the entry with that
 * kind and k if there is one, else the nearest k measured for the kind (alphas scaled by
 * (k - 1) / (k' - 1) for same-direction conflicts, whose share falls as flows are added).
 * Returns a negative value when the profile has no cut for the kind. */
double fc__profile_alpha(const fc__profile *p, uint32_t kind, uint32_t k, uint32_t i);

/* The delay (seconds) of the opposite direction's load (profile.opposite): for a message entering
 * a node (out = 0, p_in) or leaving it (out = 1, p_out) while k messages fill that node's other
 * direction. Linear between the measured k (and 0 at k = 0), the last measured value beyond the
 * largest: the queue that delays the message is bounded. 0 when the profile has no entry or
 * k <= 0; never negative. */
double fc__profile_opposite(const fc__profile *p, int out, double k);

/* Adds the entry of k (delays p_in, p_out >= 0, seconds) and keeps the entries sorted. Returns 0,
 * FC_EINVAL (k already there, k = 0, a negative or non-finite delay) or FC_ENOMEM (the table
 * is full). */
int fc__profile_add_opposite(fc__profile *p, uint32_t k, double p_in, double p_out, double eps);

/* Like fc__profile_write, with notes (free text, lines split at '\n') written as '#' comments
 * after the first record: the calibrator says there how it measured and what it could not fit. */
int fc__profile_write_notes(FILE *f, const fc__profile *p, const char *notes);

/* Appends a segment to the inter-node (intra = 0) or intra-node list; the caller keeps them
 * sorted and contiguous. Returns 0 or FC_ENOMEM. */
int fc__profile_add_segment(fc__profile *p, int intra, uint64_t lo, uint64_t hi, double latency,
                            double per_byte, double eps);

/* Adds the cut of kind with k flows, copying the nalpha values of alpha, and keeps the cuts sorted.
 * Returns 0, FC_EINVAL (that kind and k are already there) or FC_ENOMEM. */
int fc__profile_add_cut(fc__profile *p, uint32_t kind, uint32_t k, const double *alpha, size_t nalpha,
                        double eps);

#endif /* FLOWCUT_ANALYZER_PROFILE_H */
