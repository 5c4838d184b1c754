/* libtrace/runtime.h: declarations shared by the runtime's own files (never by the wrappers).
 *
 * Ownership and threads: everything here is created by fc__init_after (or the lazy start) and
 * lives until the process exits; nothing is freed, because a thread may still touch its chunk
 * after MPI_Finalize and a signal handler may read any of it at any moment. */
#ifndef FLOWCUT_LIBTRACE_RUNTIME_H
#define FLOWCUT_LIBTRACE_RUNTIME_H

#include "internal.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>
#include <flowcut/event.h>

/* ---- clock.c ---------------------------------------------------------------------------------
 * One fixed linear map from event-clock ticks to nanoseconds of CLOCK_MONOTONIC:
 * ns = ns0 + (tick - tick0) * mult / 2^32. */
typedef struct fc__clock_conv {
    uint64_t tick0, ns0;
    uint64_t mult; /* nanoseconds per tick, scaled by 2^32 */
} fc__clock_conv;
FC__HIDDEN extern fc__clock_conv fc__conv;

static inline uint64_t fc__ticks_ns(const fc__clock_conv *c, uint64_t t)
{
    /* Rounded to the nearest nanosecond, so that exact rates give exact times. */
    const unsigned __int128 half = (unsigned __int128)1 << 31;
    if (t >= c->tick0)
        return c->ns0 + (uint64_t)(((unsigned __int128)(t - c->tick0) * c->mult + half) >> 32);
    return c->ns0 - (uint64_t)(((unsigned __int128)(c->tick0 - t) * c->mult + half) >> 32);
}
/* Builds the map through two (tick, ns) points; tick1 must exceed tick0. */
FC__HIDDEN void fc__clock_conv_from(fc__clock_conv *c, uint64_t tick0, uint64_t ns0, uint64_t tick1,
                                    uint64_t ns1);
/* 1 when the CPU says its TSC runs at a constant rate in every power state (CPUID 0x80000007). */
FC__HIDDEN int fc__tsc_invariant(void);
/* Chooses the event clock (want_tsc: 0 forces clock_gettime), sets fc__use_tsc and calibrates
 * fc__conv. Takes a few milliseconds with the TSC. Returns the clock's name for the RANK block. */
FC__HIDDEN const char *fc__clock_setup(int want_tsc);
FC__HIDDEN uint64_t fc__mono_ns(void);
/* The event clock now, in nanoseconds. */
static inline uint64_t fc__now_ns(void)
{
    return fc__ticks_ns(&fc__conv, fc__now());
}

/* ---- runtime.c: chunks, threads, options ---------------------------------------------------- */
enum { FC__CH_FREE, FC__CH_FILLING, FC__CH_QUEUED, FC__CH_WRITING, FC__CH_WRITTEN };
typedef struct fc__chunk {
    fc__rec *recs;
    uint32_t count;    /* records, set when the chunk is queued */
    uint32_t thread;   /* thread number of the records */
    uint64_t fill_seq; /* order in which chunks were queued: the file order of one thread's chunks */
    _Atomic int state; /* FC__CH_*; read by the signal handler without a lock */
} fc__chunk;

#define FC__MAX_THREADS 256
#define FC__MAX_DEPTH 32

typedef struct fc__tslot {
    fc__thread t;      /* first, so that an fc__thread * is an fc__tslot * */
    fc__chunk *ch;     /* the chunk being filled, NULL when none */
    _Atomic int live;  /* 1 while the slot belongs to a running thread */
    fc__rec dummy[1];  /* where records go once tracing has stopped */
    uint64_t wait0, wait1; /* when the thread last waited for a free chunk (ticks), and until */
    int wait_pending;  /* that wait is still to be recorded in ch, whose last slot it keeps */
    int wait_mid;      /* it came halfway through a call's records (runtime.c, put_wait) */
    int comm_handle;   /* last communicator looked up and its comm_id, valid while comm_gen */
    uint32_t comm_id;  /* equals the global generation */
    unsigned comm_gen;
} fc__tslot;

