/* analyzer/collective/collective.h: MPI collectives as the point-to-point messages of the algorithms
 * MPICH 4.0.2 (device ch4, netmod ucx, shared-memory module posix) selects for them, shared by the
 * analysis (which turns the messages into flows) and the remap replay (which moves them through the
 * network model). Internal to libflowcut-analyzer.
 *
 * Two levels of selection, as in MPICH. The ch4 device first picks a "composition" by its own
 * table (the ch4 JSON compiled into libmpich) for the blocking Barrier, Bcast, Allreduce, Reduce
 * and Scan on a communicator whose members share nodes (MPICH's "parent" hierarchy: fewer nodes
 * than members); every other case calls MPIR's algorithm on the whole communicator (on an
 * inter-communicator MPIR's inter-communicator algorithms, fc__coll_select_inter):
 *   Barrier    alpha: the members of each node report to its leader (its lowest member), the
 *              leaders run MPIR's barrier, each leader releases its node with 1 byte
 *   Bcast      alpha (fewer than 8 members, or < 12288 bytes): the root hands the buffer to its
 *              node's leader, the leaders broadcast (MPIR on the leaders), each leader to its node;
 *              beta (power-of-two size, < 524288 bytes): the root broadcasts inside its node
 *              first, then the leaders, then the other nodes; gamma otherwise: MPIR on everyone
 *   Allreduce  alpha (any size, operations taken as commutative): each node reduces to its
 *              leader, the leaders all-reduce (MPIR), each leader broadcasts inside its node
 *   Reduce     beta (<= 2048 bytes): the other nodes reduce to their leaders, the leaders reduce
 *              to the root's node (MPIR), the root's node reduces to the root; alpha (larger):
 *              every node to its leader, the leaders to member 0's node, member 0 to the root
 *   Scan       alpha when each node's members are consecutive ranks (the table's
 *              is_node_consecutive; MPIR's own "smp" scan has the same messages, so it holds with
 *              the device off too, unless an algorithm is forced): the node's members scan among
 *              themselves (recursive doubling), the last hands the node's total to the leader, the
 *              leaders scan (MPIR), each leader sends its prefix to the next node's leader, and each
 *              leader broadcasts a flag and then the prefix in its node; recursive doubling on
 *              every member otherwise
 *   Exscan     the device's composition calls MPIR's recursive doubling on every member
 * Inside a node the posix module's release-gather collectives move the data through shared
 * memory; they are modelled as messages between the leader and each member of its node (the scan
 * inside a node is MPIR's recursive doubling among its members). The
 * leaders' own collective is MPIR's algorithm for their number, so it may differ from the one
 * the whole communicator would get. MPIR_CVAR_DEVICE_COLLECTIVES=0 (or
 * MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE=0) skips the device: MPIR's algorithm runs on everyone (its
 * barrier is node-aware too, with the same messages between nodes).
 *
 * MPIR's selection (src/mpi/coll/coll_selection.json, compiled into libmpich), with the
 * MPIR_CVAR_<COLL>_INTRA_ALGORITHM variables of the run forcing an algorithm:
 *   Bcast      binomial (fewer than 8 ranks, or <= 12288 bytes); scatter + recursive-doubling
 *              allgather (power-of-two size, <= 524288 bytes); scatter + ring allgather otherwise
 *   Allreduce  recursive doubling (<= 8 bytes, or fewer elements than the power of two below the
 *              size, elements counted as 8 bytes); reduce-scatter + allgather (Rabenseifner)
 *   Reduce     binomial (<= 2048 bytes, or fewer elements than that power of two); reduce-scatter
 *              + binomial gather otherwise
 *   Barrier    dissemination with k = 2 (0-byte messages); communicator constructors, which
 *              synchronise their parent communicator, are expanded as a barrier of it
 *   Allgather(v)  recursive doubling (power of two, total < 524288); Bruck (other sizes, total <
 *              81920); ring otherwise
 *   Gather, Scatter  binomial; Gatherv, Scatterv: linear
 *   Alltoall   Bruck (8 ranks or more and <= 256 bytes per peer); scattered (every post, one wait)
 *              up to 32768 bytes per peer; pairwise exchange above; Alltoallv/w scattered
 *   Reduce_scatter(_block)  recursive halving (power of two, total < 524288); pairwise otherwise
 *   Scan, Exscan  recursive doubling
 * The non-blocking forms use their own thresholds where MPICH's table differs (Ibcast < 12288,
 * Iallreduce <= 2048, Ialltoall Bruck up to 2048 bytes) and the same message patterns; ch4 hands
 * them to MPIR without a composition, whose table takes its node-aware schedules ("smp") for
 * Ibcast, Ireduce and Iscan on a communicator whose members share nodes: they have the messages
 * of the blocking Bcast alpha, Reduce beta (any size) and Scan alpha (consecutive nodes only),
 * the leaders' part with the non-blocking thresholds. */
