/* analyzer/trace/reader.c: reads one rank file: checks its header and every block in order and
 * loads its definitions and EVENTS index (format.h). open.c gathers the rank files into a trace;
 * events themselves are streamed by cursor.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zlib.h>
#include "util/internal.h"
#include "trace/rankfile.h"

/* Ids above this are taken for corruption rather than allocating a huge index. */
#define MAX_ID (1u << 24)
/* Thread numbers at or above this are taken for corruption (each costs a stream when read). */
#define MAX_THREADS (1u << 16)
/* A header larger than this is taken for corruption. */
#define MAX_HEADER_SIZE (1u << 20)

/* Where the block being parsed sits, for messages. */
typedef struct where {
    const char *file;
    uint64_t off;
} where;

#define CORRUPT(w, what) fc__err(FC_ECORRUPT, "%s: offset %llu: %s", (w)->file, (unsigned long long)(w)->off, what)

static int idmap_set(fc__idmap *m, uint64_t id, size_t index)
{
    if (id >= MAX_ID)
        return -1;
    if (id >= m->n) {
        size_t n = m->n ? m->n : 16;
        while (n <= id)
            n *= 2;
        uint32_t *ix = realloc(m->ix, n * sizeof *ix);
        if (ix == NULL)
            return FC_ENOMEM;
        memset(ix + m->n, 0, (n - m->n) * sizeof *ix);
        m->ix = ix;
        m->n = n;
    }
    m->ix[id] = (uint32_t)index + 1;
    return 0;
}

/* ---- definition blocks ---------------------------------------------------------------------- */

static int get_string(fc__arena *a, const unsigned char **p, const unsigned char *end, const char **out)
{
    uint64_t n;
    if (fc_get_uvarint(p, end, &n) < 0 || n > (uint64_t)(end - *p))
        return -1;
    *out = fc__arena_strndup(a, (const char *)*p, (size_t)n);
    if (*out == NULL)
        return FC_ENOMEM;
    *p += n;
    return 0;
}

static int parse_rank(fc_trace *t, fc__rank *r, const unsigned char *p, const unsigned char *end, const where *w)
{
    fc_rank_info *in = &r->pub.info;
    while (p < end) {
        if (end - p < 6)
            return CORRUPT(w, "RANK field header cut short");
        unsigned key = fc_get_u16(p);
        uint32_t len = fc_get_u32(p + 2);
        p += 6;
        if (len > (uint64_t)(end - p))
            return CORRUPT(w, "RANK field longer than its block");
        int width = 0; /* 4 or 8 for integers, -1 for text, -2 for args, 0 unknown */
        switch (key) {
        case FC_RK_RANK: case FC_RK_SIZE: case FC_RK_CORE: case FC_RK_NUMA: case FC_RK_PID:
        case FC_RK_THREAD_LEVEL: case FC_RK_CALLSITE_DEPTH: case FC_RK_INIT_MODE: case FC_RK_SLOT:
            width = 4;
            break;
        case FC_RK_START_NS:
            width = 8;
            break;
        case FC_RK_ARGS:
            width = -2;
            break;
        case FC_RK_HOST: case FC_RK_NODE: case FC_RK_MPI_VERSION: case FC_RK_PROGRAM:
        case FC_RK_CLOCK_SOURCE: case FC_RK_AFFINITY:
            width = -1;
            break;
        default:
            break; /* a field of a newer minor version */
        }
        if (width > 0 && len != (uint32_t)width)
            return CORRUPT(w, "RANK field has the wrong length");
        uint32_t v32 = width == 4 ? fc_get_u32(p) : 0;
        const char *s = NULL;
        if (width == -1 && (s = fc__arena_strndup(&t->arena, (const char *)p, len)) == NULL)
            return FC_ENOMEM;
        switch (key) {
        case FC_RK_RANK: in->rank = v32; break;
        case FC_RK_SIZE: in->size = v32; break;
        case FC_RK_CORE: in->core = (int32_t)v32; break;
        case FC_RK_NUMA: in->numa = (int32_t)v32; break;
        case FC_RK_PID: in->pid = v32; break;
        case FC_RK_THREAD_LEVEL: in->thread_level = (int32_t)v32; break;
        case FC_RK_CALLSITE_DEPTH: in->callsite_depth = v32; break;
        case FC_RK_INIT_MODE: in->init_mode = v32; break;
        case FC_RK_SLOT: in->slot = v32; break;
        case FC_RK_START_NS: in->start_ns = fc_get_u64(p); break;
        case FC_RK_HOST: in->host = s; break;
        case FC_RK_NODE: in->node = s; break;
        case FC_RK_MPI_VERSION: in->mpi_version = s; break;
        case FC_RK_PROGRAM: in->program = s; break;
        case FC_RK_CLOCK_SOURCE: in->clock_source = s; break;
        case FC_RK_AFFINITY: in->affinity = s; break;
        case FC_RK_COLL_ENV: {
            char *env = fc__arena_alloc(&t->arena, len + 1);
            if (env == NULL)
                return FC_ENOMEM;
            memcpy(env, p, len);
            env[len] = '\0';
            r->pub.coll_env = env;
            r->pub.coll_env_len = len;
            break;
        }
        case FC_RK_ARGS: {
            uint32_t argc = 0;
            for (uint32_t i = 0; i < len; i++)
                argc += p[i] == '\0';
            if (len > 0 && p[len - 1] != '\0')
                return CORRUPT(w, "RANK arguments do not end with NUL");
            const char **argv = fc__arena_alloc(&t->arena, (argc + 1) * sizeof *argv);
            if (argv == NULL)
                return FC_ENOMEM;
            const unsigned char *q = p;
            for (uint32_t i = 0; i < argc; i++) {
                size_t n = strlen((const char *)q);
                if ((argv[i] = fc__arena_strndup(&t->arena, (const char *)q, n)) == NULL)
                    return FC_ENOMEM;
                q += n + 1;
            }
            in->argc = argc;
            in->argv = argv;
            break;
        }
        default:
            break;
        }
        if (key < 64 && width != 0)
            in->present |= UINT64_C(1) << key;
        p += len;
    }
    if (!(in->present & UINT64_C(1) << FC_RK_SLOT))
        in->slot = in->rank; /* not renumbered: the launcher's slot is the rank */
    return 0;
}

