/* analyzer/otf2/common.h: the OTF2 exchange of libflowcut-analyzer (export of a trace as an OTF2 archive
 * that Vampir and Scalasca read, and import of an OTF2 archive, Score-P's included, as a trace).
 * Internal to libflowcut-analyzer; the commands reach it through fc__otf2_export and through
 * fc_trace_open, which hands OTF2 anchor files to fc__otf2_input (trace/input.h). */
#ifndef FLOWCUT_ANALYZER_OTF2_H
#define FLOWCUT_ANALYZER_OTF2_H

#include <stddef.h>
#include <stdint.h>
#include <otf2/otf2.h>
#include <flowcut/reader.h>

/* What an export wrote, for the command's summary. */
typedef struct fc__otf2_stats {
    uint64_t locations; /* OTF2 locations (one per rank and recorded thread) */
    uint64_t events;    /* OTF2 event records written */
    uint64_t calls;     /* flowcut calls exported (each one Enter/Leave pair) */
    uint64_t contexts;  /* calling-context definitions (call-site frames) */
    uint64_t comms;     /* communicator definitions */
} fc__otf2_stats;

#define FC_OTF2_NO_SYMBOLS 0x1u /* do not run addr2line: call-site frames are named module+0xoffset */
/* Write each call of a folded run of polls (format.h, POLLS), the calls between its first and last
 * spread evenly between them; by default the run is its first and last calls. */
#define FC_OTF2_EXPAND_POLLS 0x2u

/* Without FC_OTF2_EXPAND_POLLS, a folded run of n polls is written as its first call and its last,
 * and the last call's Enter (CallingContextEnter) carries the attribute of this name, a UINT64: the
 * calls of the run that call stands for, itself and the n - 2 between, so n - 1. A call without it
 * stands for itself. */
#define FC_OTF2_POLLS_ATTR "flowcut::polls"
#define FC_OTF2_POLLS_ATTR_DESC                                                                        \
    "calls this call stands for: the last of a run of polls that found nothing, the calls between "   \
    "the run's first and it folded into it (flowcut export --expand-polls writes each)"

/* The Enter (CallingContextEnter) of a persistent collective's init (MPI_Allreduce_init, say)
 * carries the attribute of this name, a UINT64: the id of the persistent request it creates, which
 * the NonBlockingCollectiveRequest of each MPI_Start or MPI_Startall of it and the
 * NonBlockingCollectiveComplete that ends that instance name. OTF2's records carry no request at
 * the init. */
#define FC_OTF2_REQUEST_ATTR "flowcut::request"
#define FC_OTF2_REQUEST_ATTR_DESC                                                                      \
    "the persistent request this MPI_*_init creates: each MPI_Start of it is one instance of the "   \
    "collective, from its NonBlockingCollectiveRequest to its NonBlockingCollectiveComplete"
/* The Enter of a v or w collective whose ranks get different byte counts (MPI_Alltoallv, its
 * non-blocking and persistent forms, MPI_Gatherv at the root ...) carries the attribute of this
 * name, a STRING: the tracer's COUNTS runs (format.h), "first:n:to:from" each, separated by
 * spaces, in rank order. OTF2's collective records hold the totals only. */
#define FC_OTF2_COUNTS_ATTR "flowcut::counts"
#define FC_OTF2_COUNTS_ATTR_DESC                                                                       \
    "bytes per peer of this v or w collective: runs first:n:to:from, ranks first .. first+n-1 of "  \
    "the group each getting `to` bytes from this rank and sending it `from`"

/* The attribute definitions of an export, by OTF2 reference. */
enum { FC__OTF2_ATTR_POLLS, FC__OTF2_ATTR_REQUEST, FC__OTF2_ATTR_COUNTS, FC__OTF2_NATTRS };