#ifndef FLOWCUT_ANALYZER_COLLECTIVE_H
#define FLOWCUT_ANALYZER_COLLECTIVE_H

#include <stddef.h>
#include <stdint.h>
#include <flowcut/format.h>

/* Algorithms: X(name, the value MPICH's MPIR_CVAR_*_INTRA_ALGORITHM gives it, or for the
 * inter-communicator ones its MPIR_CVAR_*_INTER_ALGORITHM). Append only. */
#define FC__COLL_ALGS(X)                                                                           \
    X(AUTO, "auto")                                                                               \
    X(BINOMIAL, "binomial")                                                                       \
    X(SCATTER_RD_ALLGATHER, "scatter_recursive_doubling_allgather")                               \
    X(SCATTER_RING_ALLGATHER, "scatter_ring_allgather")                                           \
    X(RECURSIVE_DOUBLING, "recursive_doubling")                                                   \
    X(REDUCE_SCATTER_ALLGATHER, "reduce_scatter_allgather")                                       \
    X(REDUCE_SCATTER_GATHER, "reduce_scatter_gather")                                             \
    X(BRUCKS, "brucks")                                                                           \
    X(RING, "ring")                                                                               \
    X(LINEAR, "linear")                                                                           \
    X(SCATTERED, "scattered")                                                                     \
    X(PAIRWISE, "pairwise")                                                                       \
    X(RECURSIVE_HALVING, "recursive_halving")                                                     \
    X(K_DISSEMINATION, "k_dissemination")                                                         \
    X(COMPOSITION_ALPHA, "composition_alpha")                                                     \
    X(COMPOSITION_BETA, "composition_beta")                                                       \
    X(INTER_BCAST, "bcast")                                                                       \
    X(REMOTE_SEND_LOCAL_BCAST, "remote_send_local_bcast")                                         \
    X(REDUCE_EXCHANGE_BCAST, "reduce_exchange_bcast")                                             \
    X(LOCAL_REDUCE_REMOTE_SEND, "local_reduce_remote_send")                                       \
    X(LOCAL_GATHER_REMOTE_SEND, "local_gather_remote_send")                                       \
    X(REMOTE_SEND_LOCAL_SCATTER, "remote_send_local_scatter")                                     \
    X(LOCAL_GATHER_REMOTE_BCAST, "local_gather_remote_bcast")                                     \
    X(PAIRWISE_EXCHANGE, "pairwise_exchange")                                                     \
    X(REMOTE_GATHER_LOCAL_BCAST, "remote_gather_local_bcast")                                     \
    X(REMOTE_REDUCE_LOCAL_SCATTER, "remote_reduce_local_scatter")                                 \
    X(NONCOMMUTATIVE, "noncommutative")                                                           \
    X(INTER_SHORT, "short")                                                                       \
    X(INTER_LONG, "long")                                                                         \
    X(REMOTE_REDUCE_LOCAL_BCAST, "remote_reduce_local_bcast")                                     \
    X(REMOTE_REDUCE_LOCAL_SCATTERV, "remote_reduce_local_scatterv")

enum fc__coll_alg {
#define FC__X(name, text) FC__CA_##name,
    FC__COLL_ALGS(FC__X)
#undef FC__X
    FC__CA_COUNT_
};

/* The name of an algorithm ("binomial", ...), or "unknown". */
const char *fc__coll_alg_name(unsigned alg);

/* 1 for the FC_EV_* kinds of collectives (blocking and non-blocking), else 0. */
int fc__coll_is_coll(unsigned kind);

/* The persistent collectives (MPI-4's MPI_Bcast_init ..., the neighbourhood ones' _init): the
 * non-blocking kind whose messages each of their Starts has, else 0. MPICH 4.0.2 builds a
 * persistent collective with its non-blocking form's schedule (MPIR_<Coll>_init_impl calls
 * MPIR_I<coll>_sched_impl, is_persistent set), chosen by the same table (MPIR_Csel_search on the
 * I<coll> signature) and the same MPIR_CVAR_I<COLL>_*_ALGORITHM, without a ch4 composition; each
 * MPI_Start runs that schedule once. */
