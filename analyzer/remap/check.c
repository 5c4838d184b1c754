/* analyzer/remap/check.c: `flowcut remap --check SUGGESTION TRACE`, which says whether every rank of
 * a traced run ran on the node a launcher file of `flowcut remap` gives it (remap.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include <flowcut/reader.h>
#include "util/internal.h"
#include "remap/remap.h"

/* What a suggestion file says: the node of each rank (names), or for a Cray file, which ranks
 * share a node (group[r], numbered from 0). n ranks. */
typedef struct wanted {
    uint32_t n;
    char **names;     /* n names, or NULL for a Cray file */
    uint32_t *group;  /* n group numbers for a Cray file */
} wanted;

static void wanted_free(wanted *w)
{
    if (w->names != NULL)
        for (uint32_t i = 0; i < w->n; i++)
            free(w->names[i]);
    free(w->names);
    free(w->group);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *g = realloc(buf, cap *= 2);
            if (g == NULL) {
                free(buf);
                buf = NULL;
            }
            buf = g;
        }
    }
    fclose(f);
    if (buf != NULL)
        buf[len] = '\0';
    return buf;
}

/* Appends a copy of [s, s+len) to w->names. */
static int add_name(wanted *w, size_t *cap, const char *s, size_t len)
{
    if (w->n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        char **g = realloc(w->names, c * sizeof *g);
        if (g == NULL)
            return FC_ENOMEM;
        w->names = g;
        *cap = c;
    }
    char *name = malloc(len + 1);
    if (name == NULL)
        return FC_ENOMEM;
    memcpy(name, s, len);
    name[len] = '\0';
    w->names[w->n++] = name;
    return 0;
}

/* The JSON document: the first suggestion's rank_to_node, a list of plain strings (node names are
 * written without escapes that matter here; an escaped quote ends no name). */
