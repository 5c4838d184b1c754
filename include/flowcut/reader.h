/* flowcut/reader.h: the public API that reads a flowcut trace (format.h) rank by rank and chunk by
 * chunk, and the derived services every analysis needs (clock alignment, peer mapping, request ids,
 * a time-ordered merge of all ranks, call-site symbols).
 *
 * Conventions (error.h): fallible functions return 0 (or a count where stated) or a negative FC_E*
 * code; after a failure, fc_errmsg() gives one line naming the file and byte offset, e.g.
 * "trace/rank-000003.fct: offset 81234: block crc mismatch". Handles are opaque and come in
 * open/close pairs; closing NULL is a no-op. Nothing here prints, exits or aborts. A handle may be
 * used by one thread at a time; distinct handles are independent.
 *
 * Memory: opening a trace loads every rank's definitions (RANK, COMMS, SITES, MODULES, CLOCK, WARN,
 * END) and an index of its EVENTS blocks; events are streamed, one inflated block per thread of
 * each rank being read. */
#ifndef FLOWCUT_READER_H
#define FLOWCUT_READER_H

#include <stddef.h>
#include <stdint.h>
#include <flowcut/error.h>
#include <flowcut/event.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- definitions, as stored in the blocks of format.h (shared with writer.h) ---------------- */

/* A loaded module (MODULES block). */
typedef struct fc_module {
    uint64_t id;          /* per rank, from 0 */
    uint64_t base, size;  /* load address and mapped bytes */
    const char *path;     /* file name on the traced host */
    const char *build_id; /* hex, "" when unknown */
} fc_module;

/* One frame of a call site: an ELF virtual address inside a module. */
typedef struct fc_frame {
    uint64_t module; /* module id */
    uint64_t offset; /* return address minus one, relative to the module (see format.h) */
} fc_frame;

/* A call site (SITES block). frames[0] is the code that called MPI. */
typedef struct fc_site {
    uint64_t id; /* per rank, from 1 */
    uint32_t depth;
    const fc_frame *frames;
} fc_site;

/* A communicator (COMMS block). Members are world ranks in communicator rank order. */
typedef struct fc_comm {
    uint64_t id;    /* per rank: 0 MPI_COMM_WORLD, 1 MPI_COMM_SELF, then 2, 3 ... */
    uint64_t flags; /* FC_COMMF_* */
    uint32_t local_size, remote_size;
    const uint32_t *local, *remote; /* remote is NULL (size 0) for intra-communicators */
    int64_t ordinal;
} fc_comm;

/* A clock measurement against rank 0 (CLOCK block). */
typedef struct fc_clock {
    uint32_t phase;    /* FC_CLOCK_INIT or FC_CLOCK_FINALIZE */
    uint64_t local_ns; /* this rank's event clock when measured */
    int64_t offset_ns; /* add to a local time to get rank 0's clock */
    uint64_t uncertainty_ns, samples, min_rtt_ns;
} fc_clock;

/* The footer (END block). */
typedef struct fc_end {
    uint64_t events, flags, reason, end_ns, dropped, warnings;
} fc_end;

/* Which RANK fields a file carried: bit (1 << FC_RK_*). */
#define FC_RANK_HAS(info, key) (((info)->present >> (key)) & 1u)

/* The rank description: the file header's fields and the RANK block's. Strings are "" when absent. */
typedef struct fc_rank_info {
    uint32_t major, minor;  /* format version of the file */
    uint64_t present;       /* bit 1 << FC_RK_* for each RANK field found */
    uint32_t rank, size;    /* world rank and size (RANK block, else file header) */
    const char *host, *node;
    int32_t core, numa;     /* -1 when unknown */
    const char *mpi_version, *program;
    uint32_t argc;
    const char *const *argv;
    uint64_t start_ns;      /* wall clock at start of tracing */
    uint32_t pid;
    int32_t thread_level;   /* -1 when unknown */
    uint32_t callsite_depth;
    const char *clock_source, *affinity;
    uint32_t init_mode;     /* FC_INIT_*, 0 when unknown */
    uint32_t slot;          /* the launcher's slot when the ranks were renumbered (present bit
                               FC_RK_SLOT), else equal to rank */
} fc_rank_info;