/* Writes trace t as the OTF2 archive OUTDIR/traces.otf2 (with OUTDIR/traces.def and
 * OUTDIR/traces/), creating outdir when it does not exist. Refuses (FC_EEXISTS) to overwrite an
 * archive already there. flags: FC_OTF2_* (unknown bits give FC_EINVAL). stats may be NULL.
 * Returns 0 or a negative FC_E* code with fc_errmsg() set; a failed export may leave a partial
 * archive behind. */
int fc__otf2_export(fc_trace *t, const char *outdir, unsigned flags, fc__otf2_stats *stats);

/* 1 when path names an OTF2 anchor file: a regular file whose name ends in ".otf2" or whose first
 * bytes are OTF2's anchor magic; 0 otherwise (directories, flowcut rank files, missing files). */
int fc__otf2_is_anchor(const char *path);

/* Opens the OTF2 archive of anchor file `anchor` as a flowcut trace: reads its definitions and
 * events through OTF2's reader (which applies the clock offsets and the local-to-global mappings),
 * converts them into flowcut rank files in a private directory made with mkdtemp under $TMPDIR
 * (default /tmp), and opens that. The directory is removed by fc_trace_close (a hook
 * of trace/input.h) or at once when the open fails. Same contract as fc_trace_open. The
 * conversion runs in a forked child while fc__otf2_isolate is set (the default), so that a crash
 * of OTF2's reader on a damaged archive is an FC_ECORRUPT error naming the anchor file, not the
 * end of the calling process. */
int fc__otf2_open(const char *anchor, fc_trace **out);
/* 1 (the default): fc__otf2_open converts in a child process; 0: in the calling process (the fuzz
 * target sets 0, so that libFuzzer sees the library's paths and its crashes). */
extern int fc__otf2_isolate;

/* The OTF2 input back-end (trace/input.h): fc__otf2_is_anchor and fc__otf2_open. */
struct fc__input;
extern const struct fc__input fc__otf2_input;

/* ---- shared by the exporter and the importer ---------------------------------------------- */

/* OTF2 reports errors through a process-wide callback that prints by default; the library must
 * not print. fc__otf2_quiet() installs a callback that keeps the first message of the calling
 * thread instead (until fc__otf2_loud()); fc__otf2_message() returns it ("" when none). */
void fc__otf2_quiet(void);
void fc__otf2_loud(void);
const char *fc__otf2_message(void);

/* The region role Score-P gives an MPI function of this kind (FC_EV_*). */
OTF2_RegionRole fc__otf2_role(unsigned kind);
/* The OTF2 collective operation of a collective or communicator kind, or -1 for other kinds. */
int fc__otf2_collective(unsigned kind);
/* 1 for the non-blocking collectives (MPI_Ibarrier ... MPI_Iexscan, MPI_Ineighbor_*). */
int fc__otf2_icoll(unsigned kind);
/* 1 for the persistent collectives (MPI_Barrier_init ... MPI_Exscan_init, MPI_Neighbor_*_init). */
int fc__otf2_persistent(unsigned kind);

/* ---- internals of the export: otf2/defs.c builds and writes the definitions, otf2/export.c the
 * events; shared by those two files only. ---------------------------------------------------- */
/* Interning: a string (or a key written as a string) -> a dense id. */
typedef struct fc__intern {
    char **s;
    size_t n, cap;
    uint32_t *slot; /* open addressing: index + 1, 0 = empty */
    size_t scap;
} fc__intern;

/* Stores the id of s in *id, adding s when new. Returns 1 when it was added, 0 when known, or
 * FC_ENOMEM. */
int fc__intern_id(fc__intern *t, const char *s, uint32_t *id);
void fc__intern_free(fc__intern *t);

/* A communicator of the whole trace: the same (members, ordinal) on every rank is one OTF2 comm. */
typedef struct fc__xcomm {
    int inter;
    uint32_t nlocal, nremote;
    const uint32_t *local, *remote; /* owned by the trace */
    uint32_t group, group_b;        /* OTF2 groups (group_b: the other side of an inter-communicator) */
} fc__xcomm;