unsigned fc__coll_persistent(unsigned kind);

/* 1 for the communicator constructors that synchronise their parent communicator (MPI_Comm_free
 * is local in MPICH; MPI_Comm_create_group involves its group only; the inter-communicator
 * constructors are left out), else 0. */
int fc__coll_is_ctor(unsigned kind);

/* The run's settings that change the selection: per collective kind, the algorithm a
 * MPIR_CVAR_<COLL>_INTRA_ALGORITHM forces (and on an inter-communicator, one a
 * MPIR_CVAR_<COLL>_INTER_ALGORITHM forces), FC__CA_AUTO where none does. Zeroed means MPICH's
 * defaults. */
typedef struct fc__coll_settings {
    uint8_t force[FC_EV_MAX_];
    uint8_t force_inter[FC_EV_MAX_]; /* the same from MPIR_CVAR_<COLL>_INTER_ALGORITHM */
    uint8_t no_device[FC_EV_MAX_]; /* 1: MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE (or the global one) is off */
    /* Which ranks MPICH takes as sharing a node: all those of a host, unless MPIR_CVAR_NOLOCAL
     * makes every rank its own node, or MPIR_CVAR_NUM_CLIQUES splits each host's ranks into that
     * many groups (round robin, or in blocks with MPIR_CVAR_CLIQUES_BY_BLOCK; 2 groups round robin
     * with MPIR_CVAR_ODD_EVEN_CLIQUES). */
    uint8_t nolocal, cliques_by_block;
    uint32_t cliques;
} fc__coll_settings;

/* Applies one environment variable NAME=VALUE of the run to s. Returns 1 when it forces an
 * algorithm the expansion models (or sets one back to auto), 0 when the variable does not change
 * the selection, and FC_EUNSUPPORTED when it forces an algorithm the expansion does not model
 * (MPICH's "nb", "smp", "tree", "recexch", ...) or replaces MPICH's selection tables
 * (MPIR_CVAR_*COLL_SELECTION_TUNING_JSON_FILE): s is left as it was, so MPICH's default selection
 * stands in for it and the caller says so. MPIR_CVAR_<COLL>_INTER_ALGORITHM forces one of the
 * collective's inter-communicator algorithms (fc__coll_inter_has; "auto" and the non-blocking
 * forms' "sched_auto" give the choice back). MPIR_CVAR_DEVICE_COLLECTIVES and
 * MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE (booleans) turn the ch4 compositions off or on. */
int fc__coll_setting(fc__coll_settings *s, const char *name, const char *value);

/* The algorithm MPICH selects for a collective of kind (FC_EV_*; communicator constructors count
 * as MPI_Barrier) on p members with size n (as fc__coll_expand takes it), under settings s (NULL:
 * the defaults). FC__CA_AUTO for a kind without an expansion. */
unsigned fc__coll_select(unsigned kind, uint32_t p, uint64_t n, const fc__coll_settings *s);

/* Receives the messages of an expanded collective, in the order the member posts them: send or
 * recv (peer is a member index) of bytes, and wait (on everything posted since the last wait).
 * The waits divide a member's part into its steps: step 0 is what it posts before its first wait. */
typedef struct fc__coll_sink {
    int (*post)(void *ctx, int send, uint32_t peer, uint64_t bytes);
    int (*wait)(void *ctx);
    void *ctx;
} fc__coll_sink;

/* Emits member me's part of a collective of kind (FC_EV_MPI_*) run with algorithm alg (from
 * fc__coll_select) on p members with root (a member index, 0 when rootless) and size n in bytes
 * (the instance's size: the buffer of Bcast, Reduce, Allreduce, Scan; one member's block for
 * Gather, Scatter, Allgather; the bytes to one peer for Alltoall; the total for Reduce_scatter),
 * own the bytes this member itself sends (Gatherv, Scatterv, Alltoallv/w, Allgatherv).
 * Communicator constructors pass FC_EV_MPI_Barrier. Returns 0, the sink's error, or
 * FC_EUNSUPPORTED for a kind or algorithm that has no expansion (the caller treats the call as
 * computation). */
int fc__coll_expand(unsigned kind, unsigned alg, uint32_t p, uint32_t me, uint32_t root, uint64_t n,
                    uint64_t own, const fc__coll_sink *sink);