static int parse_modules(fc_trace *t, fc__rank *r, const unsigned char *p, const unsigned char *end,
                         const where *w)
{
    uint64_t count;
    if (fc_get_uvarint(&p, end, &count) < 0)
        return CORRUPT(w, "MODULES count cut short");
    for (uint64_t i = 0; i < count; i++) {
        fc_module m;
        int rc;
        if (fc_get_uvarint(&p, end, &m.id) < 0 || fc_get_uvarint(&p, end, &m.base) < 0 ||
            fc_get_uvarint(&p, end, &m.size) < 0)
            return CORRUPT(w, "MODULES entry cut short");
        if ((rc = get_string(&t->arena, &p, end, &m.path)) < 0 ||
            (rc = get_string(&t->arena, &p, end, &m.build_id)) < 0)
            return rc == FC_ENOMEM ? rc : CORRUPT(w, "MODULES string cut short");
        if (fc__grow((void **)&r->modules, &r->pub.nmodules, &r->mcap, sizeof m) < 0)
            return FC_ENOMEM;
        if ((rc = idmap_set(&r->module_ix, m.id, r->pub.nmodules)) < 0)
            return rc == FC_ENOMEM ? rc : CORRUPT(w, "module id out of range");
        r->modules[r->pub.nmodules++] = m;
    }
    return 0;
}

static int parse_sites(fc_trace *t, fc__rank *r, const unsigned char *p, const unsigned char *end,
                       const where *w)
{
    uint64_t count, depth;
    if (fc_get_uvarint(&p, end, &count) < 0)
        return CORRUPT(w, "SITES count cut short");
    for (uint64_t i = 0; i < count; i++) {
        fc_site s;
        int rc;
        if (fc_get_uvarint(&p, end, &s.id) < 0 || fc_get_uvarint(&p, end, &depth) < 0)
            return CORRUPT(w, "SITES entry cut short");
        /* Each frame takes at least two bytes, which bounds depth before allocating. */
        if (depth > (uint64_t)(end - p) / 2)
            return CORRUPT(w, "SITES depth larger than its block");
        fc_frame *f = fc__arena_alloc(&t->arena, (depth ? depth : 1) * sizeof *f);
        if (f == NULL)
            return FC_ENOMEM;
        for (uint64_t k = 0; k < depth; k++)
            if (fc_get_uvarint(&p, end, &f[k].module) < 0 || fc_get_uvarint(&p, end, &f[k].offset) < 0)
                return CORRUPT(w, "SITES frame cut short");
        s.depth = (uint32_t)depth;
        s.frames = f;
        if (fc__grow((void **)&r->sites, &r->pub.nsites, &r->scap, sizeof s) < 0)
            return FC_ENOMEM;
        if ((rc = idmap_set(&r->site_ix, s.id, r->pub.nsites)) < 0)
            return rc == FC_ENOMEM ? rc : CORRUPT(w, "site id out of range");
        r->sites[r->pub.nsites++] = s;
    }
    return 0;
}