/* A cartesian topology of an OTF2 comm (CartTopology, its CartDimensions and each member's
 * CartCoordinate), as the trace's neighbour lists give it (fc__otf2_build_comms). */
typedef struct fc__xtopo {
    uint32_t comm;       /* OTF2 comm */
    uint32_t ndims;
    uint32_t *size;      /* per dimension (owned) */
    uint8_t *periodic;   /* per dimension (owned) */
    uint32_t first_dim;  /* OTF2 CartDimension of dimension 0; the others follow */
} fc__xtopo;

/* A calling-context node: (region, source location, parent) and its depth (a root is 1). */
typedef struct fc__xcc {
    uint32_t region, scl, parent, depth;
} fc__xcc;

/* A request of the rank being written, by request id: what its completion must say. */
enum { FC__RQ_NONE, FC__RQ_SEND, FC__RQ_RECV, FC__RQ_ICOLL, FC__RQ_PSEND, FC__RQ_PRECV, FC__RQ_PCOLL };
typedef struct fc__xreq {
    uint8_t type;
    int op;
    uint32_t comm;
    int64_t peer, tag;
    uint64_t bytes, bytes2;
    uint32_t root;
} fc__xreq;

/* A call waiting for its sub-records (COMPLETE, START) before its Leave is written. */
typedef struct fc__pending {
    int has;
    fc_record call;
    fc_record *subs;
    size_t nsubs, cap;
} fc__pending;

typedef struct fc__xthread {
    OTF2_EvtWriter *w;
    uint64_t last;     /* last timestamp written: OTF2 wants them non-decreasing per location */
    int started, finalized;
    uint32_t cc_prev;  /* the calling context after the last CallingContext event (its unwind base) */
    fc__pending p;
} fc__xthread;

/* Everything one export builds, shared by otf2/defs.c and otf2/export.c. */
typedef struct fc__exporter {
    fc_trace *t;
    OTF2_Archive *ar;
    fc__intern strings, fnames, scls, cckeys;
    uint32_t *scl_file, *scl_line; /* per source-code location */
    size_t nscl_cap;
    fc__xcc *cc;
    size_t ncc, cccap;
    fc__xcomm *comms;
    size_t ncomms, ccap;
    uint32_t **comm_of;  /* per rank file: comm id -> OTF2 comm, UINT32_MAX when unknown */
    size_t *ncomm_of;
    fc__xtopo *topos;    /* the cartesian topologies, by OTF2 comm */
    size_t ntopos, tcap;
    uint32_t **cc_of;    /* per rank file: site id -> calling context, UINT32_MAX when none */
    size_t *ncc_of;
    uint32_t world;
    fc__intern nodes;        /* node names, in order of first appearance by rank */
    uint32_t *rank_node; /* per world rank: node index, UINT32_MAX without a rank file */
    uint32_t *rank_threads; /* per world rank: locations written */
    uint64_t **rank_events; /* per world rank and thread: events written */
    /* Timestamps are written on rank 0's clock (aligned), shifted by -base so that none is
     * negative; wmin and wmax are the extremes of what was written, for the clock properties. */
    int64_t base;
    int have_time;
    uint64_t wmin, wmax;
    int64_t fin_end;     /* aligned end of tracing of the rank being written, INT64_MIN when unknown */
    int expand_polls;    /* FC_OTF2_EXPAND_POLLS was given */
    /* The attribute FC_OTF2_POLLS_ATTR carried by the Enter of a folded run's last call when the
     * calls between are not written; folded counts the calls written with it (the attribute is
     * defined only then). */
    OTF2_AttributeList *attrs;
    uint64_t folded;
    unsigned attrs_used; /* bit FC__OTF2_ATTR_* set when an event carries that attribute */
    char *counts;        /* the FC_OTF2_COUNTS_ATTR text being built */
    size_t counts_cap;
    fc__xreq *req;
    size_t nreq;
    fc__otf2_stats st;
    /* OTF2 wants definitions numbered 0, 1, 2 ... in order: the MPI functions' regions come first,
     * in kind order, then the call-site frames' functions. */
    uint32_t region_of[FC_EV_MAX_]; /* UINT32_MAX: no region (sub-records, unknown kinds) */
    uint32_t nmpi;
} fc__exporter;