static int parse_json(const char *text, wanted *w, const char *path)
{
    const char *p = strstr(text, "\"suggestions\"");
    p = p ? strstr(p, "\"rank_to_node\"") : NULL;
    p = p ? strchr(p, '[') : NULL;
    if (p == NULL)
        return fc__err(FC_EINVAL, "%s: a JSON document without a suggestion's rank_to_node", path);
    size_t cap = 0;
    for (p++; *p && *p != ']'; p++) {
        if (*p != '"')
            continue;
        const char *s = ++p;
        while (*p && !(*p == '"' && p[-1] != '\\'))
            p++;
        if (!*p)
            break;
        int rc = add_name(w, &cap, s, (size_t)(p - s));
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The words of a line after `key`, split at commas. */
static int split_names(const char *s, const char *end, wanted *w)
{
    size_t cap = 0;
    while (s < end) {
        while (s < end && (*s == ',' || isspace((unsigned char)*s)))
            s++;
        const char *b = s;
        while (s < end && *s != ',' && !isspace((unsigned char)*s))
            s++;
        if (s > b) {
            int rc = add_name(w, &cap, b, (size_t)(s - b));
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* A Cray MPICH_RANK_ORDER file: ranks (and ranges a-b) in placement order, ppn to a node, ppn from
 * the "# N ranks per node" line flowcut writes (the file itself does not say). */
static int parse_cray(const char *text, wanted *w, const char *path)
{
    const char *pp = strstr(text, " ranks per node");
    unsigned long ppn = 0;
    if (pp != NULL) {
        const char *b = pp;
        while (b > text && isdigit((unsigned char)b[-1]))
            b--;
        ppn = strtoul(b, NULL, 10);
    }
    if (ppn == 0)
        return fc__err(FC_EINVAL, "%s: a Cray rank order without its \"# N ranks per node\" line: "
                                  "the ranks per node are the launcher's, not the file's", path);
    uint32_t *list = NULL;
    size_t n = 0, cap = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (*line == '#')
            continue;
        const char *p = line;
        while (*p && *p != '\n') {
            if (*p == ',' || isspace((unsigned char)*p)) {
                p++;
                continue;
            }
            char *e;
            unsigned long a = strtoul(p, &e, 10), b = a;
            if (e == p)
                return free(list), fc__err(FC_EINVAL, "%s: '%.20s' is not a rank in a Cray rank order", path, p);
            if (*e == '-') {
                const char *q = e + 1;
                b = strtoul(q, &e, 10);
                if (e == q || b < a)
                    return free(list), fc__err(FC_EINVAL, "%s: a bad range in a Cray rank order", path);
            }
            for (unsigned long r = a; r <= b; r++) {
                if (n == cap) {
                    uint32_t *g = realloc(list, (cap = cap ? 2 * cap : 64) * sizeof *g);
                    if (g == NULL)
                        return free(list), FC_ENOMEM;
                    list = g;
                }
                list[n++] = (uint32_t)r;
            }
            p = e;
        }
    }
    w->group = calloc(n ? n : 1, sizeof *w->group);
    if (w->group == NULL)
        return free(list), FC_ENOMEM;
    char *seen = calloc(n ? n : 1, 1);
    if (seen == NULL)
        return free(list), FC_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (list[i] >= n || seen[list[i]])
            rc = fc__err(FC_EINVAL, "%s: the Cray rank order is not a permutation of 0..%zu", path, n - 1);
        else {
            seen[list[i]] = 1;
            w->group[list[i]] = (uint32_t)(i / ppn);
        }
    }
    w->n = (uint32_t)n;
    free(seen);
    free(list);
    return rc;
}

/* Reads any launcher file of `flowcut remap`, by its content. */
static int parse_suggestion(const char *path, wanted *w)
{
    char *text = slurp(path);
    if (text == NULL)
        return fc__err(errno == ENOMEM ? FC_ENOMEM : FC_ENOENT, "%s: %s", path, strerror(errno));
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    int rc = 0;
    const char *hosts = strstr(text, "# rank-hosts:"), *omp = strstr(text, "\nrank ");
    if (*p == '{') {
        rc = parse_json(p, w, path);
    } else if (hosts != NULL) {
        /* Hydra: the rank hosts, which the rank order and the node:n lines give too. */
        hosts += 13;
        rc = split_names(hosts, hosts + strcspn(hosts, "\n"), w);
    } else if (omp != NULL || strncmp(p, "rank ", 5) == 0) {
        /* Open MPI rankfile: rank N=host slot=S. */
        size_t cap = 0;
        for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            unsigned r;
            int off = 0;
            if (sscanf(line, "rank %u=%n", &r, &off) != 1 || off == 0)
                continue;
            if (r != w->n) {
                rc = fc__err(FC_EINVAL, "%s: the rankfile lists rank %u where rank %u was expected", path, r, w->n);
                break;
            }
            const char *h = line + off;
            if ((rc = add_name(w, &cap, h, strcspn(h, " \t\n"))) < 0)
                break;
        }
    } else if (strstr(text, "MPICH_RANK_ORDER") != NULL || (*p && strspn(p, "0123456789,- \n") == strlen(p))) {
        rc = parse_cray(text, w, path);
    } else {
        /* Slurm: one host per line, in rank order. */
        size_t cap = 0;
        for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            size_t len = strcspn(line, "\n");
            while (len > 0 && isspace((unsigned char)line[len - 1]))
                len--;
            if (len == 0 || line[0] == '#')
                continue;
            if ((rc = add_name(w, &cap, line, len)) < 0)
                break;
        }
    }
    free(text);
    if (rc == 0 && w->n == 0)
        rc = fc__err(FC_EINVAL, "%s: no placement in it (not a file of flowcut remap?)", path);
    return rc;
}

static const char *node_of(const fc_rank *r)
{
    return r->info.node && r->info.node[0] ? r->info.node : r->info.host && r->info.host[0] ? r->info.host : "?";
}

int fc__remap_check(const char *suggestion, const char *trace, FILE *out, uint32_t *misplaced)
{
    wanted w = {0};
    fc_trace *t = NULL;
    const fc_rank **by_rank = NULL;
    int rc = parse_suggestion(suggestion, &w);
    if (rc < 0)
        goto done;
    if ((rc = fc_trace_open(trace, &t)) < 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", fc_errmsg());
        rc = fc__err(rc, "%s", msg);
        goto done;
    }
    size_t nr = fc_trace_nranks(t);
    uint32_t size = nr ? fc_trace_rank(t, 0)->info.size : 0;
    if (size != w.n) {
        rc = fc__err(FC_EINVAL, "%s places %u ranks, %s ran %u", suggestion, w.n, trace, size);
        goto done;
    }
    if ((by_rank = calloc(w.n, sizeof *by_rank)) == NULL) {
        rc = FC_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < nr; i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        if (r->info.rank < w.n)
            by_rank[r->info.rank] = r;
    }
    *misplaced = 0;
    for (uint32_t r = 0; r < w.n; r++) {
        const fc_rank *k = by_rank[r];
        if (k == NULL) {
            fprintf(out, "rank %u: not in the trace\n", r);
            ++*misplaced;
            continue;
        }
        if (w.names != NULL) {
            if (strcmp(node_of(k), w.names[r]) != 0) {
                fprintf(out, "rank %u: ran on %s (launcher slot %u), suggested %s\n", r, node_of(k), k->info.slot,
                        w.names[r]);
                ++*misplaced;
            }
            continue;
        }
        /* Cray: the ranks of one group share a node, and no other rank is on it. */
        for (uint32_t q = 0; q < w.n; q++) {
            if (q == r || by_rank[q] == NULL)
                continue;
            int same = strcmp(node_of(k), node_of(by_rank[q])) == 0, want = w.group[q] == w.group[r];
            if (same != want) {
                fprintf(out, "rank %u: ran on %s (launcher slot %u) %s rank %u, suggested %s\n", r, node_of(k),
                        k->info.slot, same ? "with" : "apart from", q, want ? "together" : "apart");
                ++*misplaced;
                break;
            }
        }
    }
    fprintf(out, "check: %u of %u ranks ran where %s places them\n", w.n - *misplaced, w.n, suggestion);
    rc = 0;
done:
    free(by_rank);
    fc_trace_close(t);
    wanted_free(&w);
    return rc;
}