/* The nodes of a communicator as MPICH's ch4 device arranges them: the leaders (each node's lowest
 * member, in the order of their nodes' first members), each member's node as its leader's
 * position, and each node's members in member order (member[start[k] .. start[k + 1])). */
typedef struct fc__coll_nodes {
    uint32_t p, nn;
    uint32_t *leader, *of, *start, *member;
} fc__coll_nodes;

/* Builds d (freed with fc__coll_nodes_free) for p members on node[] (any numbering), in O(p).
 * Returns 0 or FC_ENOMEM. */
int fc__coll_nodes_build(uint32_t p, const uint32_t *node, fc__coll_nodes *d);
void fc__coll_nodes_free(fc__coll_nodes *d);

/* One member's neighbours in a communicator's virtual topology, for the neighbourhood collectives:
 * member indices in the order of the call's buffers (format.h, COMMS), FC__COLL_NO_PEER for
 * MPI_PROC_NULL. */
#define FC__COLL_NO_PEER UINT32_MAX
typedef struct fc__coll_nbrs {
    uint32_t indeg, outdeg;
    const uint32_t *src, *dst;
} fc__coll_nbrs;

/* What the expansion knows of one call beyond its size: where the members are and what the run
 * set, and for the v and w forms the bytes per peer. Every pointer may be NULL. */
typedef struct fc__coll_layout {
    const uint32_t *node;               /* node of each member index (p entries, any numbering) */
    const fc__coll_nodes *nodes;        /* the same arranged (fc__coll_nodes_build), or NULL: a
                                         * caller expanding every member builds it once */
    const fc__coll_settings *settings;  /* the run's settings (NULL: MPICH's defaults) */
    /* The v and w forms, as member me records them (p entries): to[i] the bytes it sends to member
     * i, from[i] the bytes it receives from member i (Allgatherv: member i's block; Gatherv: at the
     * root; Scatterv: to, at the root). NULL: the totals are spread evenly. */
    const uint64_t *to, *from;
    /* On an inter-communicator, the size of its low group: the call's members are that group's
     * (0 .. inter - 1) followed by the other's, the v and w forms' to and from index the other
     * group, and the root is a member index of either. 0 on an intra-communicator. */
    uint32_t inter;
    /* The neighbourhood collectives: member me's neighbours (NULL: unknown, no expansion), and
     * the bytes it receives in all (the record's bytes2). to and from, when given, index
     * neighbour positions (COUNTS of the neighbourhood collectives). */
    const fc__coll_nbrs *nbrs;
    uint64_t received;
    /* A reduction's operation: FC_EVF_USER_OP and FC_EVF_NONCOMMUTATIVE as its records carry
     * them (0: predefined), and for Reduce_scatter whether the blocks differ between members. */
    uint32_t op;
    uint8_t irregular;
} fc__coll_layout;

/* 1 when MPICH's ch4 device sees the p members of node[] as a "parent" communicator (fewer nodes
 * than members, so that it builds a communicator of the node leaders), else 0. */
int fc__coll_node_aware(uint32_t p, const uint32_t *node);

/* The algorithm or composition MPICH's ch4 device runs for kind on p members with size n laid out
 * as lay says (NULL: nothing known, which is fc__coll_select). */
unsigned fc__coll_select_in(unsigned kind, uint32_t p, uint64_t n, const fc__coll_layout *lay);

/* fc__coll_expand with the layout: the compositions (FC__CA_COMPOSITION_*) need lay->node, the
 * leaders' algorithm lay->settings, and the v and w forms take their bytes per peer from lay->to
 * and lay->from when given. lay NULL is fc__coll_expand. */
int fc__coll_expand_in(unsigned kind, unsigned alg, uint32_t p, uint32_t me, uint32_t root, uint64_t n,
                       uint64_t own, const fc__coll_layout *lay, const fc__coll_sink *sink);