typedef struct fc__runtime {
    int rank, size, init_mode, provided;
    pthread_mutex_t lock; /* the pool, the queue and the thread slots */
    pthread_cond_t cv_free, cv_full;
    fc__chunk *chunks;
    unsigned nchunks; /* chunks in the pool: those of FLOWCUT_BUFFER, then any added (grow_pool) */
    unsigned qcap;    /* room of chunks, freel and queue: nchunks can grow up to it */
    uint32_t chunk_cap; /* records per chunk */
    unsigned *freel, nfree;
    unsigned *queue, qhead, qlen;
    uint64_t fill_seq;
    fc__tslot *slots;
    uint32_t next_thread;
    pthread_t writer;
    int writer_running, writer_stop;
    _Atomic(fc__chunk *) writer_cur; /* chunk the writer holds, for the signal handler */
    /* FLOWCUT_WRITE_AT: percent of the chunks in use (filling or queued) from which the writer
     * writes; 0: each full chunk at once. */
    unsigned write_at;
    int stats;              /* FLOWCUT_STATS: print the writer's CPU time at the end */
    uint64_t writer_cpu_ns; /* the writer thread's CPU time, set when it ends */
    _Atomic uint64_t events, dropped;
    int open; /* a trace file is open */
    int sync_ready;
    MPI_Comm sync_comm;
    const char *clock_name;
    uint64_t start_ns; /* wall clock at start */
} fc__runtime;
FC__HIDDEN extern fc__runtime fc__rt;

/* Parses a FLOWCUT_BUFFER value: digits with an optional K, M or G suffix (powers of 1024).
 * Returns 0 and stores the bytes, or FC_EINVAL. */
FC__HIDDEN int fc__parse_size(const char *s, uint64_t *bytes);
/* Parses FLOWCUT_WRITE_AT: a percentage 0..100, with or without a trailing %. Returns 0 or
 * FC_EINVAL. */
FC__HIDDEN int fc__parse_percent(const char *s, unsigned *pct);
/* Parses a setting that is on or off (FLOWCUT_REQUEST_TIMES): "1" or "0". Returns 0 or FC_EINVAL. */
FC__HIDDEN int fc__parse_switch(const char *s, int *on);
/* Parses FLOWCUT_ZLIB_LEVEL: one digit 0..9. Returns 0 or FC_EINVAL. */
FC__HIDDEN int fc__parse_level(const char *s, int *level);
/* Parses FLOWCUT_CALLSITE_DEPTH: 0..FC__MAX_DEPTH. Returns 0 or FC_EINVAL. */
FC__HIDDEN int fc__parse_depth(const char *s, int *depth);
/* Splits a buffer budget into chunks: records per chunk and number of chunks (at least 4). When
 * more threads fill chunks at once than the budget holds, the pool grows by one chunk per thread
 * beyond it (runtime.c, grow_pool), up to FC__MAX_THREADS chunks more. */
FC__HIDDEN void fc__pool_geometry(uint64_t bytes, uint32_t *recs_per_chunk, unsigned *nchunks);
/* Puts the wait for a free chunk that slot s made and has not yet recorded (a TRACER_WAIT) among
 * the count records of its chunk, in the slot kept for it; returns the new count. For the writing
 * of a partial chunk on a fatal signal, which queues no chunk. */
FC__HIDDEN uint32_t fc__slot_wait(fc__tslot *s, uint32_t count);

/* ---- writer.c ------------------------------------------------------------------------------- */
/* Opens the rank's file in dir (O_EXCL, never following a symlink) and writes the file header.
 * Returns 0 or a negative errno. */
FC__HIDDEN int fc__file_open(const char *dir, int rank, int size, uint64_t start_ns);
/* Writes one block, compressing the payload with zlib when zlib is set. Safe from any thread.
 * Returns 0, or -1 when the trace is not writable (the cause was already warned about). */