/* The list 0 .. n-1 (n > 0), in the trace's one identity array: NULL when out of memory. */
static const uint32_t *ident_list(fc_trace *t, size_t n)
{
    if (n > t->nident) { /* doubled, so that lists of growing sizes take O(largest) */
        size_t cap = n > 2 * t->nident ? n : 2 * t->nident;
        uint32_t *id = fc__arena_alloc(&t->arena, cap * sizeof *id);
        if (id == NULL)
            return NULL;
        for (size_t i = 0; i < cap; i++)
            id[i] = (uint32_t)i;
        t->ident = id;
        t->nident = cap;
    }
    return t->ident;
}

/* A file that does not define MPI_COMM_WORLD (the tracer's: format.h, COMMS) gets the one its
 * header's size implies, so that every reader sees it defined. */
int fc__rank_imply_world(fc_trace *t, fc__rank *r)
{
    if (r->pub.info.size > FC__MAX_WORLD)
        return fc__err(FC_ECORRUPT, "%s: offset %d: world size %u out of range", r->pub.file, FC_FH_SIZE,
                       r->pub.info.size);
    if (fc__idmap_get(&r->comm_ix, 0) >= 0 || r->pub.info.size == 0)
        return 0;
    fc_comm c = {.id = 0, .local_size = r->pub.info.size, .ordinal = 0};
    int rc;
    if ((c.local = ident_list(t, c.local_size)) == NULL ||
        fc__grow((void **)&r->comms, &r->pub.ncomms, &r->ccap, sizeof c) < 0)
        return FC_ENOMEM;
    if ((rc = idmap_set(&r->comm_ix, 0, r->pub.ncomms)) < 0)
        return rc;
    r->comms[r->pub.ncomms++] = c;
    return 0;
}

static int get_ranks(fc_trace *t, const unsigned char **p, const unsigned char *end, uint32_t *n,
                     const uint32_t **out)
{
    uint64_t size, v;
    int ident = 1;
    if (fc_get_uvarint(p, end, &size) < 0 || size > (uint64_t)(end - *p))
        return -1;
    *n = (uint32_t)size;
    *out = NULL;
    if (size == 0)
        return 0;
    if (fc__reserve(&t->mbuf, &t->mcap, size, sizeof *t->mbuf))
        return FC_ENOMEM;
    uint32_t *m = t->mbuf;
    for (uint64_t i = 0; i < size; i++) {
        if (fc_get_uvarint(p, end, &v) < 0 || v > UINT32_MAX)
            return -1;
        m[i] = (uint32_t)v;
        ident &= v == i;
    }
    if (ident)
        return (*out = ident_list(t, size)) != NULL ? 0 : FC_ENOMEM;
    uint32_t *keep = fc__arena_alloc(&t->arena, size * sizeof *keep);
    if (keep == NULL)
        return FC_ENOMEM;
    memcpy(keep, m, size * sizeof *keep);
    *out = keep;
    return 0;
}

