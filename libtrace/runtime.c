/* libtrace/runtime.c: the tracer's lifecycle (start, lazy start, finalize, abort, exit), its
 * options, the chunk pool and the per-thread state. */
#include "runtime.h"
#include "renumber.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <flowcut/error.h>

volatile int fc__state = FC__OFF;
__thread fc__thread *fc__self FC__TLS;
int fc__depth = 1;
int fc__req_times = 1;
int fc__fold_polls = 1;
fc__runtime fc__rt = {.rank = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t thread_key;
static int have_key;

/* The constructor is deliberately absent: LD_PRELOAD puts this library into mpiexec, its proxies
 * and every shell they start, and those must see no cost and no side effect. Everything starts
 * from the first MPI wrapper that runs. */

/* ---- options -------------------------------------------------------------------------------- */

int fc__parse_size(const char *s, uint64_t *bytes)
{
    char *end;
    if (s == NULL || *s < '0' || *s > '9')
        return FC_EINVAL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return FC_EINVAL;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if ((*end == 'i' || *end == 'I') && shift) /* accept "MiB"-style spellings too */
        end++;
    if ((*end == 'b' || *end == 'B') && shift)
        end++;
    if (*end != '\0' || v == 0 || v > (UINT64_MAX >> shift))
        return FC_EINVAL;
    *bytes = (uint64_t)v << shift;
    return 0;
}

int fc__parse_depth(const char *s, int *depth)
{
    char *end;
    if (s == NULL || *s < '0' || *s > '9')
        return FC_EINVAL;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v < 0 || v > FC__MAX_DEPTH)
        return FC_EINVAL;
    *depth = (int)v;
    return 0;
}

int fc__parse_switch(const char *s, int *on)
{
    if (s == NULL || (s[0] != '0' && s[0] != '1') || s[1] != '\0')
        return FC_EINVAL;
    *on = s[0] == '1';
    return 0;
}

int fc__parse_percent(const char *s, unsigned *pct)
{
    char *end;
    if (s == NULL || *s < '0' || *s > '9')
        return FC_EINVAL;
    long v = strtol(s, &end, 10);
    if (*end == '%')
        end++;
    if (*end != '\0' || v < 0 || v > 100)
        return FC_EINVAL;
    *pct = (unsigned)v;
    return 0;
}

int fc__parse_level(const char *s, int *level)
{
    if (s == NULL || s[0] < '0' || s[0] > '9' || s[1] != '\0')
        return FC_EINVAL;
    *level = s[0] - '0';
    return 0;
}

void fc__pool_geometry(uint64_t bytes, uint32_t *recs_per_chunk, unsigned *nchunks)
{
    /* 512 KiB chunks (8192 records): the writer's cost per chunk (deflate's tables, the block,
     * its system calls) is spread over more events, and a longer stream compresses a little
     * better; but a chunk is what a SIGKILL can lose, so no larger. Smaller when the budget is
     * small, so that at least four chunks exist (one filling, one writing, two queued). */
    uint64_t recs = bytes / sizeof(fc__rec);
    uint64_t per = recs / 4 < 8192 ? recs / 4 : 8192;
    if (per < 16)
        per = 16;
    uint64_t n = recs / per;
    if (n < 4)
        n = 4;
    if (n > (1u << 20))
        n = 1u << 20;
    *recs_per_chunk = (uint32_t)per;
    *nchunks = (unsigned)n;
}

/* ---- warnings ------------------------------------------------------------------------------- */

#define MAX_CAUSES 32
#define MAX_PENDING 8
static const char *warned[MAX_CAUSES];
static unsigned nwarned;
static char pending[MAX_PENDING][256];
static unsigned npending;
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;