/* ---- a trace and its ranks --------------------------------------------------------------------- */

typedef struct fc_trace fc_trace;

/* Everything known about one rank file, owned by the trace (valid until fc_trace_close). */
typedef struct fc_rank {
    const char *file;        /* path of the rank file */
    fc_rank_info info;
    size_t ncomms, nsites, nmodules, nclocks, nwarnings;
    const fc_comm *comms;    /* in file order */
    const fc_site *sites;
    const fc_module *modules;
    const fc_clock *clocks;
    const char *const *warnings; /* WARN texts */
    int has_end;             /* 1 when an END block was read */
    fc_end end;              /* zero when has_end is 0 */
    int partial;             /* 1 when the file lacks END, ends in an incomplete block, or END says so */
    const char *partial_why; /* "" or why the rank is partial, e.g. "no END block (file cut at offset 812)" */
    uint64_t events;         /* records announced by the EVENTS blocks */
    uint64_t event_blocks;
    uint32_t threads;        /* 1 + the highest thread number seen */
    int has_events;
    uint64_t first_t0;       /* earliest event t0 (local clock), when has_events */
    const char *coll_env;    /* FC_RK_COLL_ENV: NAME=VALUE entries each ended by a NUL, or NULL */
    size_t coll_env_len;     /* its bytes */
} fc_rank;

/* Opens a trace directory (every rank-*.fct in it) or a single rank file, and reads every rank's
 * definitions and block index, checking magic, byte order, version, block crc and sequence. A file
 * cut short is accepted and marked partial (in a directory, even one cut inside its file header: it
 * becomes a partial rank without events, its rank taken from the file name). In a directory one
 * damaged rank file costs only that rank: a file damaged after its header is read up to the
 * damage and marked partial, and a file that cannot be read at all is skipped (fc_trace_skipped);
 * the open fails only when no rank file can be read. On success *out owns the trace
 * (fc_trace_close); on failure *out is NULL and the code is FC_ENOENT, FC_ENOTTRACE, FC_EVERSION,
 * FC_EENDIAN, FC_ETRUNCATED (cut inside the file header), FC_ECORRUPT, FC_EIO or FC_ENOMEM. */
int fc_trace_open(const char *path, fc_trace **out);
/* Frees the trace and everything it owns. Cursors and symbol tables must be closed first. */
void fc_trace_close(fc_trace *t);

/* Rank files in the trace, sorted by world rank. */
size_t fc_trace_nranks(const fc_trace *t);
/* The i-th rank file (0 <= i < fc_trace_nranks), or NULL. Owned by the trace. */
const fc_rank *fc_trace_rank(const fc_trace *t, size_t i);
/* The index of the rank file of world rank r, or -1 when the trace has none. */
long fc_trace_find(const fc_trace *t, uint32_t world_rank);
/* World size from the headers (and the names of the rank files), and ranks of that world missing
 * from the directory or skipped as unreadable. */
uint32_t fc_trace_world_size(const fc_trace *t);
uint32_t fc_trace_missing(const fc_trace *t);
/* A rank file of a trace directory that could not be read at all: not a regular file (a symbolic
 * link is never followed inside a directory), not a trace, of a newer major version or another
 * byte order, damaged in its file header, unreadable, or a second file of a rank already read.
 * The trace opens without it; its rank counts as missing. */
typedef struct fc_skipped {
    uint32_t rank;    /* world rank its name gives (rank-NNNNNN.fct) */
    const char *file; /* path of the file */
    const char *why;  /* the reader's message, naming the file and offset */
    int code;         /* the FC_E* code of that message */
} fc_skipped;
/* Rank files skipped, and the i-th of them (NULL past the end), in file name order. Owned by the
 * trace. A rank file damaged after its header is not skipped: it is read up to the damage and
 * marked partial. */
size_t fc_trace_nskipped(const fc_trace *t);
const fc_skipped *fc_trace_skipped(const fc_trace *t, size_t i);
/* 1 when any rank is partial or missing. */
int fc_trace_partial(const fc_trace *t);
/* The time origin of the dump: rank 0's first event on rank 0's clock (ns), or the earliest
 * aligned event of any rank when rank 0 has no events or is absent; 0 for a trace without events. */