/* The OTF2 location of a thread of a rank: as Score-P, the thread in the high half, so that
 * thread 0 of rank r is location r. */
static inline uint64_t fc__otf2_location(uint32_t rank, uint32_t thread)
{
    return ((uint64_t)thread << 32) | rank;
}
/* 1 when the kind is an MPI function, which gets a region (not a sub-record). */
int fc__otf2_has_region(unsigned kind);
/* The id of string s, interned by fc__otf2_build_* or fc__otf2_write_defs. */
uint32_t fc__otf2_str(fc__exporter *x, const char *s);
/* Build the OTF2 communicators of the trace and the calling contexts of its call sites. Return 0
 * or FC_ENOMEM. */
int fc__otf2_build_comms(fc__exporter *x);
int fc__otf2_build_sites(fc__exporter *x, unsigned flags);
/* The calling context of an MPI call: the region of kind `kind` under the calling context of its
 * call site (parent, OTF2_UNDEFINED_CALLING_CONTEXT when it has none), added when new. Returns 0
 * or FC_ENOMEM. */
int fc__otf2_call_context(fc__exporter *x, unsigned kind, uint32_t parent, uint32_t *out);
/* The unwind distance of entering calling context cc after calling context prev (OTF2's
 * CallingContext definition): the nodes newly entered, plus the one that made progress. */
uint32_t fc__otf2_unwind(const fc__exporter *x, uint32_t prev, uint32_t cc);
/* Writes the global definitions, once every event is written (locations need their counts).
 * Returns 0 or a negative FC_E* code with fc_errmsg() set. */
int fc__otf2_write_defs(fc__exporter *x);

/* A failed OTF2 writer call: FC_EIO with OTF2's message. */
#define FC__OTF2_TRY(call)                                                                         \
    do {                                                                                           \
        OTF2_ErrorCode e_ = (call);                                                                \
        if (e_ != OTF2_SUCCESS)                                                                    \
            return fc__err(FC_EIO, "OTF2 writer: %s",                                              \
                           fc__otf2_message()[0] ? fc__otf2_message() : OTF2_Error_GetDescription(e_)); \
    } while (0)

/* ---- internals of the import: otf2/import.c reads the definitions and writes the rank files,
 * otf2/import-events.c turns each location's events into flowcut records. ---------------------- */

/* A growable table indexed by an OTF2 reference (references are small and dense in practice; a
 * reference above MAX_REF is taken for a damaged archive). */
#define MAX_REF (1u << 24)

typedef struct fc__stnode {
    uint32_t name, cls, parent;
} fc__stnode;
typedef struct fc__lgroup {
    int defined;
    uint32_t type, parent;
    int64_t rank; /* -1 until known */
    uint32_t nthreads;
} fc__lgroup;
typedef struct fc__loc {
    uint64_t id;
    uint32_t group, thread;
} fc__loc;
typedef struct fc__oregion {
    uint32_t name, canon, paradigm;
} fc__oregion;
typedef struct fc__ogroup {
    int defined;
    uint32_t type, n;
    uint64_t *m;
} fc__ogroup;
typedef struct fc__comm {
    int defined;
    uint32_t group;
    int64_t native; /* flowcut comm id, -1: none (inter-communicators) */
} fc__comm;
typedef struct fc__occ {
    uint32_t region, scl, parent;
} fc__occ;
typedef struct fc__ocartdim {
    int defined;
    uint32_t size;
    int periodic;
} fc__ocartdim;
/* A CartTopology and the CartCoordinates of its comm's ranks (coord[rank * ndims + d], have[rank]
 * when given). */