FC__HIDDEN int fc__block_write(uint32_t kind, const void *payload, size_t len, int zlib);
/* Encodes n records of one thread as a raw EVENTS payload in columns (format.h) at out (room for
 * fc__events_bound(n) bytes) and returns its length; codec and scratch (fc__events_scratch(n)
 * bytes) are scratch state. */
FC__HIDDEN size_t fc__encode_chunk(const fc__rec *r, uint32_t n, uint32_t thread, const fc__clock_conv *conv,
                                   fc_event_codec *codec, unsigned char *out, unsigned char *scratch);
static inline size_t fc__events_bound(uint32_t n)
{
    return 30 + FC_EVENT_COLS_DIR + (size_t)n * FC_EVENT_MAX_ENCODED;
}
static inline size_t fc__events_scratch(uint32_t n)
{
    return 2 * (size_t)n * FC_EVENT_COLS_TIME;
}
/* Starts the writer thread; the writer drains fc__rt.queue. Returns 0 or a negative errno. */
FC__HIDDEN int fc__writer_start(void);
/* Asks the writer to write everything queued, waits for it to end. */
FC__HIDDEN void fc__writer_stop(void);
/* Writes the definitions (modules, sites, comms) not yet written. Normal (locked) path. */
FC__HIDDEN void fc__defs_flush(void);
/* Writes the END block and closes the file. */
FC__HIDDEN void fc__file_close(unsigned reason, int partial);
/* Async-signal-safe: stops other writers, writes every buffered record uncompressed, the
 * definitions and END (reason, partial). With quick, when the rescue file holds every chunk, it
 * writes the new definitions only (and none while the writer thread is inside a write) and leaves
 * the records to the rescue file, so that the process dies within microseconds of the signal. */
FC__HIDDEN void fc__emergency_flush(unsigned reason, int quick);
/* zlib level for EVENTS blocks (FLOWCUT_ZLIB_LEVEL overrides, for measurements). */
FC__HIDDEN extern int fc__zlevel;
FC__HIDDEN extern _Atomic unsigned fc__warnings;
/* The warning about a trace that cannot be written (a full disk, say), one format for every place
 * that finds it, so that a rank reports it once (fc__warn reports each format once). */
FC__HIDDEN extern const char fc__warn_write[];

/* Growable byte buffer for building payloads outside the hot path and outside signal handlers. */
typedef struct fc__buf {
    unsigned char *p;
    size_t len, cap;
    int failed; /* set when memory ran out; the payload is then incomplete */
    int fixed;  /* never grow (signal handler): overflow sets failed */
} fc__buf;
FC__HIDDEN void fc__buf_put(fc__buf *b, const void *data, size_t n);
FC__HIDDEN void fc__buf_uv(fc__buf *b, uint64_t v);
FC__HIDDEN void fc__buf_str(fc__buf *b, const char *s, size_t n);

/* ---- rescue.c ------------------------------------------------------------------------------
 * The chunk pool as a shared mapping of the rank's rescue file (format.h, RESCUE). */
/* Creates and maps the rescue file of rank in dir for nchunks chunks of chunk_cap records, and
 * returns where chunk 0's records start; NULL (errno set) when it cannot, the pool then being
 * ordinary memory and the calls below no-ops. Call after fc__clock_setup. */
FC__HIDDEN fc__rec *fc__rescue_map(const char *dir, int rank, unsigned nchunks, uint32_t chunk_cap);
/* Chunk `chunk`, whose records are recs, was taken by thread number `thread` for filling
 * (fc__rt.lock held). */
FC__HIDDEN void fc__rescue_taken(unsigned chunk, uint32_t thread, fc__rec *recs);
/* Chunk `chunk` enters FC_RSC_* state (count: its records, for FC_RSC_QUEUED). */
FC__HIDDEN void fc__rescue_state(unsigned chunk, unsigned state, uint32_t count);
/* Chunk `chunk` is about to be written as the EVENTS block of sequence number seq, of count
 * records. Async-signal-safe. */
