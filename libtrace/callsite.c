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
/* Stack unwinds (libunwind runs), and those that found a chain the rank already knew: over all
 * threads, for FLOWCUT_STATS and the tests. */
static _Atomic uint64_t n_unwinds, n_repeated;
/* Bytes of a node of the unwound-site cache and its checks at this depth (x86-64, below). */
static size_t deep_stride;
static size_t deep_node_bytes(void);

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
    deep_stride = deep_node_bytes();
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
    atomic_fetch_add_explicit(&n_unwinds, 1, memory_order_relaxed);
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
    if (s->sc[c].key == h) {
        atomic_fetch_add_explicit(&n_repeated, 1, memory_order_relaxed);
        return s->sc[c].id;
    }
    uint32_t id = fc__site_intern(f, (unsigned)k);
    if (id) {
        s->sc[c].key = h;
        s->sc[c].id = id;
    }
    return id;
}

/* ---- unwound-site cache (x86-64) -------------------------------------------------------------
 * libunwind costs ~160 instructions to start and ~100 per frame, so a depth-4 site unwound on
 * every call costs thousands of instructions. Instead, each thread remembers, per call entry (the
 * wrapper's frame address fp, i.e. the application's stack pointer at the call, and the return
 * address), the site ids of the chains seen from there and the stack words each unwind read its
 * answer from:
 *   - for each frame j >= 1, its return address, which sits just below its stack pointer (the
 *     CFA of frame j - 1; on x86-64 the return address is always at CFA - 8);
 *   - for each frame whose CFA may depend on the frame pointer, where its rbp came from: the slot
 *     where a callee saved it (unw_get_save_loc), or the wrapper's saved rbp (fp[0]) when no
 *     application frame saved it.
 * On x86-64, compilers define every frame's CFA from its ip plus rsp or rbp. So when these words
 * hold the same values, the unwind would read the same frames and take the same steps: a hit that
 * compares them is exact, not a guess. And the address of each word is fixed by the values of
 * the words before it (they fix the frames and stack pointers the unwind has reached). So the
 * chains seen from one call entry form a tree: the entry's node holds the checks of the first
 * chain seen and its site id; a chain whose word i differs (a helper called from another line of
 * its caller, or through another caller further out) lives in a child node keyed by the parent,
 * i and the value read there, holding the checks after i and its own site id. A lookup compares
 * one node's words and, at the first that differs, moves to the child for the value found: one
 * node for a call entry with one chain, one more per branch for a helper called from many lines,
 * recursion, deep call trees or MPI's own Fortran bindings in front of every call.
 * The nodes live in a small set-associative table per thread (a bounded cache: the oldest node of
 * a full set makes room). A node is named by a tag that is never reused; its children hold that
 * tag, so a node that is evicted or refilled leaves its old children unreachable, and every node a
 * lookup reaches was filled by one unwind whose checks all hold.
 * The wrapper's rbp value is checked only when it points into the frames the unwind walked: a
 * frame whose CFA uses rbp has rbp inside its own frame, while code built without frame pointers
 * may keep a loop counter in rbp, which must not turn every call into a miss.
 * Checks are taken only when they hold at fill time (a signal frame, whose return address comes
 * from its sigcontext, makes the chain uncacheable), and they read only this thread's stack at or
 * above the application's stack pointer, which is mapped while the application's frames are live
 * (a program that switches one thread between stacks of its own, and frees one, could defeat
 * that: no MPI program we know of does). Each thread owns its cache, so no lock. */
#if defined(__x86_64__)
#define DEEP_SETS 32 /* sets per thread, a power of two */
#define DEEP_SET_BITS 5
#define DEEP_WAYS 4 /* nodes per set */
/* Tags start above every stack address (the keys of entry nodes) and step by more than the checks
 * a node can hold, so that tag + i names branch i of a node alone. */
#define DEEP_TAG0 ((uintptr_t)1 << 63)
#define DEEP_TAG_STEP ((uintptr_t)128)
_Static_assert(DEEP_SETS == 1 << DEEP_SET_BITS, "DEEP_SET_BITS");
_Static_assert(2 * (FC__MAX_DEPTH + 8) < DEEP_TAG_STEP, "a node's checks fit between two tags");

typedef struct deep_check {
    const uintptr_t *addr;
    uintptr_t val;
} deep_check;

typedef struct deep_node {
    uintptr_t k1, k2; /* entry: fp and return address; branch: parent's tag + i and the value read */
    uintptr_t tag;    /* this node's name, never reused in the thread; 0: empty */
    uint32_t id, n;   /* site id; checks used */
    deep_check chk[];
} deep_node;

#define DEEP_FRONT 64 /* entry nodes remembered by call entry, a power of two */