static int parse_comms(fc_trace *t, fc__rank *r, const unsigned char *p, const unsigned char *end,
                       const where *w)
{
    uint64_t count, ord;
    if (fc_get_uvarint(&p, end, &count) < 0)
        return CORRUPT(w, "COMMS count cut short");
    for (uint64_t i = 0; i < count; i++) {
        fc_comm c;
        int rc;
        if (fc_get_uvarint(&p, end, &c.id) < 0 || fc_get_uvarint(&p, end, &c.flags) < 0)
            return CORRUPT(w, "COMMS entry cut short");
        if ((rc = get_ranks(t, &p, end, &c.local_size, &c.local)) < 0 ||
            (rc = get_ranks(t, &p, end, &c.remote_size, &c.remote)) < 0)
            return rc == FC_ENOMEM ? rc : CORRUPT(w, "COMMS member list cut short");
        if (fc_get_uvarint(&p, end, &ord) < 0)
            return CORRUPT(w, "COMMS ordinal cut short");
        c.ordinal = fc_unzigzag(ord);
        if (fc__grow((void **)&r->comms, &r->pub.ncomms, &r->ccap, sizeof c) < 0)
            return FC_ENOMEM;
        if ((rc = idmap_set(&r->comm_ix, c.id, r->pub.ncomms)) < 0)
            return rc == FC_ENOMEM ? rc : CORRUPT(w, "comm id out of range");
        r->comms[r->pub.ncomms++] = c;
    }
    int rc = p < end ? fc__topo_parse(t, r, p, end) : 0; /* format 2.6 */
    return rc == -1 ? CORRUPT(w, "COMMS topology cut short or naming a rank outside the world") : rc;
}

static int parse_clock(fc__rank *r, const unsigned char *p, const unsigned char *end, const where *w)
{
    uint64_t count, phase, off;
    if (fc_get_uvarint(&p, end, &count) < 0)
        return CORRUPT(w, "CLOCK count cut short");
    for (uint64_t i = 0; i < count; i++) {
        fc_clock k;
        if (fc_get_uvarint(&p, end, &phase) < 0 || fc_get_uvarint(&p, end, &k.local_ns) < 0 ||
            fc_get_uvarint(&p, end, &off) < 0 || fc_get_uvarint(&p, end, &k.uncertainty_ns) < 0 ||
            fc_get_uvarint(&p, end, &k.samples) < 0 || fc_get_uvarint(&p, end, &k.min_rtt_ns) < 0)
            return CORRUPT(w, "CLOCK entry cut short");
        k.phase = (uint32_t)phase;
        k.offset_ns = fc_unzigzag(off);
        if (fc__grow((void **)&r->clocks, &r->pub.nclocks, &r->kcap, sizeof k) < 0)
            return FC_ENOMEM;
        r->clocks[r->pub.nclocks++] = k;
    }
    return 0;
}

static int parse_end(fc__rank *r, const unsigned char *p, const unsigned char *end, const where *w)
{
    fc_end *e = &r->pub.end;
    if (fc_get_uvarint(&p, end, &e->events) < 0 || fc_get_uvarint(&p, end, &e->flags) < 0 ||
        fc_get_uvarint(&p, end, &e->reason) < 0 || fc_get_uvarint(&p, end, &e->end_ns) < 0 ||
        fc_get_uvarint(&p, end, &e->dropped) < 0 || fc_get_uvarint(&p, end, &e->warnings) < 0)
        return CORRUPT(w, "END block cut short");
    /* Writers count a chunk's records once its block is written, and END comes last, so the
     * EVENTS blocks before it hold what it counts: fewer means a block was lost (one whose kind
     * was damaged reads as another kind, or as END itself). More is allowed in a partial trace
     * only: a fatal signal's handler may write END while a chunk just written is not counted. */
    if (r->pub.events < e->events || (r->pub.events > e->events && !(e->flags & FC_ENDF_PARTIAL))) {
        char what[120];
        snprintf(what, sizeof what, "END block counts %llu events, the EVENTS blocks before it hold %llu",
                 (unsigned long long)e->events, (unsigned long long)r->pub.events);
        return CORRUPT(w, what);
    }
    r->pub.has_end = 1;
    return 0;
}

/* Bytes of a preview inflated first: a chunk header (three uvarints, at most 30 bytes) and a
 * column directory (FC_EVENT_COLS_DIR). */
#define PREVIEW_FIRST 40

/* 1 when the first bytes of a chunk, head[0 .. got), settle what a preview of want bytes would
 * find: a chunk without records, or one in columns whose record and gap columns run past want, so
 * that the first record cannot be decoded from the preview (fc_event_decode refuses it). A header
 * that does not parse is refused alike from either. */
static int preview_enough(const unsigned char *head, size_t got, size_t want)
{
    const unsigned char *p = head, *end = head + got;
    uint64_t thread, count, base;
    if (fc__chunk_header(&p, end, &thread, &count, &base) < 0 || count == 0)
        return 1;
    size_t at = (size_t)(p - head);
    if (got - at < FC_EVENT_COLS_DIR || *p != FC_EVENT_COLS_MARK)
        return 0;
    uint64_t rl = fc_get_u32(p + 1), gl = fc_get_u32(p + 5);
    return rl + gl > want - at - FC_EVENT_COLS_DIR;
}

