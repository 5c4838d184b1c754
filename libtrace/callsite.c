/* libtrace/callsite.c: call sites: capture (return address or libunwind), per-rank dedup into
 * site ids, and the module map (dl_iterate_phdr) that lets the analyzer symbolize offline.
 *
 * Hot path at depth 1: a direct-mapped per-thread cache from return address to site id; a miss
 * locks the shared table. A return address inside MPI or libflowcut (Fortran and C++ bindings,
 * trampolines) is no call site: then the stack is unwound to the first frame outside them. Deeper
 * sites, and those behind MPI's bindings, go through a per-thread cache of unwound sites that
 * checks the stack words the unwind depended on, so libunwind runs only on a miss. */
#include "runtime.h"

#include <elf.h>
#include <stdio.h>
#include <ucontext.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define MAX_SITES 16384
#define MAX_RANGES 16
#define MAX_MODULES 512

/* Address ranges whose frames are skipped: libflowcut and the MPI libraries. */
static struct { uintptr_t lo, hi; } ranges[MAX_RANGES];
static unsigned nranges;

/* The shared site table: site id i has frames[(i - 1) * depth ...], never changed once published. */
static int depth;
static uintptr_t *frames;
static uint8_t *depths;
static _Atomic uint32_t nsites;
static uint32_t sites_written;
static uint32_t *table; /* open addressing, 2 * MAX_SITES slots of site ids (0: empty) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct module {
    uintptr_t base, lo, hi; /* hi - base is the size written */
    char path[512];
    char build_id[80];
} module;
static module *mods;
static _Atomic uint32_t nmods;
static uint32_t mods_written, mods_pending;

/* ---- module map ----------------------------------------------------------------------------- */

static int is_ignored_name(const char *name)
{
    const char *b = strrchr(name, '/');
    b = b ? b + 1 : name;
    static const char *const pfx[] = {"libmpich", "libmpi.", "libmpi_", "libmpifort", "libmpicxx", "libflowcut"};
    for (size_t i = 0; i < sizeof pfx / sizeof pfx[0]; i++)
        if (strncmp(b, pfx[i], strlen(pfx[i])) == 0)
            return 1;
    return 0;
}

static void span(struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr, e = a + ph->p_memsz;
        if (a < *lo)
            *lo = a;
        if (e > *hi)
            *hi = e;
    }
}

static int find_ranges(struct dl_phdr_info *info, size_t sz, void *self)
{
    (void)sz;
    uintptr_t lo, hi, me = (uintptr_t)self;
    span(info, &lo, &hi);
    if (lo >= hi || nranges >= MAX_RANGES)
        return 0;
    if ((me >= lo && me < hi) || (info->dlpi_name && is_ignored_name(info->dlpi_name))) {
        ranges[nranges].lo = lo;
        ranges[nranges].hi = hi;
        nranges++;
    }
    return 0;
}

static void build_id(struct dl_phdr_info *info, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const unsigned char *name = p + sizeof *nh;
            const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                desc + nh->n_descsz <= end && 2 * nh->n_descsz < cap) {
                static const char hex[] = "0123456789abcdef";
                for (unsigned k = 0; k < nh->n_descsz; k++) {
                    out[2 * k] = hex[desc[k] >> 4];
                    out[2 * k + 1] = hex[desc[k] & 15];
                }
                out[2 * nh->n_descsz] = '\0';
                return;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
}

static int add_module(struct dl_phdr_info *info, size_t sz, void *arg)
{
    (void)sz;
    (void)arg;
    uintptr_t lo, hi;
    span(info, &lo, &hi);
    uint32_t n = atomic_load(&nmods);
    if (lo >= hi || n >= MAX_MODULES)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (mods[i].base == info->dlpi_addr && mods[i].lo == lo && mods[i].hi == hi)
            return 0;
    module *m = &mods[n];
    m->base = info->dlpi_addr;
    m->lo = lo;
    m->hi = hi;
    if (info->dlpi_name && info->dlpi_name[0]) {
        snprintf(m->path, sizeof m->path, "%s", info->dlpi_name);
    } else {
        ssize_t k = readlink("/proc/self/exe", m->path, sizeof m->path - 1);
        m->path[k > 0 ? k : 0] = '\0';
    }
    build_id(info, m->build_id, sizeof m->build_id);
    atomic_store(&nmods, n + 1); /* publish after filling: the signal handler reads without a lock */
    return 0;
}