typedef struct fc__ocart {
    int defined;
    uint32_t comm, ndims;
    uint32_t *dims;          /* CartDimension references (owned) */
    uint32_t *coord;         /* owned, room for ncoord ranks */
    uint8_t *have;
    size_t ncoord;
} fc__ocart;
typedef struct fc__oscl {
    uint32_t file, line;
} fc__oscl;

/* What the import knows of the archive, by OTF2 reference. */
typedef struct fc__importer {
    const char *anchor;
    uint64_t resolution;
    char **strings;
    size_t nstrings;
    fc__stnode *nodes;
    size_t nnodes;
    fc__lgroup *groups;
    size_t ngroups;
    fc__loc *locs;
    size_t nlocs, loccap;
    fc__oregion *regions;
    size_t nregions;
    fc__ogroup *ogroups;
    size_t nogroups;
    fc__comm *comms;
    size_t ncomms;
    fc__occ *ccs;
    size_t ncc;
    fc__ocartdim *cdims;
    size_t ncdims;
    fc__ocart *carts;
    size_t ncarts;
    fc__oscl *scls;
    size_t nscls;
    uint8_t *cc_used; /* per calling context: 1 when a call of the rank being written has it as site */
    /* The region stacks that calls of the rank being written were made in ("r0/r1/...", outermost
     * first): call sites of plain Enter/Leave nesting, numbered after the calling contexts'. */
    fc__intern stacks;
    uint32_t world;
    int nomem;
    /* The references + 1 of the attributes FC_OTF2_REQUEST_ATTR and FC_OTF2_COUNTS_ATTR, 0 when the
     * archive does not define them (archives of other writers). */
    uint32_t attr_request1, attr_counts1;
    char *coll_env;      /* FC__OTF2_COLL_ENV's entries, each ended by a NUL, or NULL */
    char *hosts;         /* FC__OTF2_HOSTS, its lines ended by NULs, or NULL */
    size_t hosts_len;
    size_t coll_env_len;
} fc__importer;

/* The archive property that carries the run's collective settings (FC_RK_COLL_ENV), NAME=VALUE
 * entries one a line. */
#define FC__OTF2_COLL_ENV "FLOWCUT::COLL_ENV"
/* The host of each world rank, one a line in rank order, when some rank's host is not its node
 * (FLOWCUT_NODE set): MPICH groups ranks by host, and the analysis of collectives follows it. */
#define FC__OTF2_HOSTS "FLOWCUT::HOSTS"

/* The flowcut call-site id of the calls made from calling context cc (cc + 1). */
#define FC__OTF2_SITE_OF(cc) ((uint64_t)(cc) + 1)

/* The text of string ref, "" when undefined. */
const char *fc__otf2_string_of(const fc__importer *im, uint32_t ref);
/* The event callbacks of the import (NULL when out of memory; free with
 * OTF2_EvtReaderCallbacks_Delete). */
OTF2_EvtReaderCallbacks *fc__otf2_event_callbacks(void);
/* Reads the events of location l and writes them to w as EVENTS blocks of its thread; *end_ns
 * grows to its last time. Returns 0 or a negative FC_E* code with fc_errmsg() set. */
struct fc_writer;
int fc__otf2_convert_location(fc__importer *im, OTF2_Reader *rd, OTF2_EvtReaderCallbacks *cb, const fc__loc *l,
                              struct fc_writer *w, uint64_t *end_ns);

/* An OTF2 reader failure: sets rc to code with a message naming the anchor file and goes to out. */
#define FC__OTF2_FAIL(code, ...)                                                                   \
    do {                                                                                           \
        char what_[200];                                                                           \
        snprintf(what_, sizeof what_, __VA_ARGS__);                                                \
        rc = fc__err(code, "%s: %s: %s", im->anchor, what_,                                        \
                     fc__otf2_message()[0] ? fc__otf2_message() : "OTF2 reader error");            \
        goto out;                                                                                  \
    } while (0)

#endif /* FLOWCUT_ANALYZER_OTF2_H */