/* Reads the chunk header and the first record of an EVENTS block without inflating all of it. */
static int preview_events(fc__rank *r, fc__blk *b, const unsigned char *payload, const where *w,
                          fc_event_codec **codec)
{
    unsigned char head[256];
    size_t n = b->raw < sizeof head ? b->raw : sizeof head;
    if (b->flags & FC_BLKF_ZLIB) {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (inflateInit(&zs) != Z_OK)
            return FC_ENOMEM;
        zs.next_in = (unsigned char *)payload;
        zs.avail_in = b->stored;
        zs.next_out = head;
        /* zlib gives its first bytes slowly, a few dozen instructions each: the chunk header and a
         * column directory come first, and for a large chunk in columns they are all this preview
         * can use (its first record's gap lies past the record column, out of reach of the full
         * preview too), so the rest is inflated only when it may be needed. */
        size_t first = n < PREVIEW_FIRST ? n : PREVIEW_FIRST;
        zs.avail_out = (uInt)first;
        int rc = inflate(&zs, Z_SYNC_FLUSH);
        if (rc == Z_OK && zs.total_out == first && first < n && !preview_enough(head, first, n)) {
            zs.avail_out = (uInt)(n - first);
            rc = inflate(&zs, Z_SYNC_FLUSH);
        }
        n = zs.total_out;
        inflateEnd(&zs);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
            return fc__err(FC_EZLIB, "%s: offset %llu: EVENTS block cannot be inflated", w->file,
                           (unsigned long long)w->off);
    } else if (n > 0) { /* an empty payload may have no buffer */
        memcpy(head, payload, n);
    }
    const unsigned char *p = head, *end = head + n;
    uint64_t thread, count, base;
    /* A record takes at least 4 bytes; more threads than MAX_THREADS is taken for corruption. */
    if (fc__chunk_header(&p, end, &thread, &count, &base) < 0 || thread >= MAX_THREADS || count > b->raw / 4)
        return CORRUPT(w, "EVENTS chunk header is malformed");
    b->thread = (uint32_t)thread;
    b->count = (uint32_t)count;
    if (thread + 1 > r->pub.threads)
        r->pub.threads = (uint32_t)thread + 1;
    r->pub.events += count;
    if (count > 0) {
        /* 11 KiB: too big for a library's stack frame, and made once for the blocks of a file. */
        fc_event_codec *c = *codec;
        fc_event ev = {0};
        if (c != NULL) {
            fc__codec_rewind(c, base);
        } else {
            if ((c = *codec = malloc(sizeof *c)) == NULL)
                return FC_ENOMEM;
            fc_event_codec_reset(c, base);
        }
        /* A first record longer than the preview falls back on base_ns, which is never later. */
        uint64_t t0 = fc_event_decode(c, &p, end, &ev) == 0 ? ev.t0 : base;
        if (!r->pub.has_events || t0 < r->pub.first_t0) {
            r->pub.first_t0 = t0;
            r->pub.has_events = 1;
        }
    }
    return 0;
}

/* ---- one rank file --------------------------------------------------------------------------- */

static int set_partial(fc_trace *t, fc__rank *r, const char *why, uint64_t off)
{
    char buf[160];
    snprintf(buf, sizeof buf, "%s at offset %llu", why, (unsigned long long)off);
    r->pub.partial = 1;
    r->pub.partial_why = fc__arena_strndup(&t->arena, buf, strlen(buf));
    return r->pub.partial_why ? 0 : FC_ENOMEM;
}

