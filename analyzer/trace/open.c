/* analyzer/trace/open.c: the public reader API: opens a trace (a directory of rank files, one
 * rank file, or a path an input back-end claims), reads each rank file with reader.c, sets aside
 * the unreadable ones, and answers the fc_trace_* questions about the result. */
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "util/internal.h"
#include "trace/input.h"
#include "trace/rankfile.h"

/* Picks the clock measurements of each phase with the least uncertainty. */
static void pick_clocks(fc__rank *r)
{
    for (size_t i = 0; i < r->pub.nclocks; i++) {
        const fc_clock *k = &r->clocks[i];
        const fc_clock **slot = k->phase == FC_CLOCK_INIT ? &r->init : k->phase == FC_CLOCK_FINALIZE ? &r->fin : NULL;
        if (slot != NULL && (*slot == NULL || k->uncertainty_ns < (*slot)->uncertainty_ns))
            *slot = k;
    }
}

/* ---- the trace ------------------------------------------------------------------------------- */

static int is_rank_file(const char *name)
{
    size_t n = strlen(name);
    if (n < 10 || strncmp(name, "rank-", 5) != 0 || strcmp(name + n - 4, ".fct") != 0)
        return 0;
    for (size_t i = 5; i < n - 4; i++)
        if (name[i] < '0' || name[i] > '9')
            return 0;
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_rank(const void *a, const void *b)
{
    uint32_t x = ((const fc__rank *)a)->pub.info.rank, y = ((const fc__rank *)b)->pub.info.rank;
    return (x > y) - (x < y);
}

/* Lists the rank files of directory dir, sorted, into *names (each malloc'd). */
static int list_dir(const char *dir, char ***names, size_t *n)
{
    size_t cap = 0;
    int rc = 0;
    DIR *d = opendir(dir);
    *names = NULL;
    *n = 0;
    if (d == NULL)
        return fc__err(errno == ENOENT ? FC_ENOENT : FC_EIO, "%s: %s", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_rank_file(e->d_name))
            continue;
        char *s = malloc(strlen(dir) + strlen(e->d_name) + 2);
        if (s == NULL || fc__grow((void **)names, n, &cap, sizeof **names) < 0) {
            free(s);
            rc = fc__err(FC_ENOMEM, "%s: out of memory", dir);
            break;
        }
        sprintf(s, "%s/%s", dir, e->d_name);
        (*names)[(*n)++] = s;
    }
    closedir(d);
    if (rc == 0 && *n == 0)
        rc = fc__err(FC_ENOENT, "%s: no rank-*.fct files in this directory", dir);
    if (rc == 0)
        qsort(*names, *n, sizeof **names, cmp_str);
    return rc;
}

/* The world rank a rank file's name gives (list_dir accepts only rank-NNNNNN.fct names). */
static uint32_t rank_of_name(const char *file)
{
    const char *base = strrchr(file, '/');
    return (uint32_t)strtoul(base + strlen("/rank-"), NULL, 10);
}

static int header_cut_rank(fc_trace *t, fc__rank *r, const char *file)
{
    r->pub.info.rank = rank_of_name(file);
    r->pub.partial = 1;
    r->pub.partial_why = fc__arena_strndup(&t->arena, fc_errmsg(), strlen(fc_errmsg()));
    return r->pub.partial_why ? 0 : fc__err(FC_ENOMEM, "%s: out of memory", file);
}

/* Frees what a rank's scan allocated outside the arena. */
static void free_rank(fc__rank *r)
{
    free(r->comms);
    free(r->topos);
    free(r->sites);
    free(r->modules);
    free(r->clocks);
    free(r->warnings);
    free(r->blks);
    free(r->comm_ix.ix);
    free(r->site_ix.ix);
    free(r->module_ix.ix);
    memset(r, 0, sizeof *r);
}

/* Sets rank file r aside as unreadable, with the message of the failure (code) that fc_errmsg
 * holds, and frees what its scan loaded. */
static int skip_rank(fc_trace *t, fc__rank *r, const char *file, int code)
{
    fc_skipped k = {.rank = rank_of_name(file), .code = code};
    k.file = fc__arena_strndup(&t->arena, file, strlen(file));
    k.why = fc__arena_strndup(&t->arena, fc_errmsg(), strlen(fc_errmsg()));
    free_rank(r);
    if (k.file == NULL || k.why == NULL || fc__grow((void **)&t->skipped, &t->nskipped, &t->skcap, sizeof k) < 0)
        return fc__err(FC_ENOMEM, "%s: out of memory", file);
    t->skipped[t->nskipped++] = k;
    return 0;
}

