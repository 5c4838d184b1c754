/* libtrace/callsite.c: call sites: capture (return address or libunwind), per-rank dedup into
 * site ids, and the module map (dl_iterate_phdr) that lets the analyzer symbolize offline.
 *
 * Hot path at depth 1: a direct-mapped per-thread cache from return address to site id; a miss
 * locks the shared table. A return address inside MPI or libflowcut (Fortran and C++ bindings,
 * trampolines) is no call site: then the stack is unwound to the first frame outside them. */
#include "runtime.h"

#include <elf.h>
#include <stdio.h>
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

/* Unwinds the stack, skipping our own and MPI frames, and interns the next `depth` frames.
 * Inlined into fc__site, which the wrappers call directly, so that only two frames of ours (this
 * one and the wrapper's) precede the application's: libunwind costs about 7 ns a frame here. */
static inline __attribute__((always_inline)) uint32_t unwound(fc__thread *s)
{
    void *ip[FC__MAX_DEPTH + 64];
    uintptr_t f[FC__MAX_DEPTH];
    /* Each frame unwound costs ~100 instructions: ask for our own frames (fc__site with this
     * function inlined, and the wrapper) plus `depth`, and only when MPI's frames (Fortran
     * bindings) use up the margin unwind again, deeper. */
    int want = depth + 2, n, k = 0, i;
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

uint32_t fc__site(fc__thread *t, void *ra)
{
    if (fc__depth == 0)
        return 0;
    fc__thread *s = t;
    if (fc__depth > 1)
        return unwound(s);
    uintptr_t a = (uintptr_t)ra;
    unsigned c = fc__site_slot(a);
    /* The cache only ever holds return addresses outside MPI, so a hit needs no range check. */
    if (FC__LIKELY(s->sc[c].key == a))
        return s->sc[c].id;
    if (fc__addr_ignored(a))
        return unwound(s);
    uint32_t id = fc__site_intern(&a, 1);
    if (id) {
        s->sc[c].key = a;
        s->sc[c].id = id;
    }
    return id;
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