FC__HIDDEN void fc__rescue_block(unsigned chunk, uint32_t seq, uint32_t count);
/* Whether the rescue file holds the records of every one of the pool's first nchunks chunks (none
 * grown past the mapping). Async-signal-safe. */
FC__HIDDEN int fc__rescue_holds(unsigned nchunks);
/* Removes the rescue file once the rank file is closed with END. Async-signal-safe. */
FC__HIDDEN void fc__rescue_remove(void);

/* ---- sync.c --------------------------------------------------------------------------------- */
typedef struct fc__clock_meas {
    uint64_t local_ns, uncertainty_ns, samples, min_rtt_ns;
    int64_t offset_ns;
} fc__clock_meas;
/* Collective over fc__rt.sync_comm: measures this rank's offset to rank 0. */
FC__HIDDEN void fc__clock_sync(fc__clock_meas *m);
/* Writes a CLOCK block of one measurement. */
FC__HIDDEN void fc__clock_write(unsigned phase, const fc__clock_meas *m);

/* ---- callsite.c ----------------------------------------------------------------------------- */
/* Finds the address ranges of libflowcut and the MPI libraries, prepares the tables. */
FC__HIDDEN int fc__sites_init(int depth);
/* Interns a frame list; returns its site id (from 1) or 0 when the table is full. */
FC__HIDDEN uint32_t fc__site_intern(const uintptr_t *frames, unsigned depth);
/* Stops skipping the frames of the module that holds addr: for the unit tests, which link the
 * runtime into the program whose call sites they check. Not thread-safe; call before any site. */
FC__HIDDEN void fc__sites_unignore(uintptr_t addr);
/* Gives thread t its unwound-site cache (call sites deeper than 1, or behind MPI's own bindings);
 * allocates once per thread slot, at thread start, never on the hot path. Without it (no memory,
 * or not x86-64) fc__site unwinds on every such call. */
FC__HIDDEN void fc__site_thread(fc__thread *t);
/* Counts since start, over all threads: stack unwinds (runs of libunwind), those of them that
 * found a chain the rank already knew (a cache that works keeps this at 0 in a one-threaded rank
 * whose chains fit in it), and the distinct chains (site ids). */
FC__HIDDEN void fc__site_stats(uint64_t *unwinds, uint64_t *repeated, uint32_t *chains);
/* The frames of site id (n of them, return addresses, innermost first), or NULL and n = 0. */
FC__HIDDEN const uintptr_t *fc__site_frames(uint32_t id, unsigned *n);
/* 1 when addr lies in libflowcut or an MPI library. */
FC__HIDDEN int fc__addr_ignored(uintptr_t addr);
/* Appends MODULES and SITES payloads for sites not yet written to mods/sites; sig: signal
 * context (no dl_iterate_phdr, no malloc: b must have been preallocated). Returns the site count
 * now covered; the caller commits it with fc__sites_mark_written once both blocks are on disk. */
FC__HIDDEN uint32_t fc__sites_encode(fc__buf *mods, fc__buf *sites, int sig);
FC__HIDDEN void fc__sites_mark_written(uint32_t nsites);

/* ---- comm.c --------------------------------------------------------------------------------- */
FC__HIDDEN void fc__comms_init(int rank, int size);
/* Appends a COMMS payload of the comms not yet written; returns the count to commit. */
FC__HIDDEN uint32_t fc__comms_encode(fc__buf *b);
FC__HIDDEN void fc__comms_mark_written(uint32_t n);

/* ---- signals.c ------------------------------------------------------------------------------ */
FC__HIDDEN void fc__signals_install(void);

/* ---- rankinfo.c ----------------------------------------------------------------------------- */
/* Builds the RANK block payload. */
FC__HIDDEN void fc__rank_describe(fc__buf *b);
/* Chooses the trace directory (collective when coll is set) into dir (size n). */
FC__HIDDEN void fc__trace_dir(char *dir, size_t n, int coll);

#endif /* FLOWCUT_LIBTRACE_RUNTIME_H */