void fc__warn(const char *fmt, ...)
{
    char msg[512];
    pthread_mutex_lock(&warn_lock);
    /* The format string names the cause: each cause is reported once per rank. */
    for (unsigned i = 0; i < nwarned; i++)
        if (warned[i] == fmt) {
            pthread_mutex_unlock(&warn_lock);
            return;
        }
    if (nwarned < MAX_CAUSES)
        warned[nwarned++] = fmt;
    int rank = fc__rt.rank;
    int h = rank >= 0 ? snprintf(msg, sizeof msg, "flowcut: rank %d: ", rank)
                      : snprintf(msg, sizeof msg, "flowcut: rank ?: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + h, sizeof msg - (size_t)h - 1, fmt, ap);
    va_end(ap);
    size_t n = strlen(msg);
    msg[n] = '\n';
    ssize_t w = write(2, msg, n + 1); /* one write: lines of different ranks do not interleave */
    (void)w;
    int open = fc__rt.open;
    if (!open && npending < MAX_PENDING)
        snprintf(pending[npending++], sizeof pending[0], "%.*s", (int)(n - (size_t)h), msg + h);
    pthread_mutex_unlock(&warn_lock);
    if (open)
        fc__block_write(FC_BLK_WARN, msg + h, n - (size_t)h, 0);
}

static void write_pending_warnings(void)
{
    pthread_mutex_lock(&warn_lock);
    unsigned n = npending;
    npending = 0;
    pthread_mutex_unlock(&warn_lock);
    for (unsigned i = 0; i < n; i++)
        fc__block_write(FC_BLK_WARN, pending[i], strlen(pending[i]), 0);
}

/* ---- chunk pool (fc__rt.lock held) ---------------------------------------------------------- */

/* The wait the thread of slot s made for a free chunk, as a TRACER_WAIT record in ch, whose last
 * slot was kept for it. Placed by position, not by time (the clocks of two cores may differ by
 * more than a short wait): a wait when the thread started (wait_mid 0) comes first; one for a new
 * chunk halfway through a call's records, after that call's records: the first of ch and its
 * sub-records. Its times are kept between its neighbours', so that entry times never decrease. */
static uint32_t put_wait(fc__tslot *s, fc__chunk *ch, uint32_t count)
{
    if (!s->wait_pending || count >= fc__rt.chunk_cap)
        return count;
    s->wait_pending = 0;
    fc__rec *r = ch->recs;
    uint32_t i = 0;
    uint64_t lo = 0;
    if (s->wait_mid && count > 0) {
        lo = r[0].t1;
        for (i = 1; i < count && (r[i].kind == FC_EV_COMPLETE || r[i].kind == FC_EV_START); i++)
            lo = r[i].t1 > lo ? r[i].t1 : lo;
    }
    uint64_t hi = i < count ? r[i].t0 : UINT64_MAX;
    uint64_t w0 = s->wait0 < lo ? lo : s->wait0 > hi ? hi : s->wait0;
    uint64_t w1 = s->wait1 < w0 ? w0 : s->wait1 > hi ? hi : s->wait1;
    memmove(&r[i + 1], &r[i], (size_t)(count - i) * sizeof *r);
    r[i] = (fc__rec){.t0 = w0, .t1 = w1, .kind = FC_EV_TRACER_WAIT, .peer = FC_PEER_NONE};
    return count + 1;
}

uint32_t fc__slot_wait(fc__tslot *s, uint32_t count)
{
    return s->ch != NULL ? put_wait(s, s->ch, count) : count;
}

static void queue_chunk(fc__tslot *s, fc__chunk *ch, uint32_t count, uint32_t thread)
{
    count = put_wait(s, ch, count);
    unsigned idx = (unsigned)(ch - fc__rt.chunks);
    if (count == 0) {
        fc__rescue_state(idx, FC_RSC_FREE, 0);
        atomic_store(&ch->state, FC__CH_FREE);
        fc__rt.freel[fc__rt.nfree++] = (unsigned)(ch - fc__rt.chunks);
        pthread_cond_signal(&fc__rt.cv_free);
        return;
    }
    ch->count = count;
    ch->thread = thread;
    ch->fill_seq = fc__rt.fill_seq++;
    fc__rescue_state(idx, FC_RSC_QUEUED, count);
    atomic_store(&ch->state, FC__CH_QUEUED);
    fc__rt.queue[(fc__rt.qhead + fc__rt.qlen++) % fc__rt.qcap] = (unsigned)(ch - fc__rt.chunks);
    pthread_cond_signal(&fc__rt.cv_full);
}

/* Adds one chunk to the pool, for a thread that found every chunk held by other threads filling
 * theirs: no chunk would ever come back to it, and a thread must not drop its events. Returns 0,
 * or -1 when the pool is at its largest or memory ran out. */
static int grow_pool(void)
{
    if (fc__rt.nchunks >= fc__rt.qcap)
        return -1;
    fc__rec *mem = calloc(fc__rt.chunk_cap, sizeof *mem);
    if (mem == NULL)
        return -1;
    fc__chunk *ch = &fc__rt.chunks[fc__rt.nchunks];
    ch->recs = mem;
    atomic_store(&ch->state, FC__CH_FREE);
    fc__rt.freel[fc__rt.nfree++] = fc__rt.nchunks;
    fc__rt.nchunks++; /* after the chunk is whole: the signal handler reads up to nchunks */
    return 0;
}

/* A free chunk for the thread of slot s, waiting for the writer when none is free (the wait is
 * noted in s, to be recorded; mid: the thread is halfway through recording a call); NULL only when
 * no chunk can come (the writer has stopped, or the pool cannot grow). */
static fc__chunk *take_chunk(fc__tslot *s, int mid)
{
    uint64_t from = 0;
    while (fc__rt.nfree == 0) {
        if (!fc__rt.writer_running)
            return NULL;
        if (fc__rt.qlen == 0 && atomic_load(&fc__rt.writer_cur) == NULL) {
            if (grow_pool() < 0)
                return NULL;
            continue;
        }
        if (from == 0)
            from = fc__now();
        /* A writer that waits for the pool to fill (FLOWCUT_WRITE_AT) must learn it is full. */
        pthread_cond_signal(&fc__rt.cv_full);
        pthread_cond_wait(&fc__rt.cv_free, &fc__rt.lock);
    }
    unsigned idx = fc__rt.freel[--fc__rt.nfree];
    fc__chunk *ch = &fc__rt.chunks[idx];
    fc__rescue_taken(idx, s->t.number, ch->recs);
    atomic_store(&ch->state, FC__CH_FILLING);
    if (from != 0) {
        s->wait0 = from;
        s->wait1 = fc__now();
        s->wait_pending = 1;
        s->wait_mid = mid;
    }
    return ch;
}

static void point_at_dummy(fc__tslot *s)
{
    s->t.cur = s->dummy;
    s->t.end = s->dummy + 1;
    s->t.run = NULL;
}

/* Gives slot s its new chunk ch to fill, keeping the last record slot for the wait s made for it. */
static void fill_from(fc__tslot *s, fc__chunk *ch)
{
    s->t.cur = ch->recs;
    s->t.end = ch->recs + fc__rt.chunk_cap - (s->wait_pending ? 1 : 0);
    s->t.run = NULL;
}

void fc__chunk_full(fc__thread *t)
{
    fc__tslot *s = (fc__tslot *)t;
    if (fc__state != FC__ON) {
        point_at_dummy(s);
        return;
    }
    pthread_mutex_lock(&fc__rt.lock);
    if (s->ch != NULL && t->cur != s->dummy + 1)
        queue_chunk(s, s->ch, (uint32_t)(t->cur - s->ch->recs), t->number);
    else
        atomic_fetch_add(&fc__rt.dropped, 1);
    s->ch = take_chunk(s, 1);
    pthread_mutex_unlock(&fc__rt.lock);
    if (s->ch == NULL) {
        fc__warn("the trace buffer (FLOWCUT_BUFFER) is too small for this many threads; trace partial");
        point_at_dummy(s);
        return;
    }
    fill_from(s, s->ch);
}

/* ---- threads -------------------------------------------------------------------------------- */

static void thread_exit(void *p)
{
    fc__tslot *s = p;
    pthread_mutex_lock(&fc__rt.lock);
    if (s->ch != NULL && fc__state == FC__ON) {
        queue_chunk(s, s->ch, (uint32_t)(s->t.cur - s->ch->recs), s->t.number);
        s->ch = NULL;
    }
    point_at_dummy(s);
    atomic_store(&s->live, 0);
    pthread_mutex_unlock(&fc__rt.lock);
    fc__self = NULL;
}

/* Gives the calling thread a slot and a chunk. */
static fc__thread *attach_thread(void)
{
    fc__tslot *s = NULL;
    pthread_mutex_lock(&fc__rt.lock);
    for (unsigned i = 0; i < FC__MAX_THREADS && s == NULL; i++)
        if (!atomic_load(&fc__rt.slots[i].live) && fc__rt.slots[i].ch == NULL)
            s = &fc__rt.slots[i];
    if (s != NULL) {
        void *deep = s->t.deep; /* a slot's call-site cache outlives its thread: see callsite.c */
        memset(s, 0, sizeof *s);
        s->t.deep = deep;
        s->t.number = fc__rt.next_thread++;
        s->t.rt = s;
        s->comm_handle = (int)MPI_COMM_NULL;
        /* Taken before take_chunk, which may wait for the writer and let go of the lock
         * meanwhile: another thread starting then must not take this slot too. */
        atomic_store(&s->live, 1);
        point_at_dummy(s);
        s->ch = take_chunk(s, 0);
        if (s->ch != NULL) {
            fill_from(s, s->ch);
        } else {
            point_at_dummy(s);
        }
    }
    pthread_mutex_unlock(&fc__rt.lock);
    if (s == NULL) {
        fc__warn("more than %d threads call MPI; the others are not traced; trace partial", FC__MAX_THREADS);
        return NULL;
    }
    if (s->ch == NULL)
        fc__warn("the trace buffer (FLOWCUT_BUFFER) is too small for this many threads; trace partial");
    fc__site_thread(&s->t);
    if (have_key)
        pthread_setspecific(thread_key, s);
    fc__self = &s->t;
    return &s->t;
}

/* ---- start ---------------------------------------------------------------------------------- */

static void at_exit(void);

/* A forked child has no writer thread and must not write into the parent's file: it is not
 * traced (an exec'd program starts afresh anyway). */
static void in_child(void)
{
    /* The buffer is the parent's shared mapping (rescue.c), not mapped in the child: the thread
     * that forked must not record into it. */
    fc__self = NULL;
    fc__state = FC__INERT;
    fc__rt.writer_running = 0;
    fc__rt.open = 0;
}

/* The chunk pool, in the rank's rescue file in dir when it can be made (rescue.c), else in
 * memory only, where a rank killed by SIGKILL loses what it holds. */
static int alloc_pool(const char *dir)
{
    uint64_t bytes = 4u << 20;
    const char *e = getenv("FLOWCUT_BUFFER");
    if (e != NULL && fc__parse_size(e, &bytes) < 0) {
        fc__warn("bad FLOWCUT_BUFFER '%.64s' (want a size like 4M); using 4M", e);
        bytes = 4u << 20;
    }
    fc__pool_geometry(bytes, &fc__rt.chunk_cap, &fc__rt.nchunks);
    unsigned n = fc__rt.nchunks;
    fc__rt.qcap = n + FC__MAX_THREADS;
    fc__rt.chunks = calloc(fc__rt.qcap, sizeof *fc__rt.chunks);
    fc__rt.freel = calloc(fc__rt.qcap, sizeof *fc__rt.freel);
    fc__rt.queue = calloc(fc__rt.qcap, sizeof *fc__rt.queue);
    fc__rt.slots = calloc(FC__MAX_THREADS, sizeof *fc__rt.slots);
    fc__rec *mem = fc__rescue_map(dir, fc__rt.rank, n, fc__rt.chunk_cap);
    if (mem == NULL && (errno == ENOSPC || errno == EDQUOT))
        fc__warn(fc__warn_write, strerror(errno)); /* the disk is full: say it once */
    else if (mem == NULL)
        fc__warn("cannot create the rescue buffer in '%.200s': %s; events buffered in memory only, lost if the "
                 "rank is killed", dir, strerror(errno));
    if (mem == NULL) {
        mem = malloc((size_t)n * fc__rt.chunk_cap * sizeof(fc__rec));
    }
    if (!fc__rt.chunks || !fc__rt.freel || !fc__rt.queue || !fc__rt.slots || !mem)
        return -1;
    /* Touch the memory now so that page faults do not land on the hot path. */
    memset(mem, 0, (size_t)n * fc__rt.chunk_cap * sizeof(fc__rec));
    for (unsigned i = 0; i < n; i++) {
        fc__rt.chunks[i].recs = mem + (size_t)i * fc__rt.chunk_cap;
        fc__rt.freel[n - 1 - i] = i;
    }
    fc__rt.nfree = n;
    pthread_cond_init(&fc__rt.cv_free, NULL);
    pthread_cond_init(&fc__rt.cv_full, NULL);
    return 0;
}

static void read_options(void)
{
    const char *e = getenv("FLOWCUT_CALLSITE_DEPTH");
    fc__depth = 1;
    if (e != NULL && fc__parse_depth(e, &fc__depth) < 0) {
        fc__warn("bad FLOWCUT_CALLSITE_DEPTH '%.64s' (want 0..%d); using 1", e, FC__MAX_DEPTH);
        fc__depth = 1;
    }
    int want_tsc = 1;
    e = getenv("FLOWCUT_CLOCK");
    if (e != NULL && strcmp(e, "monotonic") == 0)
        want_tsc = 0;
    else if (e != NULL && strcmp(e, "tsc") != 0 && *e != '\0')
        fc__warn("bad FLOWCUT_CLOCK '%.64s' (want tsc or monotonic); using the default", e);
    fc__rt.clock_name = fc__clock_setup(want_tsc);
    e = getenv("FLOWCUT_ZLIB_LEVEL");
    fc__zlevel = 1;
    if (e != NULL && fc__parse_level(e, &fc__zlevel) < 0) {
        fc__warn("bad FLOWCUT_ZLIB_LEVEL '%.64s' (want one digit 0..9); using 1", e);
        fc__zlevel = 1;
    }
    e = getenv("FLOWCUT_WRITE_AT");
    fc__rt.write_at = 0;
    if (e != NULL && fc__parse_percent(e, &fc__rt.write_at) < 0) {
        fc__warn("bad FLOWCUT_WRITE_AT '%.64s' (want a percentage 0..100); using 0", e);
        fc__rt.write_at = 0;
    }
    e = getenv("FLOWCUT_STATS");
    fc__rt.stats = e != NULL && e[0] != '\0' && strcmp(e, "0") != 0;
    e = getenv("FLOWCUT_REQUEST_TIMES");
    fc__req_times = 1;
    if (e != NULL && fc__parse_switch(e, &fc__req_times) < 0) {
        fc__warn("bad FLOWCUT_REQUEST_TIMES '%.64s' (want 1 or 0); using 1", e);
        fc__req_times = 1;
    }
    e = getenv("FLOWCUT_FOLD_POLLS");
    fc__fold_polls = 1;
    if (e != NULL && fc__parse_switch(e, &fc__fold_polls) < 0) {
        fc__warn("bad FLOWCUT_FOLD_POLLS '%.64s' (want 1 or 0); using 1", e);
        fc__fold_polls = 1;
    }
}

/* Creates dir and any missing parents, as `mkdir -p` does (FLOWCUT_DIR may name a directory
 * below one that does not exist yet). Every rank may race to create the same components: EEXIST
 * is success. Returns 0, or -1 with errno set. */
static int mkdir_p(const char *dir)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, n + 1);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return -1;
    return 0;
}