/* Module id of addr, or -1. */
static int find_module(uintptr_t addr)
{
    uint32_t n = atomic_load(&nmods);
    for (uint32_t i = 0; i < n; i++)
        if (addr >= mods[i].lo && addr < mods[i].hi)
            return (int)i;
    return -1;
}

/* The pseudo-module for frames outside every known module (unloaded code, JIT): base 0. */
static int unknown_module(void)
{
    uint32_t n = atomic_load(&nmods);
    for (uint32_t i = 0; i < n; i++)
        if (mods[i].lo == 0 && mods[i].hi == 0)
            return (int)i;
    if (n >= MAX_MODULES)
        return (int)n - 1;
    memset(&mods[n], 0, sizeof mods[n]);
    memcpy(mods[n].path, "[unknown]", 10);
    atomic_store(&nmods, n + 1);
    return (int)n;
}

/* ---- site table ----------------------------------------------------------------------------- */

int fc__sites_init(int d)
{
    depth = d > 0 ? d : 1;
    frames = calloc((size_t)MAX_SITES * depth, sizeof *frames);
    depths = calloc(MAX_SITES, 1);
    table = calloc(2 * MAX_SITES, sizeof *table);
    mods = calloc(MAX_MODULES, sizeof *mods);
    if (!frames || !depths || !table || !mods)
        return -1;
    dl_iterate_phdr(find_ranges, (void *)fc__sites_init);
    dl_iterate_phdr(add_module, NULL);
    return 0;
}

int fc__addr_ignored(uintptr_t a)
{
    for (unsigned i = 0; i < nranges; i++)
        if (a - ranges[i].lo < ranges[i].hi - ranges[i].lo)
            return 1;
    return 0;
}

void fc__sites_unignore(uintptr_t a)
{
    for (unsigned i = 0; i < nranges; i++)
        if (a - ranges[i].lo < ranges[i].hi - ranges[i].lo)
            ranges[i] = ranges[--nranges];
}