/* A rank file damaged after its header: what came before the damage stands, marked partial. */
static int damaged_rank(fc_trace *t, fc__rank *r)
{
    char why[600];
    snprintf(why, sizeof why, "damaged, read up to the damage: %s", fc_errmsg());
    r->pub.partial = 1;
    r->pub.partial_why = fc__arena_strndup(&t->arena, why, strlen(why));
    r->pub.comms = r->comms;
    r->pub.sites = r->sites;
    r->pub.modules = r->modules;
    r->pub.clocks = r->clocks;
    r->pub.warnings = r->warnings;
    int rc = r->pub.partial_why ? fc__rank_imply_world(t, r) : FC_ENOMEM;
    return rc == FC_ENOMEM ? fc__err(rc, "%s: out of memory", r->pub.file) : rc;
}

/* The input back-ends, in the order added; read without the lock once added (an entry is written
 * before the count that publishes it). */
#define MAX_INPUTS 8
static const fc__input *inputs[MAX_INPUTS];
static size_t ninputs;
static pthread_mutex_t inputs_lock = PTHREAD_MUTEX_INITIALIZER;

int fc__input_add(const fc__input *in)
{
    int rc = 0;
    pthread_mutex_lock(&inputs_lock);
    size_t n = __atomic_load_n(&ninputs, __ATOMIC_ACQUIRE), i;
    for (i = 0; i < n && inputs[i] != in; i++)
        ;
    if (i == n) {
        if (n < MAX_INPUTS) {
            inputs[n] = in;
            __atomic_store_n(&ninputs, n + 1, __ATOMIC_RELEASE);
        } else {
            rc = fc__err(FC_ENOMEM, "too many input back-ends");
        }
    }
    pthread_mutex_unlock(&inputs_lock);
    return rc;
}

void fc__trace_on_close(fc_trace *t, void (*fn)(void *), void *arg)
{
    t->on_close = fn;
    t->on_close_arg = arg;
}