/* Everything needed to trace. coll: MPI_Init was seen, so every rank is here at once and the
 * collective steps (private communicator, directory name, clock offsets) can run. The collective
 * steps run on every rank whatever fails locally, so that no rank is left waiting. */
static void start(int mode, int provided, int coll)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    fc__rt.start_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    /* The program's world: renumbered when a rank order is set (renumber.h), so that the trace
     * names each rank as the program knows it. */
    PMPI_Comm_rank(fc__world, &fc__rt.rank);
    PMPI_Comm_size(fc__world, &fc__rt.size);
    fc__rt.init_mode = mode;
    if (provided < 0)
        PMPI_Query_thread(&provided);
    fc__rt.provided = provided;
    read_options();

    char dir[4096];
    fc__clock_meas m = {0};
    if (coll && PMPI_Comm_dup(fc__world, &fc__rt.sync_comm) == MPI_SUCCESS) {
        fc__rt.sync_ready = 1;
        fc__trace_dir(dir, sizeof dir, 1);
        fc__clock_sync(&m);
    } else {
        fc__trace_dir(dir, sizeof dir, 0);
    }

    if (mkdir_p(dir) < 0) {
        fc__warn("cannot create trace directory '%.200s': %s; tracing off", dir, strerror(errno));
        goto off;
    }
    int rc = fc__file_open(dir, fc__rt.rank, fc__rt.size, fc__rt.start_ns);
    if (rc < 0) {
        fc__warn("cannot create trace file in '%.200s': %s; tracing off", dir, strerror(-rc));
        goto off;
    }
    if (alloc_pool(dir) < 0 || fc__sites_init(fc__depth) < 0) {
        fc__warn("out of memory for the trace buffers; tracing off");
        fc__file_close(FC_END_ERROR, 1);
        goto off;
    }
    fc__comms_init(fc__rt.rank, fc__rt.size);
    fc__buf b = {0};
    fc__rank_describe(&b);
    fc__block_write(FC_BLK_RANK, b.p, b.len, 0);
    free(b.p);
    write_pending_warnings();
    if (fc__rt.sync_ready)
        fc__clock_write(FC_CLOCK_INIT, &m);
    if (fc__writer_start() < 0) {
        fc__warn("cannot start the trace writer thread; tracing off");
        fc__file_close(FC_END_ERROR, 1);
        goto off;
    }
    have_key = pthread_key_create(&thread_key, thread_exit) == 0;
    fc__signals_install();
    atexit(at_exit);
    pthread_atfork(NULL, NULL, in_child);
    fc__state = FC__ON;
    attach_thread();
    return;