/* The algorithm MPICH's MPIR layer runs for a collective of kind on an inter-communicator of
 * groups of a (the low one) and b members, with the root at member index root (a + b members as
 * fc__coll_layout.inter numbers them; anything when rootless) and size n, under settings s (NULL:
 * the defaults; a MPIR_CVAR_<COLL>_INTER_ALGORITHM naming one of kind's algorithms forces it).
 * The blocking ones (coll_selection.json, "comm_type=inter"):
 *   Barrier    bcast: a barrier in each group, then 1 byte from the low group's first member to the
 *              other group (received by its first member, broadcast in the group) and back
 *   Bcast      remote_send_local_bcast: the root to the other group's first member, which
 *              broadcasts in its group (MPIR's algorithm for the group's size)
 *   Allreduce  reduce_exchange_bcast: each group reduces to its first member, the two exchange,
 *              each broadcasts in its group
 *   Reduce     local_reduce_remote_send: the other group reduces to its first member, which sends
 *              to the root
 *   Gather, Scatter  local_gather_remote_send / remote_send_local_scatter (the leaf group's
 *              blocks together below 2048 bytes): through the leaf group's first member; linear
 *              (one block at a time between the root and each member) otherwise
 *   Allgather  local_gather_remote_bcast: each group gathers to its first member, the low group's
 *              blocks go to the other group and back as broadcasts
 *   Alltoall(v, w)  pairwise_exchange: max(a, b) steps, member i sends to the other group's
 *              member i + s and receives from its member i - s (those that exist)
 *   Gatherv, Scatterv  linear: the root and each member of the other group, all posted at once
 *   Allgatherv remote_gather_local_bcast: a linear gatherv to the low group's first member, one
 *              to the other's, then each first member broadcasts the other group's blocks
 *   Reduce_scatter(_block)  remote_reduce_local_scatter: a local_reduce_remote_send to the low
 *              group's first member and one to the other's, then each scatters in its group
 *              (linearly; binomially for Reduce_scatter_block)
 * The groups' own steps are MPIR's intra-communicator algorithms; MPIR's barrier is node-aware
 * when a group's members share nodes.
 * The non-blocking ones are MPICH's MPIR_I<coll>_inter_sched_* schedules (the table's choice, the
 * same as MPIR_I<coll>_inter_sched_auto), whose steps inside a group are the hand-written
 * MPIR_I<coll>_intra_sched_auto: on a group whose members share nodes Ibcast and Ireduce take the
 * "smp" schedules (the messages of the compositions), otherwise MPIR's non-blocking thresholds;
 * Igather and Iscatter inside a group are binomial, Ibarrier recursive doubling (the
 * dissemination pattern) on any placement:
 *   Ibarrier   bcast, as Barrier with those group barriers
 *   Ibcast     remote_send_local_bcast (MPIR_Ibcast_inter_sched_flat): the receiving group's
 *              broadcast is rooted at the index the root has in its own group, as MPICH 4.0.2
 *              passes it on
 *   Ireduce    local_reduce_remote_send, as Reduce
 *   Iallreduce remote_reduce_local_bcast: an inter reduce from the other group to the low group's
 *              first member, then one from the low group to the other's, then each first member
 *              broadcasts in its group (the bytes of Allreduce's reduce_exchange_bcast)
 *   Igather    short (the leaf group's blocks together below 2048 bytes): a gather in the leaf
 *              group, its first member sends them all to the root; long otherwise: the root
 *              posts a receive from every member of the other group at once
 *   Iscatter   remote_send_local_scatter (below 2048 bytes, as Scatter's); linear otherwise: the
 *              root posts a send to every member of the other group at once
 *   Igatherv, Iscatterv  linear, as the blocking ones (empty blocks skipped)
 *   Iallgather local_gather_remote_bcast, as Allgather
 *   Iallgatherv  remote_gather_local_bcast: both linear gathervs posted together, then each first
 *              member broadcasts the other group's blocks in its group
 *   Ialltoall(v, w)  pairwise_exchange, as Alltoall (the v and w forms skip empty blocks)
 *   Ireduce_scatter(_block)  remote_reduce_local_scatterv: the two inter reduces of Iallreduce,
 *              then each first member sends every other member its block at once
 *              (Ireduce_scatter) or scatters the blocks binomially (Ireduce_scatter_block)
 * FC__CA_AUTO for a kind without an inter-communicator expansion. */
unsigned fc__coll_select_inter(unsigned kind, uint32_t a, uint32_t b, uint32_t root, uint64_t n,
                               const fc__coll_settings *s);

/* 1 when alg is one of the algorithms fc__coll_select_inter can give kind (what a
 * MPIR_CVAR_<COLL>_INTER_ALGORITHM may force), else 0. */
int fc__coll_inter_has(unsigned kind, unsigned alg);

/* The instance size n of fc__coll_expand that one member's record gives (bytes it sends, bytes2 it
 * receives); the members' records may differ (a root's and a leaf's), so callers take the largest. */