int64_t fc_trace_origin(const fc_trace *t);

/* Definition lookups by id; NULL when this rank has no such definition. Owned by the trace. */
const fc_comm *fc_rank_comm(const fc_rank *r, uint64_t id);
const fc_site *fc_rank_site(const fc_rank *r, uint64_t id);
const fc_module *fc_rank_module(const fc_rank *r, uint64_t id);

/* Clock alignment: maps a time of this rank's event clock to rank 0's clock. The offset is
 * interpolated linearly between the INIT and FINALIZE measurements (and extrapolated on the same
 * line outside them); INIT alone gives a constant offset; no measurement gives the identity. When a
 * phase was measured more than once, the measurement with the least uncertainty is used. */
int64_t fc_rank_align(const fc_rank *r, uint64_t local_ns);
/* Largest clock uncertainty (ns) of the measurements used by fc_rank_align, 0 when none. */
uint64_t fc_rank_clock_uncertainty(const fc_rank *r);

/* A peer outside its communicator's definition (unknown comm, rank out of range). */
#define FC_PEER_UNMAPPED INT64_MIN
/* Maps a communicator-local peer to a world rank through comm's definition (the remote group of an
 * inter-communicator, the local group otherwise). FC_PEER_* values come back unchanged. Communicators
 * 0 and 1, when this rank does not define them, map as MPI_COMM_WORLD and MPI_COMM_SELF. */
int64_t fc_rank_peer_world(const fc_rank *r, uint64_t comm, int64_t peer);

/* ---- events ----------------------------------------------------------------------------------- */

/* An event with what the reader derives for it. */
typedef struct fc_record {
    fc_event ev;      /* as decoded (local clock, communicator-local peer, raw handle) */
    uint32_t rank;    /* world rank */
    int64_t t0, t1;   /* ev.t0 and ev.t1 aligned to rank 0's clock (ns); for a COMPLETE, both are
                       * when its request was seen complete: its own completion time inside its
                       * call when ev.flags has FC_EVF_OWN_TIME (format 2.1), else its call's exit */
    uint64_t comm;    /* communicator peer is relative to: ev.comm, or for a COMPLETE joined to a
                       * post, the post's communicator */
    int64_t peer;     /* world rank of ev.peer through comm, an FC_PEER_* value, or FC_PEER_UNMAPPED */
    uint64_t req;     /* request id unique within the rank (from 1), 0 when the event has none */
} fc_record;

/* Request ids. Raw handles are reused by MPI, so the reader gives each request a number, in the
 * order the rank's records are read (file order; for several threads, their merge by time). Each
 * handle has a queue of outstanding requests, oldest first (a queue because MPICH, for one, gives
 * the same handle to several sends that completed at once; they complete in posting order):
 *   - a post (MPI_Isend ... MPI_Irecv, MPI_Imrecv, nonblocking collectives) and a persistent init
 *     (MPI_*_init) take a fresh id and join the end of their handle's queue;
 *   - MPI_Start, START, MPI_Wait, MPI_Test and MPI_Cancel get the id of the oldest request;
 *   - COMPLETE gets the oldest request's id and, unless that request is persistent, removes it (so
 *     the handle's next post gets a new id); a persistent request keeps its id over any number of
 *     Start/complete cycles until MPI_Request_free;
 *   - MPI_Request_free gets the oldest request's id and removes it;
 *   - a handle with no outstanding request (posted before tracing started) takes a fresh id, which
 *     is queued when the event leaves the request alive (Start, Wait, Test, Cancel);
 *   - obj 0 and COMPLETE records flagged FC_EVF_NULL have no request (req 0). */

typedef struct fc_cursor fc_cursor;
/* Opens a cursor over the events of rank file i in time order (per thread, file order; threads
 * merged by t0). Skips records of unknown kinds. On success *out is owned by the caller
 * (fc_cursor_close). */
int fc_cursor_open(fc_trace *t, size_t i, fc_cursor **out);
/* Reads the next record: returns 1 and fills rec, 0 at the end, or a negative FC_E* code (the
 * cursor then stays failed). Errors: FC_EIO, FC_ECORRUPT, FC_EZLIB, FC_ENOMEM. */