typedef struct deep_cache {
    uintptr_t next_tag;
    /* The node last found for a call entry, by a hash of the entry: a pointer into nodes, checked
     * against the entry it holds before use, so that one that has since moved or changed is only
     * a miss here. It spares the entry's set its search. */
    deep_node *front[DEEP_FRONT];
    unsigned char nodes[]; /* DEEP_SETS * DEEP_WAYS nodes of deep_stride bytes */
} deep_cache;

/* Checks a node can hold: two per frame walked, with a margin for skipped MPI frames. */
static inline unsigned deep_nchk(void)
{
    return 2 * ((unsigned)depth + 8);
}

/* A node's checks end with one that never holds (a word of ours that is 0, compared with 1), so
 * that the hit path compares words without counting them. */
static const uintptr_t deep_zero;

static size_t deep_node_bytes(void)
{
    return sizeof(deep_node) + (deep_nchk() + 1) * sizeof(deep_check);
}

static inline deep_node *deep_set(deep_cache *c, uintptr_t k1, uintptr_t k2)
{
    uintptr_t h = (k1 ^ k2) * 0x9e3779b97f4a7c15ull;
    return (deep_node *)(c->nodes + (size_t)(h >> (64 - DEEP_SET_BITS)) * DEEP_WAYS * deep_stride);
}

static inline deep_node *deep_way(deep_node *set, unsigned w)
{
    return (deep_node *)((char *)set + (size_t)w * deep_stride);
}

static inline __attribute__((always_inline)) deep_node *deep_find(deep_cache *c, uintptr_t k1, uintptr_t k2)
{
    deep_node *s = deep_set(c, k1, k2);
    for (unsigned w = 0; w < DEEP_WAYS; w++) {
        deep_node *x = deep_way(s, w);
        if (x->k1 == k1 && x->k2 == k2)
            return x;
    }
    return NULL;
}

/* Fills node x (new or refilled) with checks chk[0..n) and site id, under a new tag. */
static void deep_set_node(deep_cache *c, deep_node *x, const deep_check *chk, unsigned n, uint32_t id)
{
    x->tag = c->next_tag;
    c->next_tag += DEEP_TAG_STEP;
    x->id = id;
    x->n = n;
    memcpy(x->chk, chk, n * sizeof *chk);
    x->chk[n].addr = &deep_zero;
    x->chk[n].val = 1;
}

/* Makes the node of key (k1, k2): it goes first in its set and the oldest node there makes room. */
static void deep_add(deep_cache *c, uintptr_t k1, uintptr_t k2, const deep_check *chk, unsigned n, uint32_t id)
{
    deep_node *s = deep_set(c, k1, k2);
    memmove(deep_way(s, 1), s, (DEEP_WAYS - 1) * deep_stride);
    s->k1 = k1;
    s->k2 = k2;
    deep_set_node(c, s, chk, n, id);
}

/* Enters the chain of checks chk[0..n) found from call entry (fp, ra) as site id: down the nodes
 * whose checks it shares, into a new branch where it first differs. */
static void deep_fill(deep_cache *c, uintptr_t fp, uintptr_t ra, const deep_check *chk, unsigned n, uint32_t id)
{
    deep_node *x = deep_find(c, fp, ra);
    if (x == NULL) {
        deep_add(c, fp, ra, chk, n, id);
        return;
    }
    for (;;) {
        unsigned j = 0;
        while (j < x->n && j < n && x->chk[j].addr == chk[j].addr && x->chk[j].val == chk[j].val)
            j++;
        if (j == x->n || j == n || x->chk[j].addr != chk[j].addr) {
            /* The same words up to here, then the node reads elsewhere or ends: the unwinds
             * disagree where they read the same values, which the checks cannot tell apart. The
             * newer unwind replaces the node and its branches. */
            deep_set_node(c, x, chk, n, id);
            return;
        }
        uintptr_t k1 = x->tag + j, k2 = chk[j].val;
        chk += j + 1;
        n -= j + 1;
        x = deep_find(c, k1, k2);
        if (x == NULL) {
            deep_add(c, k1, k2, chk, n, id);
            return;
        }
    }
}

void fc__site_thread(fc__thread *t)
{
    size_t bytes = sizeof(deep_cache) + (size_t)DEEP_SETS * DEEP_WAYS * deep_stride;
    /* A reused thread slot starts empty: the checks of a dead thread's nodes would read a stack
     * that may no longer be mapped. */
    if (t->deep != NULL)
        memset(t->deep, 0, bytes);
    else if (frames != NULL && fc__depth > 0)
        t->deep = calloc(1, bytes);
    if (t->deep != NULL)
        ((deep_cache *)t->deep)->next_tag = DEEP_TAG0;
}