uint64_t fc__coll_size(unsigned kind, uint64_t bytes, uint64_t bytes2, uint32_t p);

/* ---- neighbourhood collectives (neighbor.c) ----------------------------------------------------
 * MPICH 4.0.2 runs every neighbourhood collective linearly (MPIR's "sched_linear", which the
 * blocking forms call and wait on): each member posts a send of its block to each out-neighbour in
 * order, then a receive from each in-neighbour, and waits once. Neighbor_alltoall posts its
 * receives in reverse order, so that on a periodic dimension of size 1 or 2, where one rank is
 * both neighbours, the blocks land in the right slots; its v and w forms post them in order (and
 * so swap the two blocks there: the reversal reached them in a later MPICH). MPI_PROC_NULL
 * neighbours move nothing. */

/* 1 for the blocking and non-blocking neighbourhood collectives, else 0. */
int fc__coll_is_neighbor(unsigned kind);

/* Member me's part of a neighbourhood collective of kind, sending own bytes in all (the record's
 * bytes, spread evenly over the out-neighbour positions unless lay->to gives them), with
 * lay->nbrs (required: FC_EUNSUPPORTED without it) and lay->received. Returns 0 or the sink's
 * error. */
int fc__coll_expand_neighbor(unsigned kind, uint32_t me, uint64_t own, const fc__coll_layout *lay,
                             const fc__coll_sink *sink);

/* The neighbours of rank r in communicator comm (members mem[0 .. p), world ranks) as member
 * indices, in a new *out the caller frees (one allocation); *out NULL when the trace has no
 * topology for comm. Returns 0 or FC_ENOMEM. */
struct fc_comm;
/* The members (world ranks) of inter-communicator cm as the expansion numbers them
 * (fc__coll_layout.inter): its low group, then the other. MPICH's ch4 device makes the low group
 * the one whose first member has the lower process id (MPIDI_Intercomm_exchange_map), the world
 * rank for the processes of one MPI_COMM_WORLD. Writes local_size + remote_size ranks to out (the
 * caller's); returns the low group's size. */
uint32_t fc__coll_inter_order(const struct fc_comm *cm, uint32_t *out);

/* 1 when a call of kind on an inter-communicator has an expansion (constructors have none), else 0. */
int fc__coll_inter_expands(unsigned kind);

struct fc_rank;
int fc__coll_nbrs_of(const struct fc_rank *r, uint64_t comm, const uint32_t *mem, uint32_t p,
                     fc__coll_nbrs **out);

/* ---- reductions with operations of MPI_Op_create (noncommute.c) -------------------------------
 * MPICH 4.0.2 selects by the operation too (coll_selection.json, the ch4 device's table):
 *   Allreduce  an operation of the user's: recursive doubling at any size (MPIR); a
 *              non-commutative one also turns the ch4 composition off (its "beta": MPIR on all)
 *   Reduce     an operation of the user's: binomial at any size; a non-commutative one turns the
 *              composition off ("gamma"), and its binomial tree is rooted at member 0, which then
 *              sends the result to the root when that is another member
 *   Reduce_scatter(_block)  a non-commutative operation: "noncommutative" (recursive halving in
 *              the other order: partners at distance 1, 2, 4 ..., halves of what is left) when the
 *              size is a power of two and the blocks are equal; recursive doubling otherwise
 *              (on a size that is not a power of two, the members whose partner does not exist
 *              get the data from a member of their subtree that has it, by recursive halving
 *              inside the subtree, as MPICH forwards it; blocks taken as equal)
 *   The non-blocking forms follow the same rules. An algorithm the run forces stands. */

/* The algorithm lay->op (FC_EVF_USER_OP, FC_EVF_NONCOMMUTATIVE) makes MPICH take for kind on p
 * members with size n, or FC__CA_AUTO where the operation changes nothing. */
unsigned fc__coll_select_op(unsigned kind, uint32_t p, uint64_t n, const fc__coll_layout *lay);

/* Member me's part of a reduction whose operation is not commutative, where its messages differ
 * from a commutative one's (the rooted binomial Reduce, the Reduce_scatter algorithms above):
 * 0 or the sink's error; 1 elsewhere, where the commutative expansion stands. */
int fc__coll_expand_noncommutative(unsigned kind, unsigned alg, uint32_t p, uint32_t me, uint32_t root, uint64_t n,
                                   const fc__coll_sink *sink);

#endif /* FLOWCUT_ANALYZER_COLLECTIVE_H */