static int check_header(const unsigned char *h, size_t got, fc__rank *r, uint32_t *hsize, const char *file)
{
    if (got < FC_MAGIC_LEN || memcmp(h, FC_MAGIC, FC_MAGIC_LEN) != 0) {
        if (got < FC_MAGIC_LEN && memcmp(h, FC_MAGIC, got) == 0)
            return fc__err(FC_ETRUNCATED, "%s: offset %zu: file cut inside the file header", file, got);
        return fc__err(FC_ENOTTRACE, "%s: offset 0: not a flowcut trace (bad magic)", file);
    }
    if (got < FC_FILE_HEADER_SIZE)
        return fc__err(FC_ETRUNCATED, "%s: offset %zu: file cut inside the file header", file, got);
    uint32_t bom = fc_get_u32(h + FC_FH_BOM);
    if (bom == 0x0D0C0B0Au)
        return fc__err(FC_EENDIAN, "%s: offset %d: trace has a foreign byte order", file, FC_FH_BOM);
    if (bom != FC_BOM)
        return fc__err(FC_ECORRUPT, "%s: offset %d: bad byte-order mark", file, FC_FH_BOM);
    r->pub.info.major = fc_get_u16(h + FC_FH_MAJOR);
    r->pub.info.minor = fc_get_u16(h + FC_FH_MINOR);
    if (r->pub.info.major > FC_FORMAT_MAJOR)
        return fc__err(FC_EVERSION, "%s: offset %d: format version %u.%u is newer than this reader's %d.x",
                       file, FC_FH_MAJOR, r->pub.info.major, r->pub.info.minor, FC_FORMAT_MAJOR);
    if (r->pub.info.major < 1)
        return fc__err(FC_EUNSUPPORTED, "%s: offset %d: format version %u.%u is not supported", file,
                       FC_FH_MAJOR, r->pub.info.major, r->pub.info.minor);
    *hsize = fc_get_u32(h + FC_FH_HEADER_SIZE);
    if (*hsize < FC_FILE_HEADER_SIZE || *hsize > MAX_HEADER_SIZE)
        return fc__err(FC_ECORRUPT, "%s: offset %d: bad header size %u", file, FC_FH_HEADER_SIZE, *hsize);
    r->pub.info.rank = fc_get_u32(h + FC_FH_RANK);
    r->pub.info.size = fc_get_u32(h + FC_FH_SIZE);
    r->pub.info.start_ns = fc_get_u64(h + FC_FH_START_NS);
    r->pub.info.pid = fc_get_u32(h + FC_FH_PID);
    return 0;
}

/* Parses one complete, crc-checked block. */
static int dispatch(fc_trace *t, fc__rank *r, uint32_t kind, fc__blk *b, const unsigned char *stored,
                    const where *w, fc_event_codec **codec)
{
    if (kind == FC_BLK_EVENTS) {
        int rc = preview_events(r, b, stored, w, codec);
        if (rc < 0)
            return rc;
        if (fc__grow((void **)&r->blks, &r->nblks, &r->bcap, sizeof *b) < 0)
            return FC_ENOMEM;
        r->blks[r->nblks++] = *b;
        r->pub.event_blocks++;
        return 0;
    }
    if (kind < FC_BLK_RANK || kind > FC_BLK_WARN) {
        /* Only a newer minor version adds block kinds. In a file of this reader's minor or an
         * older one, an unknown kind is a damaged header (the crc covers the payload only):
         * skipping it would lose the block without a word. */
        if (r->pub.info.minor <= FC_FORMAT_MINOR) {
            char what[80];
            snprintf(what, sizeof what, "unknown block kind %u in a format %u.%u file", kind, r->pub.info.major,
                     r->pub.info.minor);
            return CORRUPT(w, what);
        }
        return 0; /* a block kind of a newer minor version: skipped by its length */
    }
    const unsigned char *p = stored;
    unsigned char *raw = NULL;
    int rc = 0;
    if (b->flags & FC_BLKF_ZLIB) {
        if ((raw = malloc(b->raw ? b->raw : 1)) == NULL)
            return FC_ENOMEM;
        if ((rc = fc__inflate(NULL, stored, b->stored, raw, b->raw)) < 0) {
            rc = rc == FC_ENOMEM ? fc__err(rc, "%s: out of memory inflating a block", w->file)
                                 : fc__err(FC_EZLIB, "%s: offset %llu: block cannot be inflated", w->file,
                                           (unsigned long long)w->off);
            goto out;
        }
        p = raw;
    }
    /* An empty payload may have no buffer at all: no arithmetic on a null pointer. */
    const unsigned char *end = b->raw ? p + b->raw : p;
    switch (kind) {
    case FC_BLK_RANK: rc = parse_rank(t, r, p, end, w); break;
    case FC_BLK_MODULES: rc = parse_modules(t, r, p, end, w); break;
    case FC_BLK_SITES: rc = parse_sites(t, r, p, end, w); break;
    case FC_BLK_COMMS: rc = parse_comms(t, r, p, end, w); break;
    case FC_BLK_CLOCK: rc = parse_clock(r, p, end, w); break;
    case FC_BLK_END: rc = parse_end(r, p, end, w); break;
    case FC_BLK_WARN: {
        const char *s = fc__arena_strndup(&t->arena, (const char *)p, b->raw);
        if (s == NULL || fc__grow((void **)&r->warnings, &r->pub.nwarnings, &r->wcap, sizeof s) < 0) {
            rc = FC_ENOMEM;
            break;
        }
        r->warnings[r->pub.nwarnings++] = s;
        break;
    }
    default:
        break;
    }
out:
    free(raw);
    return rc;
}