int fc_cursor_next(fc_cursor *c, fc_record *rec);
void fc_cursor_close(fc_cursor *c);

typedef struct fc_merge fc_merge;
/* Opens a k-way merge of the events of several ranks by aligned t0 (ties: lower world rank, then
 * read order). ranks lists rank-file indices (n of them); ranks NULL means every rank file.
 * On success *out is owned by the caller (fc_merge_close). */
int fc_merge_open(fc_trace *t, const size_t *ranks, size_t n, fc_merge **out);
/* As fc_cursor_next, over the merge. */
int fc_merge_next(fc_merge *m, fc_record *rec);
void fc_merge_close(fc_merge *m);

/* ---- describing events ------------------------------------------------------------------------- */

/* Fields that apply to an event (what `flowcut dump` prints): FC_FIELD_* bits. */
enum {
    FC_FIELD_PEER = 0x001,
    FC_FIELD_TAG = 0x002,
    FC_FIELD_COMM = 0x004,
    FC_FIELD_BYTES = 0x008,
    FC_FIELD_BYTES2 = 0x010,
    FC_FIELD_REQ = 0x020,
    FC_FIELD_NEWCOMM = 0x040,
    FC_FIELD_DUR = 0x080,
};
/* The FC_FIELD_* bits that apply to an event of this kind with these FC_EVF_* flags. */
unsigned fc_event_fields(unsigned kind, uint64_t flags);
/* Writes the `flowcut dump` line of rec (no newline) into buf, truncating to len - 1 bytes plus
 * NUL, and returns the length the whole line needs (as snprintf). Times are seconds since origin
 * (fc_trace_origin); dur is t1 - t0 on the rank's own clock; site is the text of the call site, or
 * NULL to leave it out. The shape:
 *   time=S rank=R thread=T kind=NAME [peer=W|any|null|root] [tag=N|any] [comm=C] [bytes=N]
 *   [bytes2=N] [req=ID] [newcomm=C|null] [dur=S] [flags=any_source,any_tag,found,cancelled,error,
 *   status,null,own_time] [site=TEXT]
 * where a field appears when it applies to the kind (fc_event_fields), peer also needs a peer
 * (not FC_PEER_NONE; "unknown" when it does not map), req a request, flags a non-zero value. */
size_t fc_record_format(const fc_record *rec, int64_t origin, const char *site, char *buf, size_t len);
/* The FC_EVENT_KINDS number of a kind name ("MPI_Send", "COMPLETE"), or -1. */
int fc_event_kind_from_name(const char *name);

/* ---- call-site symbols ------------------------------------------------------------------------- */

typedef struct fc_symbols fc_symbols;
#define FC_SYM_NO_ADDR2LINE 0x1u /* do not run addr2line: every site prints as module+0xoffset */
/* Resolves every frame of every call site of every rank to "function@file:line" by running one
 * `addr2line -f -C -e MODULE` per distinct module with all its offsets; sites it cannot resolve
 * (addr2line or the module missing, no line information) become "module+0xoffset" (module's base
 * name). A module whose path is "=TEXT" holds frames that are already symbolic (the calling
 * contexts of an imported OTF2 trace): each is named TEXT. Unknown flag bits give FC_EINVAL. On
 * success *out is owned by the caller (fc_symbols_free). */
int fc_symbols_create(const fc_trace *t, unsigned flags, fc_symbols **out);
/* The text of site id of rank file i (its frame 0, the MPI call's caller), or NULL for site 0 or
 * an unknown id. Owned by syms. */
const char *fc_symbols_site(const fc_symbols *syms, size_t i, uint64_t site);
/* The whole call chain of site id of rank file i, innermost frame first, frames joined by "<"
 * ("?" for a frame that cannot be named), the same as fc_symbols_site for a site of one frame;
 * NULL for site 0 or an unknown id. Owned by syms. */
const char *fc_symbols_chain(const fc_symbols *syms, size_t i, uint64_t site);
void fc_symbols_free(fc_symbols *syms);

/* ---- errors ---------------------------------------------------------------------------------- */

/* The message of the last failure of a flowcut library call in this thread ("" when none): one
 * line naming the file and byte offset when there is one. Valid until the next failing call. */
const char *fc_errmsg(void);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCUT_READER_H */
