/* libtrace/internal.h: the contract between the generated MPI wrappers and the tracer runtime.
 *
 * Hot path, per intercepted call: fc__enter (thread-local guard), fc__now, PMPI call, fc__now,
 * a typed record function that fills one fc__rec slot. No lock, no system call, no malloc. */
#ifndef FLOWCUT_LIBTRACE_INTERNAL_H
#define FLOWCUT_LIBTRACE_INTERNAL_H

#include <mpi.h>
#include <stdint.h>
#include <time.h>
#include <flowcut/format.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define FC__HIDDEN __attribute__((visibility("hidden")))
#define FC__TLS __attribute__((tls_model("initial-exec")))
#define FC__LIKELY(x) __builtin_expect(!!(x), 1)
#define FC__UNLIKELY(x) __builtin_expect(!!(x), 0)

/* One event in the rank's memory buffer. Never written to disk as is: the writer encodes it
 * (event.h) when a chunk is full. Times are raw ticks of the event clock (see fc__now). */
typedef struct fc__rec {
    uint64_t t0, t1;
    uint64_t bytes, bytes2;
    uint64_t obj;
    int32_t peer, tag;
    uint32_t comm, site;
    uint16_t kind, flags;
    uint32_t reserved;
} fc__rec;

#define FC__SITE_CACHE 256 /* per-thread direct-mapped call-site cache, a power of two */

/* Per-thread state. Created on a thread's first intercepted call; owned by the runtime. */
typedef struct fc__thread {
    fc__rec *cur, *end; /* free slots of the current chunk: [cur, end) */
    int busy;           /* reentrancy guard: set while inside a wrapper */
    uint32_t number;    /* thread number written in EVENTS blocks */
    void *rt;           /* runtime-private data */
    struct {
        uintptr_t key; /* return address (depth 1) or hash of the frames (depth > 1); 0: empty */
        uint32_t id;
    } sc[FC__SITE_CACHE]; /* call-site cache, filled by fc__site (callsite.c) */
    void *deep;           /* unwound call-site cache (callsite.c), allocated by fc__site_thread */
    fc__rec *run;         /* the first record of the run of polls being folded (poll.c), in the
                           * current chunk; NULL when none (reset with every new chunk) */
} fc__thread;

/* Tracing state of the process. */
enum { FC__OFF = 0, FC__ON = 1, FC__INERT = 2 };
FC__HIDDEN extern volatile int fc__state;
FC__HIDDEN extern __thread fc__thread *fc__self FC__TLS;
/* 1 when the event clock is the TSC, 0 when it is clock_gettime(CLOCK_MONOTONIC). */
FC__HIDDEN extern int fc__use_tsc;
/* Call-site depth from FLOWCUT_CALLSITE_DEPTH: 0 (none), 1 (default) or more. */
FC__HIDDEN extern int fc__depth;
/* FLOWCUT_REQUEST_TIMES: 1 (default) to time each request MPI_Waitall completes (waitall.c), 0 for
 * the call's exit time alone. Set before tracing starts, read-only afterwards. */
FC__HIDDEN extern int fc__req_times;
/* FLOWCUT_FOLD_POLLS: 1 (default) folds runs of polls that found nothing (poll.c), 0 records each
 * call. Set before tracing starts, read-only afterwards. */
FC__HIDDEN extern int fc__fold_polls;

/* Starts tracing on this thread (and in the process, lazily, when MPI is already initialised)
 * and returns its state, or NULL when this thread must not record (MPI not initialised,
 * tracing disabled after an error, or a process that is not an MPI rank). */
FC__HIDDEN fc__thread *fc__thread_start(void);
/* Called when the current chunk is full: hands it to the writer and gives the thread a new one.
 * Always leaves at least one free slot (dropping events and marking the trace partial if it
 * must), so callers need no error path. */
FC__HIDDEN void fc__chunk_full(fc__thread *t);

static inline __attribute__((always_inline)) fc__thread *fc__enter(void)
{
    fc__thread *t = fc__self;
    if (FC__UNLIKELY(t == NULL)) {
        if (fc__state == FC__INERT)
            return NULL;
        t = fc__thread_start();
        if (t == NULL)
            return NULL;
    }
    if (t->busy)
        return NULL;
    t->busy = 1;
    return t;
}

static inline void fc__leave(fc__thread *t)
{
    t->busy = 0;
}

/* The event clock: ticks, converted to nanoseconds by the writer. */
static inline uint64_t fc__now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (FC__LIKELY(fc__use_tsc))
        return __rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Returns the next free record slot of the thread. The memory is not cleared: the caller sets
 * every field. */
static inline fc__rec *fc__slot(fc__thread *t)
{
    if (FC__UNLIKELY(t->cur == t->end))
        fc__chunk_full(t);
    fc__rec *r = t->cur++;
    return r;
}