off:
    fc__state = FC__INERT;
}

/* FLOWCUT_TRACE=0: the library only renumbers ranks (renumber.h) and records nothing. */
static int trace_off(void)
{
    const char *e = getenv("FLOWCUT_TRACE");
    return e != NULL && strcmp(e, "0") == 0;
}

void fc__init_after(int mode, int provided)
{
    pthread_mutex_lock(&start_lock);
    if (fc__state == FC__OFF && trace_off())
        fc__state = FC__INERT;
    if (fc__state == FC__OFF)
        start(mode, provided, 1);
    pthread_mutex_unlock(&start_lock);
}

fc__thread *fc__thread_start(void)
{
    if (fc__state == FC__OFF) {
        int init = 0, fin = 0;
        /* Reached only from an MPI wrapper, so MPI is loaded; before MPI_Init this is the cheap
         * answer "not yet". */
        PMPI_Initialized(&init);
        if (!init)
            return NULL;
        PMPI_Finalized(&fin);
        if (fin)
            return NULL;
        pthread_mutex_lock(&start_lock);
        if (fc__state == FC__OFF) {
            int provided = -1;
            fc__renumber_missed();
            PMPI_Query_thread(&provided);
            if (trace_off())
                fc__state = FC__INERT;
            else
                start(FC_INIT_LAZY, provided, 0);
        }
        pthread_mutex_unlock(&start_lock);
        if (fc__self != NULL)
            return fc__self;
    }
    if (fc__state != FC__ON)
        return NULL;
    return attach_thread();
}