static uint64_t hash_frames(const uintptr_t *f, unsigned n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (unsigned i = 0; i < n; i++) {
        h ^= f[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    return h | 1; /* never 0, the empty cache key */
}

static int same(uint32_t id, const uintptr_t *f, unsigned n)
{
    return depths[id - 1] == n && memcmp(&frames[(size_t)(id - 1) * depth], f, n * sizeof *f) == 0;
}

uint32_t fc__site_intern(const uintptr_t *f, unsigned n)
{
    if (frames == NULL || n == 0)
        return 0;
    if (n > (unsigned)depth)
        n = (unsigned)depth;
    uint64_t h = hash_frames(f, n);
    uint32_t id = 0;
    int full = 0;
    pthread_mutex_lock(&lock);
    for (uint64_t i = h;; i++) {
        uint32_t *slot = &table[i & (2 * MAX_SITES - 1)];
        if (*slot == 0) {
            uint32_t k = atomic_load(&nsites);
            if (k >= MAX_SITES) {
                full = 1;
                break;
            }
            memcpy(&frames[(size_t)k * depth], f, n * sizeof *f);
            depths[k] = (uint8_t)n;
            id = k + 1;
            *slot = id;
            atomic_store(&nsites, k + 1); /* publish after filling */
            break;
        }
        if (same(*slot, f, n)) {
            id = *slot;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    if (full)
        fc__warn("more than %d distinct call sites; later ones are recorded as 0", MAX_SITES);
    return id;
}

/* Unwinds the stack with unw_backtrace, skipping our own and MPI frames, and interns the next
 * `depth` frames: the portable path, for machines without the unwound-site cache below. Kept out
 * of fc__site so that fc__site's cache hits need no stack frame of 4 KiB. */
static __attribute__((noinline)) uint32_t unwound(fc__thread *s)
{
    void *ip[FC__MAX_DEPTH + 64];
    uintptr_t f[FC__MAX_DEPTH];
    /* Each frame unwound costs ~100 instructions: ask for our own frames (this one, fc__site and
     * the wrapper) plus `depth`, and only when MPI's frames (Fortran bindings) use up the margin
     * unwind again, deeper. Our own frames lie in libflowcut, so they are skipped like MPI's. */
    int want = depth + 3, n, k = 0, i;
    for (;;) {
        n = unw_backtrace(ip, want);
        i = 0;
        while (i < n && fc__addr_ignored((uintptr_t)ip[i]))
            i++;
        if (n < want || n - i >= depth || want >= depth + 64)
            break;
        want = depth + 64;
    }
    for (; i < n && k < depth; i++)
        f[k++] = (uintptr_t)ip[i];
    if (k == 0)
        return 0;
    uint64_t h = hash_frames(f, (unsigned)k);
    unsigned c = (unsigned)(h >> 20) & (FC__SITE_CACHE - 1);
    /* A hit on the 64-bit hash alone: two different stacks collide with odds of about 2^-64 per
     * pair, and comparing up to 32 frames on every call would cost more than the lookup. The
     * shared table below still compares frames in full. */
    if (s->sc[c].key == h)
        return s->sc[c].id;
    uint32_t id = fc__site_intern(f, (unsigned)k);
    if (id) {
        s->sc[c].key = h;
        s->sc[c].id = id;
    }
    return id;
}

/* ---- unwound-site cache (x86-64) -------------------------------------------------------------
 * libunwind costs ~160 instructions to start and ~100 per frame, so a depth-4 site unwound on
 * every call costs far more than the 80 ns target. Instead, each thread remembers, per call entry
 * (the wrapper's frame address fp, i.e. the application's stack pointer at the call, and the
 * return address), the site id and the stack words the unwind read its answer from:
 *   - for each frame j >= 1, its return address, which sits just below its stack pointer (the
 *     CFA of frame j - 1; on x86-64 the return address is always at CFA - 8);
 *   - for each frame whose CFA may depend on the frame pointer, where its rbp came from: the slot
 *     where a callee saved it (unw_get_save_loc), or the wrapper's saved rbp (fp[0]) when no
 *     application frame saved it.
 * On x86-64, compilers define every frame's CFA from its ip plus rsp or rbp. So when these words
 * hold the same values, the unwind would read the same frames and take the same steps: a hit that
 * compares them is exact, not a guess. Two call chains through the same immediate caller at the
 * same stack depth differ in at least one of these return addresses, so they never share an entry.
 * The wrapper's rbp value is checked only when it points into the frames the unwind walked: a
 * frame whose CFA uses rbp has rbp inside its own frame, while code built without frame pointers
 * may keep a loop counter in rbp, which must not turn every call into a miss.
 * Checks are taken only when they hold at fill time (a signal frame, whose return address comes
 * from its sigcontext, makes the entry uncacheable), and they read only this thread's stack at or
 * above the application's stack pointer, which is mapped while the application's frames are live
 * (a program that switches one thread between stacks of its own, and frees one, could defeat
 * that: no MPI program we know of does). Each thread owns its cache, so no lock. */
#if defined(__x86_64__)
#define DEEP_WAYS 64 /* entries per thread, direct-mapped, a power of two */

typedef struct deep_check {
    const uintptr_t *addr;
    uintptr_t val;
} deep_check;

typedef struct deep_entry {
    uintptr_t fp, ra; /* key; fp 0: empty */
    uint32_t id, n;   /* site id; checks used */
    deep_check chk[];
} deep_entry;

/* Checks an entry can hold: two per frame walked, with a margin for skipped MPI frames. */
static inline size_t deep_nchk(void)
{
    return 2 * ((size_t)depth + 8);
}

static inline size_t deep_stride(void)
{
    return sizeof(deep_entry) + deep_nchk() * sizeof(deep_check);
}

static inline deep_entry *deep_slot(void *cache, uintptr_t fp, uintptr_t ra)
{
    uintptr_t h = (fp ^ (ra << 7)) * 0x9e3779b97f4a7c15ull;
    return (deep_entry *)((char *)cache + (size_t)(h >> 58) * deep_stride());
}

void fc__site_thread(fc__thread *t)
{
    /* A reused thread slot starts empty: the checks of a dead thread's entries would read a stack
     * that may no longer be mapped. */
    if (t->deep != NULL)
        memset(t->deep, 0, DEEP_WAYS * deep_stride());
    else if (frames != NULL && fc__depth > 0)
        t->deep = calloc(DEEP_WAYS, deep_stride());
}

static int add_check(deep_entry *e, const uintptr_t *addr, uintptr_t val)
{
    for (uint32_t i = 0; i < e->n; i++)
        if (e->chk[i].addr == addr)
            return e->chk[i].val == val;
    if (e->n >= deep_nchk() || *addr != val)
        return 0;
    e->chk[e->n].addr = addr;
    e->chk[e->n].val = val;
    e->n++;
    return 1;
}

/* The miss path: unwinds from the application's frame (not from here: the context is patched to
 * the caller's ip, sp and rbp, so libunwind never walks our own frames), interns the site and
 * fills entry e when its checks hold. */
static __attribute__((noinline, cold)) uint32_t deep_miss(const uintptr_t *fp, deep_entry *e)
{
    const uintptr_t sp0 = (uintptr_t)(fp + 2), rbp0 = fp[0];
    uintptr_t f[FC__MAX_DEPTH];
    unw_context_t uc;
    unw_cursor_t c;
    unsigned k = 0;
    int ok = 1, rbp0_used = 0;
    uintptr_t top = sp0;
    e->fp = 0; /* invalid while it is refilled */
    e->n = 0;
    if (unw_getcontext(&uc) != 0)
        return 0;
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)fp[1];
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)sp0;
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)rbp0;
    /* unw_init_local takes the context's ip as a return address, as fp[1] is. */
    if (unw_init_local(&c, &uc) < 0)
        return 0;
    for (unsigned j = 0; j < (unsigned)depth + 64; j++) {
        unw_word_t ip = 0, sp = 0, rbp = 0;
        unw_get_reg(&c, UNW_REG_IP, &ip);
        unw_get_reg(&c, UNW_REG_SP, &sp);
        if (j > 0) {
            ok = ok && sp >= sp0 + 8 && add_check(e, (const uintptr_t *)sp - 1, ip);
            top = sp;
        }
        /* A signal frame restores registers from its sigcontext, which no check covers. */
        if (unw_is_signal_frame(&c) > 0)
            ok = 0;
        if (!fc__addr_ignored(ip) && ip != 0) {
            f[k++] = ip;
            if (k == (unsigned)depth)
                break;
        }
        /* Where this frame's rbp, which its CFA may use, was read from. */
        unw_save_loc_t loc;
        unw_get_reg(&c, UNW_X86_64_RBP, &rbp);
        if (j > 0 && unw_get_save_loc(&c, UNW_X86_64_RBP, &loc) == 0 && loc.type == UNW_SLT_MEMORY &&
            loc.u.addr >= sp0)
            ok = ok && add_check(e, (const uintptr_t *)loc.u.addr, rbp);
        else if (rbp == rbp0)
            rbp0_used = 1;
        else
            ok = 0; /* rbp from somewhere this cache cannot check */
        if (unw_step(&c) <= 0)
            break;
    }
    if (rbp0_used && rbp0 >= sp0 && rbp0 <= top)
        ok = ok && add_check(e, fp, rbp0);
    uint32_t id = k ? fc__site_intern(f, k) : 0;
    if (ok && id) {
        e->id = id;
        e->ra = fp[1];
        e->fp = (uintptr_t)fp;
    }
    return id;
}

/* The hit path. It reads stack words of the application's frames, not objects of ours, so the
 * address sanitizer (whose redzones may lie where an old entry's words were) must not check it. */
static inline __attribute__((always_inline, no_sanitize_address)) uint32_t deep(fc__thread *s, const uintptr_t *fp)
{
    deep_entry *e = deep_slot(s->deep, (uintptr_t)fp, fp[1]);
    if (FC__LIKELY(e->fp == (uintptr_t)fp && e->ra == fp[1])) {
        uint32_t i = 0;
        while (i < e->n && *e->chk[i].addr == e->chk[i].val)
            i++;
        if (FC__LIKELY(i == e->n))
            return e->id;
    }
    return deep_miss(fp, e);
}
#else
void fc__site_thread(fc__thread *t)
{
    (void)t;
}
#endif

__attribute__((no_sanitize_address)) uint32_t fc__site(fc__thread *t, void *fp)
{
    if (fc__depth == 0)
        return 0;
    fc__thread *s = t;
#if defined(__x86_64__)
    if (fc__depth > 1)
        return s->deep ? deep(s, fp) : unwound(s);
#else
    if (fc__depth > 1)
        return unwound(s);
#endif
    uintptr_t a = fc__fp_ra(fp);
    unsigned c = fc__site_slot(a);
    /* The cache only ever holds return addresses outside MPI, so a hit needs no range check. */
    if (FC__LIKELY(s->sc[c].key == a))
        return s->sc[c].id;
    if (fc__addr_ignored(a)) {
        /* A call through MPI's own bindings (Fortran, C++): the site lies deeper. */
#if defined(__x86_64__)
        if (s->deep)
            return deep(s, fp);
#endif
        return unwound(s);
    }
    uint32_t id = fc__site_intern(&a, 1);
    if (id) {
        s->sc[c].key = a;
        s->sc[c].id = id;
    }
    return id;
}

const uintptr_t *fc__site_frames(uint32_t id, unsigned *n)
{
    if (frames == NULL || id == 0 || id > atomic_load(&nsites)) {
        *n = 0;
        return NULL;
    }
    *n = depths[id - 1];
    return &frames[(size_t)(id - 1) * depth];
}

/* ---- SITES and MODULES payloads ------------------------------------------------------------- */

uint32_t fc__sites_encode(fc__buf *mb, fc__buf *sb, int sig)
{
    uint32_t n = frames ? atomic_load(&nsites) : 0;
    if (n <= sites_written)
        return n;
    /* Resolve first, so that every module the sites need is in the table. */
    if (!sig) {
        for (uint32_t id = sites_written + 1; id <= n; id++)
            for (unsigned j = 0; j < depths[id - 1]; j++)
                if (find_module(frames[(size_t)(id - 1) * depth + j]) < 0) {
                    dl_iterate_phdr(add_module, NULL);
                    goto resolved;
                }
    }
resolved:
    fc__buf_uv(sb, n - sites_written);
    for (uint32_t id = sites_written + 1; id <= n; id++) {
        unsigned d = depths[id - 1];
        fc__buf_uv(sb, id);
        fc__buf_uv(sb, d);
        for (unsigned j = 0; j < d; j++) {
            uintptr_t a = frames[(size_t)(id - 1) * depth + j];
            int m = find_module(a);
            if (m < 0)
                m = unknown_module();
            fc__buf_uv(sb, (uint64_t)m);
            fc__buf_uv(sb, a - 1 - mods[m].base);
        }
    }
    uint32_t nm = atomic_load(&nmods);
    if (nm > mods_written) {
        fc__buf_uv(mb, nm - mods_written);
        for (uint32_t i = mods_written; i < nm; i++) {
            fc__buf_uv(mb, i);
            fc__buf_uv(mb, mods[i].base);
            fc__buf_uv(mb, mods[i].hi - mods[i].base);
            fc__buf_str(mb, mods[i].path, strlen(mods[i].path));
            fc__buf_str(mb, mods[i].build_id, strlen(mods[i].build_id));
        }
    }
    mods_pending = nm;
    return n;
}

void fc__sites_mark_written(uint32_t n)
{
    if (n > sites_written)
        sites_written = n;
    if (mods_pending > mods_written)
        mods_written = mods_pending;
}