/* Appends the check (addr, val) to chk, whose n checks hold max at most; returns 0 when it cannot
 * be checked (the word does not hold val, or no room), 1 when it holds or is checked already. */
static int add_check(deep_check *chk, unsigned *n, unsigned max, const uintptr_t *addr, uintptr_t val)
{
    for (unsigned i = 0; i < *n; i++)
        if (chk[i].addr == addr)
            return chk[i].val == val;
    if (*n >= max || *addr != val)
        return 0;
    chk[*n].addr = addr;
    chk[*n].val = val;
    (*n)++;
    return 1;
}

/* The miss path: unwinds from the application's frame (not from here: the context is patched to
 * the caller's ip, sp and rbp, so libunwind never walks our own frames), interns the site and
 * enters its chain in the cache when its checks hold. */
static __attribute__((noinline, cold)) uint32_t deep_miss(deep_cache *cache, const uintptr_t *fp)
{
    const uintptr_t sp0 = (uintptr_t)(fp + 2), rbp0 = fp[0];
    uintptr_t f[FC__MAX_DEPTH];
    /* Two checks per frame walked, with a margin for skipped MPI frames. */
    deep_check chk[2 * (FC__MAX_DEPTH + 8)];
    const unsigned max = deep_nchk();
    unsigned nchk = 0;
    unw_context_t uc;
    unw_cursor_t c;
    unsigned k = 0;
    int ok = 1, rbp0_used = 0;
    uintptr_t top = sp0;
    atomic_fetch_add_explicit(&n_unwinds, 1, memory_order_relaxed);
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
            ok = ok && sp >= sp0 + 8 && add_check(chk, &nchk, max, (const uintptr_t *)sp - 1, ip);
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
            ok = ok && add_check(chk, &nchk, max, (const uintptr_t *)loc.u.addr, rbp);
        else if (rbp == rbp0)
            rbp0_used = 1;
        else
            ok = 0; /* rbp from somewhere this cache cannot check */
        if (unw_step(&c) <= 0)
            break;
    }
    if (rbp0_used && rbp0 >= sp0 && rbp0 <= top)
        ok = ok && add_check(chk, &nchk, max, fp, rbp0);
    uint32_t known = atomic_load(&nsites);
    uint32_t id = k ? fc__site_intern(f, k) : 0;
    if (id != 0 && id <= known)
        atomic_fetch_add_explicit(&n_repeated, 1, memory_order_relaxed);
    if (ok && id)
        deep_fill(cache, (uintptr_t)fp, fp[1], chk, nchk, id);
    return id;
}

/* The hit path: the entry's node, then, at the first word that differs, the branch for the value
 * found there, until a node whose words all hold gives the site id. It reads stack words of the
 * application's frames, not objects of ours, so the address sanitizer (whose redzones may lie
 * where an old node's words were) must not check it. */
static inline __attribute__((always_inline, no_sanitize_address)) uint32_t deep(fc__thread *s, const uintptr_t *fp)
{
    deep_cache *c = s->deep;
    uintptr_t ra = fp[1];
    deep_node **front = &c->front[(ra ^ ((uintptr_t)fp >> 4)) & (DEEP_FRONT - 1)];
    const deep_node *x = *front;
    if (FC__UNLIKELY(x == NULL || x->k1 != (uintptr_t)fp || x->k2 != ra)) {
        x = deep_find(c, (uintptr_t)fp, ra);
        if (x != NULL)
            *front = (deep_node *)x;
    }
    while (FC__LIKELY(x != NULL)) {
        const deep_check *k = x->chk;
        while (*k->addr == k->val) /* up to the last check, which fails */
            k++;
        uintptr_t i = (uintptr_t)(k - x->chk);
        if (FC__LIKELY(i == x->n))
            return x->id;
        x = deep_find(c, x->tag + i, *k->addr);
    }
    return deep_miss(c, fp);
}
#else
static size_t deep_node_bytes(void)
{
    return 0;
}

void fc__site_thread(fc__thread *t)
{
    (void)t;
}
#endif

__attribute__((no_sanitize_address)) uint32_t fc__site_deep(fc__thread *t, void *fp)
{
#if defined(__x86_64__)
    if (FC__LIKELY(t->deep != NULL))
        return deep(t, fp);
#endif
    return unwound(t);
}

__attribute__((no_sanitize_address)) uint32_t fc__site(fc__thread *t, void *fp)
{
    if (fc__depth == 0)
        return 0;
    fc__thread *s = t;
    if (fc__depth > 1)
        return fc__site_deep(s, fp);
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

void fc__site_stats(uint64_t *unwinds, uint64_t *repeated, uint32_t *chains)
{
    *unwinds = atomic_load(&n_unwinds);
    *repeated = atomic_load(&n_repeated);
    *chains = frames ? atomic_load(&nsites) : 0;
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