/* A rank file without END: its rank died before closing it. The events it had recorded but not
 * written come from its rescue file, as EVENTS blocks in memory after the file's own. */
static int recover(fc_trace *t, fc__rank *r, const char *file, uint32_t nseq, fc_event_codec **codec)
{
    fc__rescued *res = NULL;
    size_t n = 0;
    uint64_t events = 0;
    int rc = fc__rescue_read(&t->arena, file, r->pub.info.rank, nseq, &res, &n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        fc__blk b = {.off = FC_BLOCK_HEADER_SIZE, .stored = (uint32_t)res[i].len, .raw = (uint32_t)res[i].len,
                     .mem = res[i].payload};
        where w = {file, 0};
        rc = dispatch(t, r, FC_BLK_EVENTS, &b, res[i].payload, &w, codec);
        events += res[i].count;
    }
    free(res);
    if (rc == 0 && n > 0) {
        char why[700];
        snprintf(why, sizeof why, "%s; %llu events recovered from its rescue file", r->pub.partial_why,
                 (unsigned long long)events);
        r->pub.partial = 1;
        if ((r->pub.partial_why = fc__arena_strndup(&t->arena, why, strlen(why))) == NULL)
            rc = FC_ENOMEM;
    }
    return rc;
}

/* The refusals of in_dir are explained in rankfile.h. */
int fc__rank_scan(fc_trace *t, fc__rank *r, const char *file, int in_dir)
{
    unsigned char h[FC_FILE_HEADER_SIZE], bh[FC_BLOCK_HEADER_SIZE];
    unsigned char *buf = NULL;
    fc_event_codec *codec = NULL; /* for the first record of each EVENTS block */
    size_t got, cap = 0;
    uint32_t hsize = FC_FILE_HEADER_SIZE, seq = 0;
    int rc;
    int fd = open(file, O_RDONLY | O_CLOEXEC | (in_dir ? O_NOFOLLOW | O_NONBLOCK : 0));
    struct stat st;
    r->pub.file = fc__arena_strndup(&t->arena, file, strlen(file));
    r->pub.partial_why = "";
    r->pub.info.core = r->pub.info.numa = r->pub.info.thread_level = -1;
    r->pub.info.host = r->pub.info.node = r->pub.info.mpi_version = r->pub.info.program = "";
    r->pub.info.clock_source = r->pub.info.affinity = "";
    if (r->pub.file == NULL) {
        rc = FC_ENOMEM;
        goto out;
    }
    if (fd < 0 && errno == ELOOP && in_dir) {
        rc = fc__err(FC_ENOTTRACE, "%s: a symbolic link, not a rank file (not followed)", file);
        goto out;
    }
    if (fd < 0) {
        rc = fc__err(errno == ENOENT ? FC_ENOENT : FC_EIO, "%s: %s", file, strerror(errno));
        goto out;
    }
    if (in_dir && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
        rc = fc__err(FC_ENOTTRACE, "%s: not a regular file", file);
        goto out;
    }
    if ((rc = fc__pread(fd, h, sizeof h, 0, &got)) < 0 ||
        (rc = check_header(h, got, r, &hsize, file)) < 0) {
        if (rc == FC_EIO)
            fc__err(rc, "%s: offset 0: %s", file, strerror(errno));
        goto out;
    }
    r->header_ok = 1;
    uint64_t off = hsize;
    for (;;) {
        where w = {file, off};
        if ((rc = fc__pread(fd, bh, sizeof bh, off, &got)) < 0) {
            rc = fc__err(FC_EIO, "%s: offset %llu: %s", file, (unsigned long long)off, strerror(errno));
            goto out;
        }
        if (got == 0) {
            rc = set_partial(t, r, "no END block: file ends", off);
            goto out;
        }
        if (got < sizeof bh) {
            rc = set_partial(t, r, "file cut inside a block header", off);
            goto out;
        }
        uint32_t kind = fc_get_u32(bh + FC_BH_KIND);
        fc__blk b = {.off = off + FC_BLOCK_HEADER_SIZE,
                     .flags = fc_get_u32(bh + FC_BH_FLAGS),
                     .stored = fc_get_u32(bh + FC_BH_STORED_LEN),
                     .raw = fc_get_u32(bh + FC_BH_RAW_LEN)};
        uint32_t crc = fc_get_u32(bh + FC_BH_CRC32), bseq = fc_get_u32(bh + FC_BH_SEQ);
        if (bseq != seq) {
            char what[80];
            snprintf(what, sizeof what, "block sequence number %u, expected %u", bseq, seq);
            rc = CORRUPT(&w, what);
            goto out;
        }
        if (b.stored > FC_BLOCK_MAX_PAYLOAD || b.raw > FC_BLOCK_MAX_PAYLOAD ||
            (!(b.flags & FC_BLKF_ZLIB) && b.stored != b.raw)) {
            rc = CORRUPT(&w, "bad block length");
            goto out;
        }
        if (b.stored > cap) {
            free(buf);
            cap = b.stored;
            if ((buf = malloc(cap)) == NULL) {
                rc = FC_ENOMEM;
                goto out;
            }
        }
        if ((rc = fc__pread(fd, buf, b.stored, b.off, &got)) < 0) {
            rc = fc__err(FC_EIO, "%s: offset %llu: %s", file, (unsigned long long)b.off, strerror(errno));
            goto out;
        }
        if (rc == 1) {
            rc = set_partial(t, r, "file cut inside a block", off);
            goto out;
        }
        /* The same CRC-32 as zlib's crc32() (the tracer's), computed with carry-less
         * multiplication where the CPU has it: several times faster on every block. */
        if (libdeflate_crc32(0, buf, b.stored) != crc) {
            rc = CORRUPT(&w, "block crc mismatch");
            goto out;
        }
        if ((rc = dispatch(t, r, kind, &b, buf, &w, &codec)) < 0)
            goto out;
        seq++;
        off = b.off + b.stored;
        if (kind == FC_BLK_END) {
            /* Bytes after END are not part of the trace, unless they are the next block: writers
             * write nothing after END, so that END was another block whose kind was damaged. */
            if ((rc = fc__pread(fd, bh, sizeof bh, off, &got)) == 0 && got == sizeof bh &&
                fc_get_u32(bh + FC_BH_SEQ) == seq) {
                rc = CORRUPT(&w, "END block followed by the next block (a damaged block kind)");
                goto out;
            }
            rc = 0;
            break;
        }
    }
    if (r->pub.end.flags & FC_ENDF_PARTIAL) {
        static const char *const reasons[] = {
#define FC__X(name, num, desc) [num] = desc,
            FC_END_REASONS(FC__X)
#undef FC__X
        };
        char why[120];
        uint64_t reason = r->pub.end.reason;
        snprintf(why, sizeof why, "END marks the trace partial (reason: %s, %llu events dropped)",
                 reason < sizeof reasons / sizeof *reasons && reasons[reason] ? reasons[reason] : "unknown",
                 (unsigned long long)r->pub.end.dropped);
        r->pub.partial = 1;
        if ((r->pub.partial_why = fc__arena_strndup(&t->arena, why, strlen(why))) == NULL)
            rc = FC_ENOMEM;
    }
out:
    if (rc >= 0 && r->header_ok && !r->pub.has_end)
        rc = recover(t, r, file, seq, &codec);
    if (rc >= 0)
        rc = fc__rank_imply_world(t, r);
    if (rc == FC_ENOMEM)
        fc__err(rc, "%s: out of memory", file);
    if (fd >= 0)
        close(fd);
    free(buf);
    free(codec);
    r->pub.comms = r->comms;
    r->pub.sites = r->sites;
    r->pub.modules = r->modules;
    r->pub.clocks = r->clocks;
    r->pub.warnings = r->warnings;
    return rc < 0 ? rc : 0;
}