/* The comm_id of a communicator (format.h, COMMS block), defining it on first sight. */
FC__HIDDEN uint32_t fc__comm_lookup(MPI_Comm comm);
/* The same, with MPI_COMM_WORLD (comm_id 0, the commonest) answered inline: a record function
 * that calls nothing in the common case saves no registers. */
static inline uint32_t fc__comm(MPI_Comm comm)
{
    return comm == MPI_COMM_WORLD ? 0 : fc__comm_lookup(comm);
}
/* Records that newcomm was just created (collectively) from parent by the calling wrapper;
 * returns its comm_id, or UINT32_MAX for MPI_COMM_NULL. */
FC__HIDDEN uint32_t fc__comm_created(MPI_Comm newcomm);
/* Forgets a communicator about to be freed, so that MPI may reuse its handle. */
FC__HIDDEN void fc__comm_freed(MPI_Comm comm);
/* This rank's in- and out-degree in comm's virtual topology (the neighbourhood collectives'
 * counts); returns 0, or -1 (both 0) when comm has no topology the tracer could read. */
FC__HIDDEN int fc__comm_degrees(MPI_Comm comm, int *indeg, int *outdeg);

/* The call-site id of the call that entered the wrapper whose frame address is fp (0 when call
 * sites are off). fp is __builtin_frame_address(0) of the exported MPI entry point, which that
 * builtin forces to keep a frame record: fp[0] is the caller's saved frame pointer, fp[1] the
 * return address into the caller, fp + 2 the caller's stack pointer at the call. Deduplicated
 * per rank. */
FC__HIDDEN uint32_t fc__site(fc__thread *t, void *fp);
/* fc__site at a depth above 1. */
FC__HIDDEN uint32_t fc__site_deep(fc__thread *t, void *fp);

/* The return address into the application stored in the wrapper's frame record. */
static inline uintptr_t fc__fp_ra(void *fp)
{
    return ((const uintptr_t *)fp)[1];
}

/* Slot of return address a in the depth-1 cache: its low byte with the next one folded in, so
 * that the call sites of one function (a few bytes to a few KiB apart) take different slots. */
static inline unsigned fc__site_slot(uintptr_t a)
{
    return (unsigned)(a ^ (a >> 8)) & (FC__SITE_CACHE - 1);
}

/* fc__site with the depth-1 cache hit inlined into the wrapper: the common case (a call site seen
 * before) costs a load and a compare instead of a call. The cache only ever holds return
 * addresses outside MPI, so a hit needs no range check. */
static inline __attribute__((always_inline)) uint32_t fc__site_fast(fc__thread *t, void *fp)
{
    if (fc__depth == 1) {
        uintptr_t ra = fc__fp_ra(fp);
        unsigned c = fc__site_slot(ra);
        if (FC__LIKELY(t->sc[c].key == ra))
            return t->sc[c].id;
    } else if (fc__depth > 1) {
        return fc__site_deep(t, fp);
    }
    return fc__depth == 0 ? 0 : fc__site(t, fp);
}

/* Bytes of count elements of datatype dt (derived datatypes included; 0 on error). */
FC__HIDDEN uint64_t fc__bytes_lookup(MPI_Datatype dt, int64_t count);
/* The same, with MPICH's builtin datatypes answered inline: their handles carry their size (kind
 * bits 01, size in bits 8-15; test-runtime-bytes checks every predefined type against
 * MPI_Type_size). */
static inline uint64_t fc__bytes(MPI_Datatype dt, int64_t count)
{
    uint32_t h = (uint32_t)dt;
    if (FC__LIKELY((h >> 30) == 1))
        return count > 0 ? (uint64_t)count * ((h >> 8) & 0xff) : 0;
    return fc__bytes_lookup(dt, count);
}

/* Maps MPI's special ranks to FC_PEER_* and leaves others as they are. */
static inline int32_t fc__peer(int rank)
{
    if (rank >= 0)
        return rank;
    if (rank == MPI_ANY_SOURCE)
        return FC_PEER_ANY;
    if (rank == MPI_PROC_NULL)
        return FC_PEER_NULL;
    if (rank == MPI_ROOT)
        return FC_PEER_ROOT;
    return FC_PEER_NONE;
}

/* Lifecycle hooks called by the MPI_Init*, MPI_Finalize and MPI_Abort wrappers (C and Fortran).
 * fc__init_after runs after a successful PMPI_Init*: it names the rank, opens the trace file and
 * measures the initial clock offsets (collective over MPI_COMM_WORLD). fc__finalize_before runs
 * before PMPI_Finalize: final clock offsets (collective), then flush and close. */
FC__HIDDEN void fc__init_after(int mode, int provided);
FC__HIDDEN void fc__finalize_before(void);
FC__HIDDEN void fc__abort_before(void);

/* Prints one warning line for this rank (at most once per rank for each distinct cause) and
 * records it in the trace. Never exits. */
FC__HIDDEN void fc__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* FLOWCUT_LIBTRACE_INTERNAL_H */