/* ---- stop ----------------------------------------------------------------------------------- */

/* Queues every thread's partial chunk, drains the writer and closes the file. Called with no
 * other thread inside MPI (MPI forbids calls concurrent with MPI_Finalize). */
static void stop(unsigned reason, int partial, const fc__clock_meas *fin)
{
    pthread_mutex_lock(&fc__rt.lock);
    fc__state = FC__INERT;
    for (unsigned i = 0; i < FC__MAX_THREADS; i++) {
        fc__tslot *s = &fc__rt.slots[i];
        if (s->ch != NULL) {
            queue_chunk(s, s->ch, (uint32_t)(s->t.cur - s->ch->recs), s->t.number);
            s->ch = NULL;
        }
        point_at_dummy(s);
    }
    pthread_mutex_unlock(&fc__rt.lock);
    fc__writer_stop();
    if (fc__rt.stats) {
        /* Asked for (FLOWCUT_STATS): what the background writer cost, which the application's
         * own timings do not show when the writer runs on an otherwise idle core. */
        uint64_t ev = atomic_load(&fc__rt.events);
        fprintf(stderr,
                "flowcut: rank %d: %llu events, writer thread %.3f ms CPU, %.1f ns per event\n",
                fc__rt.rank, (unsigned long long)ev, fc__rt.writer_cpu_ns / 1e6,
                ev ? (double)fc__rt.writer_cpu_ns / (double)ev : 0.0);
        uint64_t unwinds, repeated;
        uint32_t chains;
        fc__site_stats(&unwinds, &repeated, &chains);
        fprintf(stderr, "flowcut: rank %d: call sites: %u chains, %llu unwinds, %llu repeated\n", fc__rt.rank,
                chains, (unsigned long long)unwinds, (unsigned long long)repeated);
    }
    fc__defs_flush();
    if (fin != NULL)
        fc__clock_write(FC_CLOCK_FINALIZE, fin);
    if (atomic_load(&fc__rt.dropped))
        partial = 1;
    fc__file_close(reason, partial);
}

