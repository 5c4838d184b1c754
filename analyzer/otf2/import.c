/* analyzer/otf2/import.c: reads an OTF2 archive (Score-P's, or flowcut's own export) through OTF2's
 * reader and turns it into flowcut rank files in a private directory, so that every command and
 * analysis works on it unchanged.
 *
 * Why files and not an in-memory trace: the reader's cursors stream EVENTS blocks from the rank
 * files by path and offset (cursor.c), so an in-memory trace would need a second event source in
 * the cursor. Converting costs one pass and a few bytes per event of temporary disk, and keeps one
 * code path for every analysis. OTF2's reader has already applied the clock offsets and mapped
 * local ids to global ones, so the rank files carry aligned times and no CLOCK blocks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <flowcut/writer.h>
#include "util/internal.h"
#include "otf2/common.h"
#include "trace/input.h"

/* An anchor file starts with two bytes (a record type and OTF2's byte-order mark) and "OTF2". */
static const unsigned char anchor_magic[] = {'O', 'T', 'F', '2'};
#define ANCHOR_MAGIC_AT 2

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            size_t n = strlen(dir) + strlen(e->d_name) + 2;
            char *p = malloc(n);
            if (p != NULL) {
                snprintf(p, n, "%s/%s", dir, e->d_name);
                unlink(p);
                free(p);
            }
        }
        closedir(d);
    }
    rmdir(dir);
}

/* fc_trace_close's hook for an imported trace: its private directory goes with it. */
static void forget_dir(void *dir)
{
    remove_dir(dir);
    free(dir);
}

int fc__otf2_is_anchor(const char *path)
{
    struct stat st;
    unsigned char head[ANCHOR_MAGIC_AT + sizeof anchor_magic];
    size_t n = strlen(path);
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return 0;
    if (n > 5 && strcmp(path + n - 5, ".otf2") == 0)
        return 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC), yes = 0;
    if (fd >= 0) {
        yes = read(fd, head, sizeof head) == (ssize_t)sizeof head &&
              memcmp(head + ANCHOR_MAGIC_AT, anchor_magic, sizeof anchor_magic) == 0;
        close(fd);
    }
    return yes;
}

static int room(void **v, size_t *n, uint64_t ref, size_t sz)
{
    if (ref >= MAX_REF)
        return -1;
    if (ref < *n)
        return 0;
    size_t m = *n ? *n : 16;
    while (m <= ref)
        m *= 2;
    void *p = realloc(*v, m * sz);
    if (p == NULL)
        return -1;
    memset((char *)p + *n * sz, 0, (m - *n) * sz);
    *v = p;
    *n = m;
    return 0;
}

#define ROOM(im, tab, n, ref)                                                                      \
    if (room((void **)&(im)->tab, &(im)->n, (ref), sizeof *(im)->tab) < 0) {                       \
        (im)->nomem = 1;                                                                           \
        return OTF2_CALLBACK_INTERRUPT;                                                            \
    }

const char *fc__otf2_string_of(const fc__importer *im, uint32_t ref)
{
    return ref < im->nstrings && im->strings[ref] ? im->strings[ref] : "";
}