int fc_trace_open(const char *path, fc_trace **out)
{
    /* A file of another format (an OTF2 anchor: Score-P's, or an export) goes to its back-end. */
    size_t nin = __atomic_load_n(&ninputs, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < nin; i++)
        if (inputs[i]->claims(path))
            return inputs[i]->open(path, out);
    char **names = NULL, *one = NULL;
    size_t n = 0, nnames = 0;
    struct stat st;
    int rc, isdir = 0;
    fc_trace *t = calloc(1, sizeof *t);
    *out = NULL;
    if (t == NULL)
        return fc__err(FC_ENOMEM, "%s: out of memory", path);
    if (stat(path, &st) < 0) {
        rc = fc__err(errno == ENOENT ? FC_ENOENT : FC_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    isdir = S_ISDIR(st.st_mode);
    if (isdir) {
        rc = list_dir(path, &names, &n);
        nnames = n;
        if (rc < 0)
            goto out;
    } else {
        one = (char *)path;
        names = &one;
        n = 1;
    }
    if ((t->ranks = calloc(n, sizeof *t->ranks)) == NULL) {
        rc = fc__err(FC_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    int first_err = 0;
    char first_msg[600] = "";
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        fc__rank *r = &t->ranks[kept];
        t->nranks = kept + 1;
        rc = fc__rank_scan(t, r, names[i], isdir);
        /* In a directory, a rank file cut inside its header (a rank that died as it started) is
         * a partial rank without events, named by its file; alone, it is an error. */
        if (rc == FC_ETRUNCATED && isdir)
            rc = header_cut_rank(t, r, names[i]);
        /* In a directory, any other damage costs that rank only. */
        if (rc < 0 && rc != FC_ENOMEM && isdir) {
            if (first_err == 0) {
                first_err = rc;
                snprintf(first_msg, sizeof first_msg, "%s", fc_errmsg());
            }
            int readable = r->header_ok && r->pub.info.size <= FC__MAX_WORLD;
            rc = readable ? damaged_rank(t, r) : skip_rank(t, r, names[i], rc);
            if (rc == 0 && !readable) {
                t->nranks = kept;
                continue;
            }
        }
        if (rc < 0)
            goto out;
        pick_clocks(r);
        if (r->pub.info.size > t->world)
            t->world = r->pub.info.size;
        kept++;
    }
    t->nranks = kept;
    if (kept == 0) {
        rc = fc__err(first_err, "%s", first_msg);
        goto out;
    }
    qsort(t->ranks, kept, sizeof *t->ranks, cmp_rank);
    for (size_t i = 1; i < t->nranks; i++)
        if (t->ranks[i].pub.info.rank == t->ranks[i - 1].pub.info.rank) {
            /* Two files claim one rank: in a directory the one whose name disagrees with its
             * header goes (the later one when both agree, which names make impossible). */
            rc = fc__err(FC_ECORRUPT, "%s: offset %d: rank %u also appears in %s", t->ranks[i].pub.file,
                         FC_FH_RANK, t->ranks[i].pub.info.rank, t->ranks[i - 1].pub.file);
            if (!isdir)
                goto out;
            size_t drop = rank_of_name(t->ranks[i - 1].pub.file) != t->ranks[i - 1].pub.info.rank ? i - 1 : i;
            if ((rc = skip_rank(t, &t->ranks[drop], t->ranks[drop].pub.file, FC_ECORRUPT)) < 0)
                goto out;
            memmove(&t->ranks[drop], &t->ranks[drop + 1], (t->nranks - drop - 1) * sizeof *t->ranks);
            t->nranks--;
            i--;
        }
    n = t->nranks;
    for (size_t i = 0; i < t->nskipped; i++)
        if (t->skipped[i].rank < UINT32_MAX && t->skipped[i].rank + 1 > t->world)
            t->world = t->skipped[i].rank + 1;
    if (isdir && t->world > n)
        t->missing = t->world - (uint32_t)n;
    /* The origin: rank 0's first event, else the earliest aligned event. */
    int have = 0;
    for (size_t i = 0; i < n; i++) {
        const fc_rank *r = &t->ranks[i].pub;
        if (!r->has_events)
            continue;
        int64_t a = fc_rank_align(r, r->first_t0);
        if (r->info.rank == 0) {
            t->origin = a;
            break;
        }
        if (!have || a < t->origin)
            t->origin = a;
        have = 1;
    }
    rc = 0;
out:
    free(t->mbuf); /* the scan is over: no list is read again */
    t->mbuf = NULL;
    t->mcap = 0;
    if (isdir && names != NULL) {
        for (size_t i = 0; i < nnames; i++)
            free(names[i]);
        free(names);
    }
    if (rc < 0)
        fc_trace_close(t);
    else
        *out = t;
    return rc;
}

void fc_trace_close(fc_trace *t)
{
    if (t == NULL)
        return;
    void (*on_close)(void *) = t->on_close;
    void *on_close_arg = t->on_close_arg;
    for (size_t i = 0; i < t->nranks; i++)
        free_rank(&t->ranks[i]);
    free(t->ranks);
    free(t->skipped);
    fc__arena_free(&t->arena);
    free(t);
    if (on_close != NULL)
        on_close(on_close_arg);
}

size_t fc_trace_nranks(const fc_trace *t)
{
    return t->nranks;
}

const fc_rank *fc_trace_rank(const fc_trace *t, size_t i)
{
    return i < t->nranks ? &t->ranks[i].pub : NULL;
}

long fc_trace_find(const fc_trace *t, uint32_t world_rank)
{
    size_t lo = 0, hi = t->nranks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint32_t r = t->ranks[mid].pub.info.rank;
        if (r == world_rank)
            return (long)mid;
        if (r < world_rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

uint32_t fc_trace_world_size(const fc_trace *t)
{
    return t->world;
}

uint32_t fc_trace_missing(const fc_trace *t)
{
    return t->missing;
}

size_t fc_trace_nskipped(const fc_trace *t)
{
    return t->nskipped;
}

const fc_skipped *fc_trace_skipped(const fc_trace *t, size_t i)
{
    return i < t->nskipped ? &t->skipped[i] : NULL;
}

int fc_trace_partial(const fc_trace *t)
{
    if (t->missing)
        return 1;
    for (size_t i = 0; i < t->nranks; i++)
        if (t->ranks[i].pub.partial)
            return 1;
    return 0;
}

int64_t fc_trace_origin(const fc_trace *t)
{
    return t->origin;
}