void fc__finalize_before(void)
{
    if (fc__state == FC__OFF)
        fc__thread_start(); /* lazy mode: a rank that made no traced call yet */
    pthread_mutex_lock(&start_lock);
    fc__clock_meas m = {0};
    int have = 0;
    /* Every rank calls MPI_Finalize, so a rank that started lazily can still take part in the
     * collective final measurement: the communicator is made here in that case. */
    if (!fc__rt.sync_ready && fc__rt.rank >= 0 &&
        PMPI_Comm_dup(fc__world, &fc__rt.sync_comm) == MPI_SUCCESS)
        fc__rt.sync_ready = 1;
    if (fc__rt.sync_ready) {
        fc__clock_sync(&m);
        have = 1;
    }
    if (fc__state == FC__ON)
        stop(FC_END_FINALIZE, 0, have ? &m : NULL);
    fc__state = FC__INERT;
    if (fc__rt.sync_ready) {
        PMPI_Comm_free(&fc__rt.sync_comm);
        fc__rt.sync_ready = 0;
    }
    pthread_mutex_unlock(&start_lock);
}

void fc__abort_before(void)
{
    pthread_mutex_lock(&start_lock);
    if (fc__state == FC__ON)
        stop(FC_END_ABORT, 1, NULL);
    fc__state = FC__INERT;
    pthread_mutex_unlock(&start_lock);
}

static void at_exit(void)
{
    /* trylock: exit() may be called from a thread that holds the lock inside the tracer. */
    if (pthread_mutex_trylock(&start_lock) != 0)
        return;
    if (fc__state == FC__ON)
        stop(FC_END_EXIT, 1, NULL);
    fc__state = FC__INERT;
    pthread_mutex_unlock(&start_lock);
}