/* The attributes of a flowcut export that the import reads back (the others are left alone). */
static OTF2_CallbackCode on_attribute(void *d, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef desc,
                                      OTF2_Type type)
{
    fc__importer *im = d;
    (void)desc;
    const char *n = fc__otf2_string_of(im, name);
    if (strcmp(n, FC_OTF2_REQUEST_ATTR) == 0 && type == OTF2_TYPE_UINT64 && self < MAX_REF)
        im->attr_request1 = self + 1;
    else if (strcmp(n, FC_OTF2_COUNTS_ATTR) == 0 && type == OTF2_TYPE_STRING && self < MAX_REF)
        im->attr_counts1 = self + 1;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_clock(void *d, uint64_t res, uint64_t off, uint64_t len, uint64_t real)
{
    (void)off, (void)len, (void)real;
    ((fc__importer *)d)->resolution = res;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_string(void *d, OTF2_StringRef self, const char *s)
{
    fc__importer *im = d;
    ROOM(im, strings, nstrings, self);
    free(im->strings[self]);
    if ((im->strings[self] = strdup(s)) == NULL) {
        im->nomem = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_stnode(void *d, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef cls,
                                   OTF2_SystemTreeNodeRef parent)
{
    fc__importer *im = d;
    ROOM(im, nodes, nnodes, self);
    im->nodes[self] = (fc__stnode){name, cls, parent};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_lgroup(void *d, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                   OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                   OTF2_LocationGroupRef creator)
{
    fc__importer *im = d;
    (void)name, (void)creator;
    ROOM(im, groups, ngroups, self);
    im->groups[self] = (fc__lgroup){1, type, parent, -1, 0};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_location(void *d, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
                                     uint64_t nevents, OTF2_LocationGroupRef group)
{
    fc__importer *im = d;
    (void)name, (void)type, (void)nevents;
    if (fc__grow((void **)&im->locs, &im->nlocs, &im->loccap, sizeof *im->locs) < 0) {
        im->nomem = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    im->locs[im->nlocs++] = (fc__loc){self, group, 0};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_region(void *d, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canon,
                                   OTF2_StringRef desc, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                                   OTF2_RegionFlag flags, OTF2_StringRef file, uint32_t b, uint32_t e)
{
    fc__importer *im = d;
    (void)desc, (void)role, (void)flags, (void)file, (void)b, (void)e;
    ROOM(im, regions, nregions, self);
    im->regions[self] = (fc__oregion){name, canon, paradigm};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_group(void *d, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType type,
                                  OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t n, const uint64_t *m)
{
    fc__importer *im = d;
    (void)name, (void)flags;
    ROOM(im, ogroups, nogroups, self);
    fc__ogroup *g = &im->ogroups[self];
    /* Only MPI's groups matter here; a COMM_LOCATIONS group of another paradigm is left out. */
    if ((type == OTF2_GROUP_TYPE_COMM_LOCATIONS || type == OTF2_GROUP_TYPE_COMM_GROUP) && paradigm != OTF2_PARADIGM_MPI)
        return OTF2_CALLBACK_SUCCESS;
    free(g->m);
    *g = (fc__ogroup){1, type, n, malloc((n ? n : 1) * sizeof *m)};
    if (g->m == NULL) {
        im->nomem = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    if (n)
        memcpy(g->m, m, n * sizeof *m);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_comm(void *d, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                                 OTF2_CommRef parent, OTF2_CommFlag flags)
{
    fc__importer *im = d;
    (void)name, (void)parent, (void)flags;
    ROOM(im, comms, ncomms, self);
    im->comms[self] = (fc__comm){1, group, -1};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_cartdim(void *d, OTF2_CartDimensionRef self, OTF2_StringRef name, uint32_t size,
                                    OTF2_CartPeriodicity periodic)
{
    fc__importer *im = d;
    (void)name;
    ROOM(im, cdims, ncdims, self);
    im->cdims[self] = (fc__ocartdim){1, size, periodic == OTF2_CART_PERIODIC_TRUE};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_carttopo(void *d, OTF2_CartTopologyRef self, OTF2_StringRef name, OTF2_CommRef comm,
                                     uint8_t ndims, const OTF2_CartDimensionRef *dims)
{
    fc__importer *im = d;
    (void)name;
    ROOM(im, carts, ncarts, self);
    fc__ocart *t = &im->carts[self];
    free(t->dims), free(t->coord), free(t->have);
    memset(t, 0, sizeof *t);
    if ((t->dims = malloc((ndims ? ndims : 1) * sizeof *t->dims)) == NULL) {
        im->nomem = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    for (uint8_t k = 0; k < ndims; k++)
        t->dims[k] = dims[k];
    t->defined = 1, t->comm = comm, t->ndims = ndims;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_cartcoord(void *d, OTF2_CartTopologyRef topo, uint32_t rank, uint8_t ndims,
                                      const uint32_t *coord)
{
    fc__importer *im = d;
    fc__ocart *t = topo < im->ncarts ? &im->carts[topo] : NULL;
    if (t == NULL || !t->defined || ndims != t->ndims || rank >= MAX_REF)
        return OTF2_CALLBACK_SUCCESS; /* not of a topology defined: the topology is then left out */
    if (rank >= t->ncoord) {
        size_t n = t->ncoord ? t->ncoord : 16;
        while (n <= rank)
            n *= 2;
        uint32_t *c = realloc(t->coord, n * (ndims ? ndims : 1) * sizeof *c);
        uint8_t *h = c ? realloc(t->have, n) : NULL;
        if (c != NULL)
            t->coord = c;
        if (h == NULL) {
            im->nomem = 1;
            return OTF2_CALLBACK_INTERRUPT;
        }
        memset(h + t->ncoord, 0, n - t->ncoord);
        t->have = h;
        t->ncoord = n;
    }
    for (uint8_t k = 0; k < ndims; k++)
        t->coord[(size_t)rank * ndims + k] = coord[k];
    t->have[rank] = 1;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_cc(void *d, OTF2_CallingContextRef self, OTF2_RegionRef region,
                               OTF2_SourceCodeLocationRef scl, OTF2_CallingContextRef parent)
{
    fc__importer *im = d;
    ROOM(im, ccs, ncc, self);
    im->ccs[self] = (fc__occ){region, scl, parent};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_scl(void *d, OTF2_SourceCodeLocationRef self, OTF2_StringRef file, uint32_t line)
{
    fc__importer *im = d;
    ROOM(im, scls, nscls, self);
    im->scls[self] = (fc__oscl){file, line};
    return OTF2_CALLBACK_SUCCESS;
}

static int cmp_loc(const void *a, const void *b)
{
    const fc__loc *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Numbers the ranks (through the MPI COMM_LOCATIONS group, as Score-P defines it: member i is the
 * first location of rank i; else the process location groups in order) and the threads. */
static int number_ranks(fc__importer *im)
{
    fc__ogroup *cl = NULL;
    for (size_t i = 0; i < im->nogroups; i++)
        if (im->ogroups[i].defined && im->ogroups[i].type == OTF2_GROUP_TYPE_COMM_LOCATIONS) {
            cl = &im->ogroups[i];
            break;
        }
    fc__sort(im->locs, im->nlocs, sizeof *im->locs, cmp_loc);
    for (size_t i = 0; i < im->nlocs; i++) {
        fc__loc *l = &im->locs[i];
        if (l->group >= im->ngroups || !im->groups[l->group].defined)
            return fc__err(FC_ECORRUPT, "%s: location %llu names an undefined location group %u", im->anchor,
                           (unsigned long long)l->id, l->group);
        l->thread = im->groups[l->group].nthreads++;
    }
    if (cl != NULL) {
        for (uint32_t r = 0; r < cl->n; r++)
            for (size_t i = 0; i < im->nlocs; i++)
                if (im->locs[i].id == cl->m[r]) {
                    im->groups[im->locs[i].group].rank = r;
                    break;
                }
        im->world = cl->n;
    }
    /* Process groups the MPI group does not list (no MPI, or no such group) get the next ranks. */
    for (size_t g = 0; g < im->ngroups; g++) {
        fc__lgroup *lg = &im->groups[g];
        if (lg->defined && lg->rank < 0 && lg->type == OTF2_LOCATION_GROUP_TYPE_PROCESS && lg->nthreads > 0)
            lg->rank = im->world++;
    }
    if (im->world == 0)
        return fc__err(FC_ENOTTRACE, "%s: the OTF2 archive defines no process", im->anchor);
    return 0;
}

/* The node a location group ran on: the nearest system-tree ancestor of class "node" (Score-P's
 * class for a host), else its direct parent. */
static const char *node_of(const fc__importer *im, const fc__lgroup *lg)
{
    uint32_t n = lg->parent;
    for (int depth = 0; n < im->nnodes && depth < 64; depth++) {
        const char *cls = fc__otf2_string_of(im, im->nodes[n].cls);
        if (strcmp(cls, "node") == 0)
            return fc__otf2_string_of(im, im->nodes[n].name);
        n = im->nodes[n].parent;
    }
    return lg->parent < im->nnodes ? fc__otf2_string_of(im, im->nodes[lg->parent].name) : "";
}

/* ---- communicators ------------------------------------------------------------------------------ */

/* The flowcut communicators of the archive: MPI_COMM_WORLD (the first comm whose group is every
 * rank in order) is 0, the first COMM_SELF comm 1, any other OTF2 comm c is 2 + c. Members are
 * world ranks, which is what Score-P's COMM_GROUP groups list (indices into COMM_LOCATIONS). */
typedef struct ncomm {
    fc_comm c;
    uint32_t *members; /* owned; c.local points here */
} ncomm;

static int build_comms(fc__importer *im, ncomm **out, size_t *nout)
{
    ncomm *v = calloc(im->ncomms ? im->ncomms : 1, sizeof *v);
    int have_world = 0, have_self = 0;
    *out = v;
    *nout = 0;
    if (v == NULL)
        return fc__err(FC_ENOMEM, "out of memory");
    for (size_t i = 0; i < im->ncomms; i++) {
        fc__comm *c = &im->comms[i];
        fc__ogroup *g = c->defined && c->group < im->nogroups ? &im->ogroups[c->group] : NULL;
        if (g == NULL || !g->defined || (g->type != OTF2_GROUP_TYPE_COMM_GROUP && g->type != OTF2_GROUP_TYPE_COMM_SELF))
            continue;
        ncomm *n = &v[(*nout)++];
        if (g->type == OTF2_GROUP_TYPE_COMM_SELF) {
            c->native = have_self ? (int64_t)(2 + i) : 1;
            have_self = 1;
            n->c.id = (uint64_t)c->native;
            n->c.ordinal = -2; /* marks a self communicator: its member is the rank itself */
            continue;
        }
        if ((n->members = malloc((g->n ? g->n : 1) * sizeof *n->members)) == NULL)
            return fc__err(FC_ENOMEM, "out of memory");
        int is_world = g->n == im->world;
        for (uint32_t j = 0; j < g->n; j++) {
            if (g->m[j] >= im->world)
                return fc__err(FC_ECORRUPT, "%s: communicator %zu has member %llu outside the %u ranks", im->anchor,
                               i, (unsigned long long)g->m[j], im->world);
            n->members[j] = (uint32_t)g->m[j];
            is_world &= g->m[j] == j;
        }
        c->native = is_world && !have_world ? 0 : (int64_t)(2 + i);
        have_world |= is_world;
        n->c.id = (uint64_t)c->native;
        n->c.local_size = g->n;
        n->c.local = n->members;
        /* The ordinal tells apart communicators with the same members, the same way on every rank. */
        n->c.ordinal = 0;
        for (size_t k = 0; k + 1 < *nout; k++)
            if (v[k].c.ordinal >= 0 && v[k].c.local_size == g->n &&
                memcmp(v[k].c.local, n->members, g->n * sizeof *n->members) == 0)
                n->c.ordinal++;
    }
    return 0;
}

/* ---- the conversion ------------------------------------------------------------------------------ */

static OTF2_GlobalDefReaderCallbacks *def_callbacks(void)
{
    OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
    if (cb == NULL)
        return NULL;
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, on_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, on_string);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, on_stnode);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, on_lgroup);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, on_location);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, on_region);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, on_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, on_comm);
    OTF2_GlobalDefReaderCallbacks_SetCartDimensionCallback(cb, on_cartdim);
    OTF2_GlobalDefReaderCallbacks_SetCartTopologyCallback(cb, on_carttopo);
    OTF2_GlobalDefReaderCallbacks_SetCartCoordinateCallback(cb, on_cartcoord);
    OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(cb, on_cc);
    OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback(cb, on_scl);
    OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, on_attribute);
    return cb;
}

/* ---- call sites ------------------------------------------------------------------------------------ */

/* The text of a calling context as flowcut names a resolved frame: "function@file:line" (the file's
 * base name), or the function alone when the context has no source location. */
static char *cc_text(const fc__importer *im, uint32_t cc)
{
    const fc__occ *c = &im->ccs[cc];
    const char *fn = c->region < im->nregions ? fc__otf2_string_of(im, im->regions[c->region].name) : "";
    const char *file = "";
    uint32_t line = 0;
    if (c->scl < im->nscls && im->scls[c->scl].line > 0) {
        file = fc__otf2_string_of(im, im->scls[c->scl].file);
        line = im->scls[c->scl].line;
        if (strrchr(file, '/') != NULL)
            file = strrchr(file, '/') + 1;
    }
    size_t n = strlen(fn) + strlen(file) + 16;
    char *t = malloc(n);
    if (t != NULL) {
        if (file[0])
            snprintf(t, n, "%s@%s:%u", fn[0] ? fn : "?", file, line);
        else
            snprintf(t, n, "%s", fn[0] ? fn : "?");
    }
    return t;
}

/* The call sites of one rank as they are built. A frame is already symbolic, so it gets a module of
 * its own whose path is "=" and its text (see fc_symbols_create), at offset 0. */
typedef struct sitebuf {
    fc__intern names; /* module paths, "=TEXT" */
    fc_frame *frames;
    size_t nframes, fcap;
    fc_site *sites;
    size_t nsites, scap;
    size_t *first; /* per site: the index of its first frame (frames moves while it grows) */
    size_t nfirst, firstcap;
} sitebuf;

/* Adds a frame named text to the site being built. Returns 0 or FC_ENOMEM. */
static int add_frame(sitebuf *b, const char *text)
{
    size_t n = strlen(text) + 2;
    char *path = malloc(n);
    uint32_t id;
    if (path == NULL)
        return FC_ENOMEM;
    snprintf(path, n, "=%s", text[0] ? text : "?");
    int rc = fc__intern_id(&b->names, path, &id);
    free(path);
    if (rc < 0 || fc__grow((void **)&b->frames, &b->nframes, &b->fcap, sizeof *b->frames) < 0)
        return FC_ENOMEM;
    b->frames[b->nframes++] = (fc_frame){id, 0};
    return 0;
}

/* Ends the site id, whose frames are frames[first ..]. Returns 0 or FC_ENOMEM. */
static int add_site(sitebuf *b, uint64_t id, size_t first)
{
    if (fc__grow((void **)&b->sites, &b->nsites, &b->scap, sizeof *b->sites) < 0 ||
        fc__grow((void **)&b->first, &b->nfirst, &b->firstcap, sizeof *b->first) < 0)
        return FC_ENOMEM;
    b->sites[b->nsites++] = (fc_site){id, (uint32_t)(b->nframes - first), NULL};
    b->first[b->nfirst++] = first;
    return 0;
}

/* Writes the call sites of the rank's calls: one per calling context its calls were made from
 * (that context and its ancestors), and one per stack of regions plain Enters were made in (those
 * regions innermost first, by name: their definitions give where a function is, not the line of
 * the call it made). */
static int write_sites(fc__importer *im, fc_writer *w)
{
    sitebuf b;
    fc_module *mods = NULL;
    int rc = 0;
    memset(&b, 0, sizeof b);
    for (size_t cc = 0; cc < im->ncc && rc == 0; cc++) {
        if (!im->cc_used[cc])
            continue;
        size_t first = b.nframes;
        uint32_t depth = 0;
        for (uint32_t n = (uint32_t)cc; n < im->ncc && depth < 256 && rc == 0; n = im->ccs[n].parent, depth++) {
            char *text = cc_text(im, n);
            rc = text == NULL ? FC_ENOMEM : add_frame(&b, text);
            free(text);
        }
        if (rc == 0)
            rc = add_site(&b, FC__OTF2_SITE_OF(cc), first);
    }
    for (size_t i = 0; i < im->stacks.n && rc == 0; i++) {
        size_t first = b.nframes;
        const char *key = im->stacks.s[i], *end = key + strlen(key);
        /* The key lists region ids outermost first: walk it backwards. */
        while (rc == 0) {
            const char *q = end;
            while (q > key && q[-1] != '/')
                q--;
            uint32_t reg = (uint32_t)strtoul(q, NULL, 10);
            rc = add_frame(&b, reg < im->nregions ? fc__otf2_string_of(im, im->regions[reg].name) : "");
            if (q == key)
                break;
            end = q - 1;
        }
        if (rc == 0)
            rc = add_site(&b, (uint64_t)im->ncc + 1 + i, first);
    }
    if (rc == 0 && b.nsites > 0 && (mods = malloc(b.names.n * sizeof *mods)) == NULL)
        rc = FC_ENOMEM;
    if (rc == FC_ENOMEM) {
        rc = fc__err(FC_ENOMEM, "out of memory");
    } else if (b.nsites > 0) {
        for (size_t i = 0; i < b.names.n; i++)
            mods[i] = (fc_module){i, 0, 0, b.names.s[i], ""};
        for (size_t i = 0; i < b.nsites; i++)
            b.sites[i].frames = b.frames + b.first[i];
        if ((rc = fc_writer_modules(w, mods, b.names.n)) == 0)
            rc = fc_writer_sites(w, b.sites, b.nsites);
    }
    free(mods), free(b.frames), free(b.sites), free(b.first);
    fc__intern_free(&b.names);
    return rc;
}

/* ---- cartesian topologies ------------------------------------------------------------------------ */

/* The comm group of cartesian topology t when t can be given to the rank files: its comm is an
 * intra-communicator of the import, its dimensions are defined and multiply to the comm's size,
 * and every rank's coordinates are given and are MPI's row-major numbering of the comm ranks
 * (MPI_Cart_create's). NULL otherwise: the topology is left out. */
static const fc__ogroup *cart_group(const fc__importer *im, const fc__ocart *t)
{
    const fc__comm *c = t->comm < im->ncomms ? &im->comms[t->comm] : NULL;
    const fc__ogroup *g = c != NULL && c->defined && c->group < im->nogroups ? &im->ogroups[c->group] : NULL;
    if (!t->defined || t->ndims == 0 || g == NULL || c->native < 0 || !g->defined ||
        g->type != OTF2_GROUP_TYPE_COMM_GROUP || t->ncoord < g->n)
        return NULL;
    uint64_t prod = 1;
    for (uint32_t k = 0; k < t->ndims; k++) {
        if (t->dims[k] >= im->ncdims || !im->cdims[t->dims[k]].defined || im->cdims[t->dims[k]].size == 0)
            return NULL;
        prod *= im->cdims[t->dims[k]].size;
        if (prod > g->n)
            return NULL;
    }
    if (prod != g->n)
        return NULL;
    for (uint32_t me = 0; me < g->n; me++) {
        uint32_t rest = me;
        if (!t->have[me])
            return NULL;
        for (uint32_t k = t->ndims; k-- > 0;) {
            uint32_t size = im->cdims[t->dims[k]].size;
            if (t->coord[(size_t)me * t->ndims + k] != rest % size)
                return NULL;
            rest /= size;
        }
    }
    return g;
}

typedef struct bytes {
    unsigned char *p;
    size_t n, cap;
} bytes;

static int put_uv(bytes *b, uint64_t v)
{
    if (b->n + 10 > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        unsigned char *p = realloc(b->p, cap);
        if (p == NULL)
            return FC_ENOMEM;
        b->p = p, b->cap = cap;
    }
    b->n += fc_put_uvarint(b->p + b->n, v);
    return 0;
}

/* Rank r's COMMS block: its n communicators mine[] and, after them (format 2.6), the cartesian
 * topologies of those that have one: per dimension the source, then the destination of
 * MPI_Cart_shift by 1, as world ranks, for both lists. Without a topology the block is
 * fc_writer_comms'. */
static int write_comms(const fc__importer *im, fc_writer *w, uint32_t r, const fc_comm *mine, size_t n)
{
    bytes b = {0};
    size_t ntopo = 0;
    int rc = 0;
    for (size_t i = 0; i < im->ncarts; i++)
        if (cart_group(im, &im->carts[i]) != NULL)
            for (size_t k = 0; k < n; k++)
                ntopo += mine[k].id == (uint64_t)im->comms[im->carts[i].comm].native && mine[k].ordinal != -2;
    if (ntopo == 0)
        return fc_writer_comms(w, mine, n);
    rc |= put_uv(&b, n);
    for (size_t i = 0; i < n; i++) {
        rc |= put_uv(&b, mine[i].id);
        rc |= put_uv(&b, mine[i].flags);
        rc |= put_uv(&b, mine[i].local_size);
        for (uint32_t k = 0; k < mine[i].local_size; k++)
            rc |= put_uv(&b, mine[i].local[k]);
        rc |= put_uv(&b, mine[i].remote_size);
        for (uint32_t k = 0; k < mine[i].remote_size; k++)
            rc |= put_uv(&b, mine[i].remote[k]);
        rc |= put_uv(&b, fc_zigzag(mine[i].ordinal));
    }
    rc |= put_uv(&b, ntopo);
    for (size_t i = 0; i < im->ncarts; i++) {
        const fc__ocart *t = &im->carts[i];
        const fc__ogroup *g = cart_group(im, t);
        uint64_t id = g ? (uint64_t)im->comms[t->comm].native : 0;
        int in = 0;
        for (size_t k = 0; g != NULL && k < n; k++)
            in |= mine[k].id == id && mine[k].ordinal != -2;
        if (!in)
            continue;
        uint32_t me = 0;
        while (me < g->n && g->m[me] != r)
            me++;
        rc |= put_uv(&b, id);
        rc |= put_uv(&b, FC_TOPO_CART);
        for (int list = 0; list < 2; list++) {
            rc |= put_uv(&b, 2 * (uint64_t)t->ndims);
            uint64_t stride = g->n;
            for (uint32_t d = 0; d < t->ndims; d++) {
                const fc__ocartdim *dim = &im->cdims[t->dims[d]];
                stride /= dim->size;
                int64_t c = (int64_t)t->coord[(size_t)me * t->ndims + d];
                for (int dir = -1; dir <= 1; dir += 2) {
                    int64_t q = c + dir, nb = FC_PEER_NULL;
                    if (dim->periodic)
                        q = (q + dim->size) % dim->size;
                    if (q >= 0 && q < (int64_t)dim->size)
                        nb = (int64_t)g->m[(int64_t)me + (q - c) * (int64_t)stride];
                    rc |= put_uv(&b, fc_zigzag(nb));
                }
            }
        }
    }
    rc = rc ? fc__err(FC_ENOMEM, "out of memory") : fc_writer_block(w, FC_BLK_COMMS, 0, b.p, b.n);
    free(b.p);
    return rc;
}

/* Reads the events of one location and writes them as the EVENTS blocks of its thread. */
static int write_rank(fc__importer *im, OTF2_Reader *rd, OTF2_EvtReaderCallbacks *cb, const char *dir, uint32_t r,
                      size_t g, const ncomm *nc, size_t nnc)
{
    char path[4096];
    fc_writer *w = NULL;
    fc_comm *mine = malloc((nnc ? nnc : 1) * sizeof *mine);
    uint32_t *self = malloc(nnc ? nnc * sizeof *self : 1);
    uint64_t end_ns = 0;
    size_t n = 0;
    int rc;
    if (mine == NULL || self == NULL) {
        rc = fc__err(FC_ENOMEM, "out of memory");
        goto out;
    }
    snprintf(path, sizeof path, "%s/" FC_TRACE_FILE_FMT, dir, (int)r);
    fc_rank_info info = {.present = (1u << FC_RK_RANK) | (1u << FC_RK_SIZE) | (1u << FC_RK_NODE) | (1u << FC_RK_HOST),
                         .rank = r, .size = im->world, .core = -1, .numa = -1, .thread_level = -1};
    info.node = info.host = node_of(im, &im->groups[g]);
    /* The rank's host, where the export said it differs from its node. */
    for (size_t at = 0, line = 0; im->hosts != NULL && at < im->hosts_len; at += strlen(im->hosts + at) + 1, line++)
        if (line == r) {
            if (im->hosts[at])
                info.host = im->hosts + at;
            break;
        }
    /* The communicators this rank belongs to; a self communicator holds the rank alone. */
    for (size_t i = 0; i < nnc; i++) {
        const fc_comm *c = &nc[i].c;
        int member = c->ordinal == -2;
        for (uint32_t j = 0; !member && j < c->local_size; j++)
            member = c->local[j] == r;
        if (!member)
            continue;
        mine[n] = *c;
        if (c->ordinal == -2) {
            self[n] = r;
            mine[n].local = &self[n], mine[n].local_size = 1, mine[n].ordinal = 0;
        }
        n++;
    }
    if ((rc = fc_writer_open(path, r, im->world, 0, 0, 0, &w)) < 0 ||
        (im->coll_env != NULL && (rc = fc_writer_rank_coll_env(w, im->coll_env, im->coll_env_len)) < 0) ||
        (rc = fc_writer_rank(w, &info)) < 0 ||
        (rc = write_comms(im, w, r, mine, n)) < 0)
        goto out;
    if (im->ncc > 0)
        memset(im->cc_used, 0, im->ncc);
    fc__intern_free(&im->stacks);
    memset(&im->stacks, 0, sizeof im->stacks);
    for (size_t i = 0; i < im->nlocs && rc == 0; i++)
        if (im->locs[i].group == g)
            rc = fc__otf2_convert_location(im, rd, cb, &im->locs[i], w, &end_ns);
    if (rc == 0)
        rc = write_sites(im, w);
    if (rc == 0)
        rc = fc_writer_end(w, 0, FC_END_FINALIZE, end_ns, 0);
out:
    if (w != NULL && fc_writer_close(w) < 0 && rc == 0)
        rc = fc__err(FC_EIO, "%s: cannot be written", path);
    free(mine);
    free(self);
    return rc;
}

static void importer_free(fc__importer *im)
{
    for (size_t i = 0; i < im->nstrings; i++)
        free(im->strings[i]);
    for (size_t i = 0; i < im->nogroups; i++)
        free(im->ogroups[i].m);
    free(im->coll_env);
    free(im->hosts);
    free(im->strings), free(im->nodes), free(im->groups), free(im->locs), free(im->regions);
    for (size_t i = 0; i < im->ncarts; i++)
        free(im->carts[i].dims), free(im->carts[i].coord), free(im->carts[i].have);
    free(im->carts), free(im->cdims);
    free(im->ogroups), free(im->comms), free(im->ccs), free(im->scls), free(im->cc_used);
    fc__intern_free(&im->stacks);
}

/* Converts the archive of anchor into rank files in dir. */
static int convert_archive(fc__importer *im, const char *dir)
{
    OTF2_Reader *rd = NULL;
    OTF2_GlobalDefReader *gr = NULL;
    OTF2_GlobalDefReaderCallbacks *gcb = NULL;
    OTF2_EvtReaderCallbacks *ecb = NULL;
    ncomm *nc = NULL;
    size_t nnc = 0;
    uint64_t ndefs = 0;
    int rc = 0, evt_open = 0;
    if ((rd = OTF2_Reader_Open(im->anchor)) == NULL)
        FC__OTF2_FAIL(FC_ENOTTRACE, "not a readable OTF2 archive");
    if (OTF2_Reader_SetSerialCollectiveCallbacks(rd) != OTF2_SUCCESS)
        FC__OTF2_FAIL(FC_EIO, "OTF2 reader cannot be set up");
    /* The collective settings of a flowcut export (none in other archives): NUL-ended entries, as
     * the trace format keeps them. */
    char *env = NULL;
    if (OTF2_Reader_GetProperty(rd, FC__OTF2_COLL_ENV, &env) == OTF2_SUCCESS && env != NULL && env[0]) {
        size_t len = strlen(env);
        for (size_t j = 0; j < len; j++)
            if (env[j] == '\n')
                env[j] = '\0';
        im->coll_env = env;
        im->coll_env_len = len + 1;
    } else
        free(env);
    char *hosts = NULL;
    if (OTF2_Reader_GetProperty(rd, FC__OTF2_HOSTS, &hosts) == OTF2_SUCCESS && hosts != NULL && hosts[0]) {
        size_t len = strlen(hosts);
        for (size_t j = 0; j < len; j++)
            if (hosts[j] == '\n')
                hosts[j] = '\0';
        im->hosts = hosts;
        im->hosts_len = len;
    } else
        free(hosts);
    if ((gr = OTF2_Reader_GetGlobalDefReader(rd)) == NULL)
        FC__OTF2_FAIL(FC_ECORRUPT, "global definitions cannot be opened");
    if ((gcb = def_callbacks()) == NULL || (ecb = fc__otf2_event_callbacks()) == NULL) {
        rc = fc__err(FC_ENOMEM, "out of memory");
        goto out;
    }
    if (OTF2_Reader_RegisterGlobalDefCallbacks(rd, gr, gcb, im) != OTF2_SUCCESS ||
        OTF2_Reader_ReadAllGlobalDefinitions(rd, gr, &ndefs) != OTF2_SUCCESS) {
        if (im->nomem)
            FC__OTF2_FAIL(FC_ENOMEM, "out of memory");
        FC__OTF2_FAIL(FC_ECORRUPT, "global definitions cannot be read (after %llu)", (unsigned long long)ndefs);
    }
    if ((rc = number_ranks(im)) < 0 || (rc = build_comms(im, &nc, &nnc)) < 0)
        goto out;
    if ((im->cc_used = calloc(im->ncc ? im->ncc : 1, 1)) == NULL) {
        rc = fc__err(FC_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < im->nlocs; i++)
        OTF2_Reader_SelectLocation(rd, im->locs[i].id);
    /* Local definitions carry the clock offsets and id mappings that the event readers apply; an
     * archive may have none (no def files), which is not an error. */
    int defs_open = OTF2_Reader_OpenDefFiles(rd) == OTF2_SUCCESS;
    if (OTF2_Reader_OpenEvtFiles(rd) != OTF2_SUCCESS)
        FC__OTF2_FAIL(FC_ECORRUPT, "event files cannot be opened");
    evt_open = 1;
    for (size_t i = 0; i < im->nlocs; i++) {
        OTF2_DefReader *dr = defs_open ? OTF2_Reader_GetDefReader(rd, im->locs[i].id) : NULL;
        uint64_t n = 0;
        if (dr != NULL) {
            OTF2_ErrorCode e = OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n);
            OTF2_Reader_CloseDefReader(rd, dr);
            if (e != OTF2_SUCCESS)
                FC__OTF2_FAIL(FC_ECORRUPT, "local definitions of location %llu cannot be read",
                          (unsigned long long)im->locs[i].id);
        }
    }
    if (defs_open)
        OTF2_Reader_CloseDefFiles(rd);
    fc__otf2_quiet(); /* a missing local definition file is no error: forget its message */
    for (uint32_t r = 0; r < im->world && rc == 0; r++)
        for (size_t g = 0; g < im->ngroups && rc == 0; g++)
            if (im->groups[g].defined && im->groups[g].rank == r)
                rc = write_rank(im, rd, ecb, dir, r, g, nc, nnc);
out:
    if (evt_open)
        OTF2_Reader_CloseEvtFiles(rd);
    if (gr != NULL)
        OTF2_Reader_CloseGlobalDefReader(rd, gr);
    if (rd != NULL)
        OTF2_Reader_Close(rd);
    if (gcb != NULL)
        OTF2_GlobalDefReaderCallbacks_Delete(gcb);
    if (ecb != NULL)
        OTF2_EvtReaderCallbacks_Delete(ecb);
    for (size_t i = 0; i < nnc; i++)
        free(nc[i].members);
    free(nc);
    return rc;
}

int fc__otf2_isolate = 1;

/* Runs convert_archive in a child process when fc__otf2_isolate is set. OTF2's reader does not
 * check all it reads: a damaged archive can make it read memory it never filled or corrupt the
 * heap (docs/results.md, "Fuzzing"). In a child, such a crash ends the child only, and the caller
 * gets one error naming the archive. The child sends back its return code and message through a pipe
 * and leaves with _exit, so that nothing of the parent's (buffered output, atexit handlers) runs
 * twice. Where fork or pipe fail, the conversion runs in this process. */
static int convert_isolated(fc__importer *im, const char *dir)
{
    int fd[2];
    if (!fc__otf2_isolate || pipe2(fd, O_CLOEXEC) < 0)
        return convert_archive(im, dir);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return convert_archive(im, dir);
    }
    if (pid == 0) {
        close(fd[0]);
        int rc = convert_archive(im, dir);
        char msg[1200];
        int n = snprintf(msg, sizeof msg, "%d %s", rc, rc < 0 ? fc_errmsg() : "");
        size_t len = n < 0 ? 0 : (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1, off = 0;
        while (off < len) {
            ssize_t w = write(fd[1], msg + off, len - off);
            if (w <= 0 && errno != EINTR)
                _exit(2);
            off += w > 0 ? (size_t)w : 0;
        }
        _exit(0);
    }
    close(fd[1]);
    char msg[1200];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd[0], msg + len, sizeof msg - 1 - len);
        if (r > 0 && (len += (size_t)r) < sizeof msg - 1)
            continue;
        if (r < 0 && errno == EINTR)
            continue;
        break;
    }
    close(fd[0]);
    msg[len] = '\0';
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return fc__err(FC_EIO, "%s: cannot wait for the conversion of the archive: %s", im->anchor,
                           strerror(errno));
    char *end;
    long rc = strtol(msg, &end, 10);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && end != msg && *end == ' ') {
        if (rc >= 0)
            return 0;
        return fc__err((int)rc, "%s", end + 1);
    }
    if (WIFSIGNALED(st))
        return fc__err(FC_ECORRUPT, "%s: the OTF2 library crashed reading the archive (%s): it is damaged",
                       im->anchor, strsignal(WTERMSIG(st)));
    return fc__err(FC_ECORRUPT, "%s: the OTF2 library failed reading the archive (exit status %d): it is damaged",
                   im->anchor, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int fc__otf2_open(const char *anchor, fc_trace **out)
{
    fc__importer im;
    const char *tmp = getenv("TMPDIR");
    char *dir = NULL;
    int rc;
    *out = NULL;
    memset(&im, 0, sizeof im);
    im.anchor = anchor;
    size_t n = strlen(tmp && *tmp ? tmp : "/tmp") + 32;
    if ((dir = malloc(n)) == NULL)
        return fc__err(FC_ENOMEM, "out of memory");
    snprintf(dir, n, "%s/flowcut-otf2.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        rc = fc__err(FC_EIO, "%s: cannot make a directory for the converted trace: %s", dir, strerror(errno));
        free(dir);
        return rc;
    }
    fc__otf2_quiet();
    rc = convert_isolated(&im, dir);
    fc__otf2_loud();
    importer_free(&im);
    if (rc == 0 && (rc = fc_trace_open(dir, out)) == 0) {
        fc__trace_on_close(*out, forget_dir, dir);
        dir = NULL;
    }
    if (dir != NULL) {
        remove_dir(dir);
        free(dir);
    }
    return rc;
}

const fc__input fc__otf2_input = {"OTF2", fc__otf2_is_anchor, fc__otf2_open};
