/* analyzer/model/profile.c: reads, writes and queries platform profiles (profile.h).
 *
 * Text format, version 1. One record per line: a key, then space-separated fields. Blank lines
 * and lines whose first non-blank character is '#' are comments. Strings that may hold spaces are
 * double-quoted, with \" and \\ as the only escapes. Numbers are C floating-point literals; "inf"
 * stands for an unbounded size.
 *
 *   flowcut-profile MAJOR.MINOR    must be the first record; MAJOR 1 here
 *   source WORD                    calibrate | trace | another word
 *   nodes N
 *   ranks-per-node N
 *   mpi "TEXT"                     the MPI library's version, one line
 *   date WORD                      ISO 8601, UTC, e.g. 2024-05-01T12:00:00Z
 *   network "TEXT"                 free text
 *   eps-target EPS                 relative standard error asked for
 *   eager-threshold BYTES          0 when unknown
 *   inter LO HI LATENCY_S PER_BYTE_S EPS    one-way time between nodes for LO <= size < HI
 *   intra LO HI LATENCY_S PER_BYTE_S EPS    the same inside one node
 *   cut KIND K EPS ALPHA_0 .. ALPHA_{K-1}   KIND outgoing | incoming (K alphas, one per flow);
 *                                           mixed-in | mixed-out (K = 2, ONE alpha: the flow's own)
 *   maxrate S R_NIC R_CORE_BASE R_CORE_INCR EPS   Gropp's max-rate parameters (seconds, bytes/s)
 *   imb C B_R T_1 OVERALL_VOL MSGSPERSAMPLE EPS    (1.1) Hager & Wellein's IMB multi-mode model
 *   late-joiner G KMAX EPS         (1.2) the late joiner's weight 1 / (1 + G n) (tcpshare model)
 *   connection ORDER WAIT EPS      (1.3) ORDER serial | parallel: whether the messages of one
 *                                  connection (one rank to another) move one after the other;
 *                                  WAIT the measured share of the later one's time spent waiting
 *   connection-ends SHARE EPS      (1.5) SHARE the measured share of a connection's later
 *                                  message's data time by which the earlier one ends later than
 *                                  alone (0 one after the other, 1 side by side)
 *   opposite K D_IN D_OUT EPS      (1.4) a message that begins moving data into (out of) a node
 *                                  whose output (input) is full with K messages first waits D_IN
 *                                  (D_OUT) seconds; one line per K
 *
 * Every scalar key appears at most once and every key is optional except the first record. The
 * inter (and intra) segments are listed in order of LO, contiguous, the first from 0, the last up
 * to "inf"; at most one cut line per (KIND, K) and one opposite line per K.
 *
 * Versions. A reader of major M rejects a file of a larger major (FC_EVERSION): majors break. A
 * minor adds keys only. A reader knows the keys of its own minor (FC_PROFILE_MINOR) and those of
 * every smaller one: in a file whose minor is at most the reader's, an unknown key is a mistake (a
 * typo, a corrupt line) and is rejected; in a file of a newer minor it is a key added later and
 * is skipped, whole line, so that old readers keep working. Writers that add a key bump the minor. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "match/flow.h"
#include "util/internal.h"
#include "model/profile.h"

#define MAXTOK 64

static const char *const kind_names[] = {
#define FC__X(name, num, text) [num] = text,
    FC_CONFLICT_KINDS(FC__X)
#undef FC__X
};
#define NKINDS (sizeof kind_names / sizeof kind_names[0])

static int kind_parse(const char *s)
{
    for (size_t i = 1; i < NKINDS; i++)
        if (kind_names[i] != NULL && strcmp(s, kind_names[i]) == 0)
            return (int)i;
    return -1;
}

static int same_direction(uint32_t kind)
{
    return kind == FC_CONFLICT_OUTGOING || kind == FC_CONFLICT_INCOMING;
}

/* ---- construction ------------------------------------------------------------------------------ */

fc__profile *fc__profile_new(void)
{
    fc__profile *p = calloc(1, sizeof *p);
    if (p != NULL)
        p->version = FC_PROFILE_VERSION;
    return p;
}

void fc__profile_free(fc__profile *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->ncuts; i++)
        free(p->cuts[i].alpha);
    free(p->cuts);
    free(p->inter);
    free(p->intra);
    free(p);
}

int fc__profile_add_segment(fc__profile *p, int intra, uint64_t lo, uint64_t hi, double latency,
                            double per_byte, double eps)
{
    fc__segment **v = intra ? &p->intra : &p->inter;
    size_t *n = intra ? &p->nintra : &p->ninter;
    fc__segment *nv = realloc(*v, (*n + 1) * sizeof **v);
    if (nv == NULL)
        return FC_ENOMEM;
    nv[*n] = (fc__segment){.lo = lo, .hi = hi, .latency = latency, .per_byte = per_byte, .eps = eps};
    *v = nv;
    ++*n;
    return 0;
}

static int cut_cmp(const void *a, const void *b)
{
    const fc__cut *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

int fc__profile_add_cut(fc__profile *p, uint32_t kind, uint32_t k, const double *alpha, size_t nalpha,
                        double eps)
{
    for (size_t i = 0; i < p->ncuts; i++)
        if (p->cuts[i].kind == kind && p->cuts[i].k == k)
            return fc__err(FC_EINVAL, "profile: a second cut for %s k=%" PRIu32,
                           kind < NKINDS ? kind_names[kind] : "?", k);
    fc__cut *nv = realloc(p->cuts, (p->ncuts + 1) * sizeof *nv);
    if (nv == NULL)
        return FC_ENOMEM;
    p->cuts = nv;
    double *a = malloc((nalpha ? nalpha : 1) * sizeof *a);
    if (a == NULL)
        return FC_ENOMEM;
    if (nalpha)
        memcpy(a, alpha, nalpha * sizeof *a);
    p->cuts[p->ncuts++] = (fc__cut){.kind = kind, .k = k, .nalpha = nalpha, .alpha = a, .eps = eps};
    fc__sort(p->cuts, p->ncuts, sizeof *p->cuts, cut_cmp);
    return 0;
}

/* ---- queries ----------------------------------------------------------------------------------- */

const fc__segment *fc__profile_segment(const fc__profile *p, int intra, uint64_t bytes)
{
    const fc__segment *v = intra && p->nintra ? p->intra : p->inter;
    size_t n = intra && p->nintra ? p->nintra : p->ninter;
    /* Binary search for the last segment with lo <= bytes. */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].lo <= bytes)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const fc__segment *s = &v[lo - 1];
    return bytes < s->hi ? s : NULL;
}

double fc__profile_time(const fc__profile *p, int intra, uint64_t bytes)
{
    const fc__segment *s = fc__profile_segment(p, intra, bytes);
    if (s == NULL) {
        /* A profile built by hand may leave a gap or stop short: the nearest segment below
         * extrapolates, which is what the linear model would do anyway. */
        const fc__segment *v = intra && p->nintra ? p->intra : p->inter;
        size_t n = intra && p->nintra ? p->nintra : p->ninter;
        if (n == 0)
            return -1.0;
        s = &v[0];
        for (size_t i = 0; i < n; i++)
            if (v[i].lo <= bytes)
                s = &v[i];
    }
    return s->latency + (double)bytes * s->per_byte;
}

double fc__profile_alpha(const fc__profile *p, uint32_t kind, uint32_t k, uint32_t i)
{
    /* A flow alone, or unlabelled, is not cut. */
    if (kind == FC_CONFLICT_NONE || k <= 1)
        return 0.0;
    const fc__cut *best = NULL;
    for (size_t j = 0; j < p->ncuts; j++) {
        const fc__cut *c = &p->cuts[j];
        if (c->kind != kind || c->nalpha == 0)
            continue;
        if (best == NULL) {
            best = c;
            continue;
        }
        uint32_t d = c->k > k ? c->k - k : k - c->k, bd = best->k > k ? best->k - k : k - best->k;
        /* Ties go to the larger k', measured with more flows and so nearer the asymptotic share. */
        if (d < bd || (d == bd && c->k > best->k))
            best = c;
    }
    if (best == NULL)
        return -1.0;
    /* Even conflicts alternate two values and mixed ones hold the flow's own: index cyclically. */
    double a = best->alpha[i % best->nalpha];
    if (best->k != k && same_direction(kind) && best->k > 1)
        a *= (double)(k - 1) / (double)(best->k - 1);
    return a;
}

/* ---- writing ----------------------------------------------------------------------------------- */

/* Writes s quoted, with control characters (a multi-line MPI version) folded into spaces. */
static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fputc('\\', f);
        fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
    }
    fputc('"', f);
}

/* A word key ("source", "date") must stay one token: blanks become '-'. */
static void put_word(FILE *f, const char *s)
{
    if (*s == '\0') {
        fputs("-", f);
        return;
    }
    for (; *s; s++)
        fputc((unsigned char)*s <= ' ' || *s == '"' || *s == '#' ? '-' : *s, f);
}

static void put_hi(FILE *f, uint64_t hi)
{
    if (hi == UINT64_MAX)
        fputs("inf", f);
    else
        fprintf(f, "%" PRIu64, hi);
}

static void put_segments(FILE *f, const char *key, const fc__segment *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s %" PRIu64 " ", key, v[i].lo);
        put_hi(f, v[i].hi);
        fprintf(f, " %.10g %.10g %.4g\n", v[i].latency, v[i].per_byte, v[i].eps);
    }
}

int fc__profile_write_notes(FILE *f, const fc__profile *p, const char *notes)
{
    fprintf(f, "flowcut-profile %d.%d\n", FC_PROFILE_VERSION, FC_PROFILE_MINOR);
    fputs("# flowcut platform profile: see docs/platform-profile.md and flowcut-calibrate(1).\n", f);
    if (notes != NULL && *notes) {
        fputs("# ", f);
        for (const char *s = notes; *s; s++) {
            fputc(*s, f);
            if (*s == '\n' && s[1] != '\0')
                fputs("# ", f);
        }
        if (notes[strlen(notes) - 1] != '\n')
            fputc('\n', f);
    }
    fputs("source ", f);
    put_word(f, p->source[0] ? p->source : "unknown");
    fprintf(f, "\nnodes %" PRIu32 "\nranks-per-node %" PRIu32 "\nmpi ", p->nodes, p->ranks_per_node);
    put_str(f, p->mpi);
    fputs("\ndate ", f);
    put_word(f, p->date);
    fputs("\nnetwork ", f);
    put_str(f, p->network);
    fprintf(f, "\neps-target %.4g\neager-threshold %" PRIu64 "\n", p->eps_target, p->eager_threshold);
    if (p->ninter)
        fputs("# inter|intra LO HI LATENCY_S PER_BYTE_S EPS: one-way time = LATENCY + size * PER_BYTE\n", f);
    put_segments(f, "inter", p->inter, p->ninter);
    put_segments(f, "intra", p->intra, p->nintra);
    if (p->ncuts)
        fputs("# cut KIND K EPS ALPHA...: each flow moves at 1 / (1 + ALPHA) of its uncontended rate\n", f);
    for (size_t i = 0; i < p->ncuts; i++) {
        const fc__cut *c = &p->cuts[i];
        fprintf(f, "cut %s %" PRIu32 " %.4g", c->kind < NKINDS && kind_names[c->kind] ? kind_names[c->kind] : "none",
                c->k, c->eps);
        for (size_t j = 0; j < c->nalpha; j++)
            fprintf(f, " %.6g", c->alpha[j]);
        fputc('\n', f);
    }
    if (p->has_maxrate) {
        const fc__maxrate *m = &p->maxrate;
        fputs("# maxrate S R_NIC R_CORE_BASE R_CORE_INCR EPS: T = S + k n / min(R_NIC, R_CORE_BASE + (k-1) R_CORE_INCR)\n", f);
        fprintf(f, "maxrate %.10g %.10g %.10g %.10g %.4g\n", m->s, m->r_nic, m->r_core_base, m->r_core_incr,
                m->eps);
    }
    if (p->has_latejoin) {
        fputs("# late-joiner G KMAX EPS: a message joining n older ones on a NIC direction weighs 1 / (1 + G n) there\n", f);
        fprintf(f, "late-joiner %.6g %" PRIu32 " %.4g\n", p->latejoin_g, p->latejoin_kmax, p->latejoin_eps);
    }
    if (p->has_conn) {
        fputs("# connection ORDER WAIT EPS: the messages from one rank to another move one after the other (serial) or side by side\n", f);
        fprintf(f, "connection %s %.4g %.4g\n", p->conn_serial ? "serial" : "parallel", p->conn_wait, p->conn_eps);
    }
    if (p->has_conn_ends) {
        fputs("# connection-ends SHARE EPS: the share of a connection's later message's data time by which the earlier one ends later than alone (1: side by side, ending in order)\n", f);
        fprintf(f, "connection-ends %.4g %.4g\n", p->conn_ends, p->conn_ends_eps);
    }
    if (p->nopp)
        fputs("# opposite K D_IN D_OUT EPS: a message beginning to enter (leave) a node whose output (input) is full with K messages first waits D seconds\n", f);
    for (size_t i = 0; i < p->nopp; i++)
        fprintf(f, "opposite %" PRIu32 " %.6g %.6g %.4g\n", p->opp[i].k, p->opp[i].p_in, p->opp[i].p_out,
                p->opp[i].eps);
    if (p->has_imb) {
        fputs("# imb C B_R T_1 OVERALL_VOL MSGSPERSAMPLE EPS: Hager & Wellein's IMB multi-mode ping-pong model\n", f);
        fprintf(f, "imb %.10g %.10g %.10g %.10g %.10g %.4g\n", p->imb_chunk, p->imb_bandwidth, p->imb_latency,
                p->imb_overall_vol, p->imb_msgs_per_sample, p->imb_eps);
    }
    fflush(f);
    return ferror(f) ? fc__err(FC_EIO, "profile: write error: %s", strerror(errno)) : 0;
}

int fc__profile_write(FILE *f, const fc__profile *p)
{
    return fc__profile_write_notes(f, p, NULL);
}

/* ---- reading ----------------------------------------------------------------------------------- */

typedef struct parser {
    const char *path;
    size_t line;
    char *tok[MAXTOK];
    size_t ntok;
} parser;

/* Splits line in place into tokens; quoted strings lose their quotes and escapes. Returns 0 or -1
 * (unterminated quote, too many fields). */
static int tokenize(parser *ps, char *s)
{
    ps->ntok = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        if (*s == '\0')
            return 0;
        if (ps->ntok == MAXTOK)
            return -1;
        if (*s == '"') {
            char *out = ++s;
            ps->tok[ps->ntok++] = out;
            while (*s != '"') {
                if (*s == '\0')
                    return -1;
                if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
                    s++;
                *out++ = *s++;
            }
            s++;
            /* out is at most at the closing quote, so terminating there never touches what follows. */
            *out = '\0';
            if (*s != '\0' && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
                return -1;
            continue;
        }
        ps->tok[ps->ntok++] = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            s++;
        if (*s)
            *s++ = '\0';
    }
}

static int bad(const parser *ps, const char *what)
{
    return fc__err(FC_ECORRUPT, "%s: line %zu: %s", ps->path, ps->line, what);
}

static int get_double(const parser *ps, size_t i, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(ps->tok[i], &end);
    if (*end != '\0' || end == ps->tok[i] || errno == ERANGE || !isfinite(v))
        return fc__err(FC_ECORRUPT, "%s: line %zu: '%s' is not a finite number", ps->path, ps->line, ps->tok[i]);
    *out = v;
    return 0;
}

static int get_nonneg(const parser *ps, size_t i, double *out)
{
    int rc = get_double(ps, i, out);
    if (rc == 0 && *out < 0)
        rc = fc__err(FC_ECORRUPT, "%s: line %zu: '%s' must not be negative", ps->path, ps->line, ps->tok[i]);
    return rc;
}

static int get_u64(const parser *ps, size_t i, int inf_ok, uint64_t *out)
{
    const char *s = ps->tok[i];
    if (inf_ok && strcmp(s, "inf") == 0) {
        *out = UINT64_MAX;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0' || errno == ERANGE || v == UINT64_MAX)
        return fc__err(FC_ECORRUPT, "%s: line %zu: '%s' is not a byte count", ps->path, ps->line, s);
    *out = v;
    return 0;
}

static int get_u32(const parser *ps, size_t i, uint32_t *out)
{
    uint64_t v;
    int rc = get_u64(ps, i, 0, &v);
    if (rc == 0 && v > UINT32_MAX)
        rc = fc__err(FC_ECORRUPT, "%s: line %zu: '%s' is too large", ps->path, ps->line, ps->tok[i]);
    if (rc == 0)
        *out = (uint32_t)v;
    return rc;
}

static int get_text(const parser *ps, size_t i, char *dst, size_t cap)
{
    size_t n = strlen(ps->tok[i]);
    if (n >= cap)
        return fc__err(FC_ECORRUPT, "%s: line %zu: text longer than %zu bytes", ps->path, ps->line, cap - 1);
    memcpy(dst, ps->tok[i], n + 1);
    return 0;
}

/* The scalar keys, each allowed once. */
#define SCALAR_KEYS(X)                                                                             \
    X(SOURCE, "source")                                                                           \
    X(NODES, "nodes")                                                                             \
    X(RPN, "ranks-per-node")                                                                      \
    X(MPI, "mpi")                                                                                 \
    X(DATE, "date")                                                                               \
    X(NETWORK, "network")                                                                         \
    X(EPS, "eps-target")                                                                          \
    X(EAGER, "eager-threshold")                                                                   \
    X(MAXRATE, "maxrate")                                                                         \
    X(IMB, "imb")                                                                                 \
    X(LATEJOIN, "late-joiner")                                                                    \
    X(CONN, "connection")                                                                        \
    X(CONN_ENDS, "connection-ends")

enum scalar_key {
#define FC__X(name, text) K_##name,
    SCALAR_KEYS(FC__X)
#undef FC__X
    K_NSCALAR
};

static const char *const scalar_names[] = {
#define FC__X(name, text) [K_##name] = text,
    SCALAR_KEYS(FC__X)
#undef FC__X
};

static const size_t scalar_fields[] = {
    [K_SOURCE] = 1, [K_NODES] = 1, [K_RPN] = 1, [K_MPI] = 1, [K_DATE] = 1,
    [K_NETWORK] = 1, [K_EPS] = 1, [K_EAGER] = 1, [K_MAXRATE] = 5, [K_IMB] = 6, [K_LATEJOIN] = 3,
    [K_CONN] = 3, [K_CONN_ENDS] = 2,
};

static int parse_scalar(const parser *ps, int key, fc__profile *p)
{
    switch (key) {
    case K_SOURCE:
        return get_text(ps, 1, p->source, sizeof p->source);
    case K_NODES:
        return get_u32(ps, 1, &p->nodes);
    case K_RPN:
        return get_u32(ps, 1, &p->ranks_per_node);
    case K_MPI:
        return get_text(ps, 1, p->mpi, sizeof p->mpi);
    case K_DATE:
        return get_text(ps, 1, p->date, sizeof p->date);
    case K_NETWORK:
        return get_text(ps, 1, p->network, sizeof p->network);
    case K_EPS:
        return get_nonneg(ps, 1, &p->eps_target);
    case K_EAGER:
        return get_u64(ps, 1, 0, &p->eager_threshold);
    case K_MAXRATE: {
        fc__maxrate *m = &p->maxrate;
        int rc;
        if ((rc = get_nonneg(ps, 1, &m->s)) || (rc = get_nonneg(ps, 2, &m->r_nic)) ||
            (rc = get_nonneg(ps, 3, &m->r_core_base)) || (rc = get_double(ps, 4, &m->r_core_incr)) ||
            (rc = get_nonneg(ps, 5, &m->eps)))
            return rc;
        if (m->r_nic <= 0 || m->r_core_base <= 0)
            return bad(ps, "maxrate: the rates R_NIC and R_CORE_BASE must be positive");
        p->has_maxrate = 1;
        return 0;
    }
    case K_IMB: {
        int rc;
        if ((rc = get_nonneg(ps, 1, &p->imb_chunk)) || (rc = get_nonneg(ps, 2, &p->imb_bandwidth)) ||
            (rc = get_nonneg(ps, 3, &p->imb_latency)) || (rc = get_nonneg(ps, 4, &p->imb_overall_vol)) ||
            (rc = get_nonneg(ps, 5, &p->imb_msgs_per_sample)) || (rc = get_nonneg(ps, 6, &p->imb_eps)))
            return rc;
        if (p->imb_chunk <= 0 || p->imb_bandwidth <= 0 || p->imb_overall_vol <= 0 || p->imb_msgs_per_sample < 1)
            return bad(ps, "imb: C, B_R and OVERALL_VOL must be positive, MSGSPERSAMPLE at least 1");
        p->has_imb = 1;
        return 0;
    }
    case K_LATEJOIN: {
        int rc;
        if ((rc = get_nonneg(ps, 1, &p->latejoin_g)) || (rc = get_u32(ps, 2, &p->latejoin_kmax)) ||
            (rc = get_nonneg(ps, 3, &p->latejoin_eps)))
            return rc;
        if (!isfinite(p->latejoin_g))
            return bad(ps, "late-joiner: G must be finite");
        p->has_latejoin = 1;
        return 0;
    }
    case K_CONN: {
        int rc;
        if (strcmp(ps->tok[1], "serial") != 0 && strcmp(ps->tok[1], "parallel") != 0)
            return bad(ps, "connection: ORDER must be 'serial' or 'parallel'");
        if ((rc = get_nonneg(ps, 2, &p->conn_wait)) || (rc = get_nonneg(ps, 3, &p->conn_eps)))
            return rc;
        if (!(p->conn_wait <= 1))
            return bad(ps, "connection: WAIT must lie in [0, 1]");
        p->conn_serial = strcmp(ps->tok[1], "serial") == 0;
        p->has_conn = 1;
        return 0;
    }
    case K_CONN_ENDS: {
        int rc;
        if ((rc = get_nonneg(ps, 1, &p->conn_ends)) || (rc = get_nonneg(ps, 2, &p->conn_ends_eps)))
            return rc;
        if (!(p->conn_ends <= 1))
            return bad(ps, "connection-ends: SHARE must lie in [0, 1]");
        p->has_conn_ends = 1;
        return 0;
    }
    }
    return bad(ps, "unknown key");
}

static int parse_segment(const parser *ps, int intra, fc__profile *p)
{
    if (ps->ntok != 6)
        return bad(ps, "a segment has five fields: LO HI LATENCY_S PER_BYTE_S EPS");
    uint64_t lo, hi;
    double lat, pb, eps;
    int rc;
    if ((rc = get_u64(ps, 1, 0, &lo)) || (rc = get_u64(ps, 2, 1, &hi)) || (rc = get_nonneg(ps, 3, &lat)) ||
        (rc = get_nonneg(ps, 4, &pb)) || (rc = get_nonneg(ps, 5, &eps)))
        return rc;
    if (hi <= lo)
        return bad(ps, "segment: HI must exceed LO");
    const fc__segment *v = intra ? p->intra : p->inter;
    size_t n = intra ? p->nintra : p->ninter;
    if (n == 0 && lo != 0)
        return bad(ps, "the first segment must start at 0");
    if (n > 0 && v[n - 1].hi != lo)
        return bad(ps, "segments must be contiguous: LO must equal the previous segment's HI");
    return fc__profile_add_segment(p, intra, lo, hi, lat, pb, eps);
}

static int parse_cut(const parser *ps, fc__profile *p)
{
    if (ps->ntok < 4)
        return bad(ps, "cut: expected KIND K EPS ALPHA...");
    int kind = kind_parse(ps->tok[1]);
    if (kind < 0)
        return fc__err(FC_ECORRUPT, "%s: line %zu: unknown conflict kind '%s'", ps->path, ps->line, ps->tok[1]);
    uint32_t k;
    double eps;
    int rc;
    if ((rc = get_u32(ps, 2, &k)) || (rc = get_nonneg(ps, 3, &eps)))
        return rc;
    size_t want = same_direction((uint32_t)kind) ? k : 1;
    if (k < 2 || (!same_direction((uint32_t)kind) && k != 2))
        return bad(ps, "cut: K must be at least 2 (exactly 2 for mixed conflicts)");
    if (ps->ntok - 4 != want)
        return fc__err(FC_ECORRUPT, "%s: line %zu: cut %s %" PRIu32 " needs %zu alpha value%s, found %zu",
                       ps->path, ps->line, ps->tok[1], k, want, want == 1 ? "" : "s", ps->ntok - 4);
    double a[MAXTOK];
    for (size_t i = 0; i < want; i++) {
        if ((rc = get_double(ps, 4 + i, &a[i])))
            return rc;
        if (a[i] <= -1)
            return bad(ps, "cut: an alpha must exceed -1 (the flow's rate is 1 / (1 + alpha))");
    }
    for (size_t i = 0; i < p->ncuts; i++)
        if (p->cuts[i].kind == (uint32_t)kind && p->cuts[i].k == k)
            return bad(ps, "a second cut line for the same kind and K");
    return fc__profile_add_cut(p, (uint32_t)kind, k, a, want, eps);
}

static int parse_opposite(const parser *ps, fc__profile *p)
{
    uint32_t k;
    double pin, pout, eps;
    int rc;
    if (ps->ntok != 5)
        return bad(ps, "opposite has four fields: K D_IN D_OUT EPS");
    if ((rc = get_u32(ps, 1, &k)) || (rc = get_nonneg(ps, 2, &pin)) || (rc = get_nonneg(ps, 3, &pout)) ||
        (rc = get_nonneg(ps, 4, &eps)))
        return rc;
    if (k == 0 || !isfinite(pin) || !isfinite(pout))
        return bad(ps, "opposite: K must be at least 1 and the delays finite");
    for (size_t i = 0; i < p->nopp; i++)
        if (p->opp[i].k == k)
            return bad(ps, "a second opposite line for the same K");
    if (p->nopp >= FC_OPPOSITE_MAX)
        return bad(ps, "more opposite lines than a profile holds");
    return fc__profile_add_opposite(p, k, pin, pout, eps);
}

int fc__profile_read(const char *path, fc__profile **out)
{
    *out = NULL;
    int rc = 0;
    char *buf = NULL;
    size_t cap = 0;
    unsigned seen = 0;
    int minor = -1;
    fc__profile *p = NULL;
    parser ps = {.path = path};
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return fc__err(FC_EIO, "%s: cannot open: %s", path, strerror(errno));
    if ((p = fc__profile_new()) == NULL) {
        rc = FC_ENOMEM;
        goto out;
    }
    ssize_t len;
    errno = 0;
    while ((len = getline(&buf, &cap, f)) >= 0) {
        ps.line++;
        if (memchr(buf, '\0', (size_t)len) != NULL) {
            rc = bad(&ps, "a NUL byte: not a text profile");
            goto out;
        }
        const char *s = buf + strspn(buf, " \t\r\n");
        if (*s == '\0' || *s == '#')
            continue;
        if (tokenize(&ps, buf) != 0) {
            rc = bad(&ps, "an unterminated quoted string or too many fields");
            goto out;
        }
        const char *key = ps.tok[0];
        if (minor < 0) {
            int major, mn, used = 0;
            if (strcmp(key, "flowcut-profile") != 0 || ps.ntok != 2 ||
                sscanf(ps.tok[1], "%d.%d%n", &major, &mn, &used) != 2 || ps.tok[1][used] != '\0' ||
                major < 1 || mn < 0) {
                rc = bad(&ps, "not a flowcut profile (the first record must be 'flowcut-profile 1.N')");
                goto out;
            }
            if (major > FC_PROFILE_VERSION) {
                rc = fc__err(FC_EVERSION, "%s: line %zu: profile format %d.%d is newer than this reader's %d.%d",
                             path, ps.line, major, mn, FC_PROFILE_VERSION, FC_PROFILE_MINOR);
                goto out;
            }
            minor = mn;
            continue;
        }
        if (strcmp(key, "inter") == 0 || strcmp(key, "intra") == 0) {
            rc = parse_segment(&ps, key[3] == 'r' && key[4] == 'a', p);
        } else if (strcmp(key, "cut") == 0) {
            rc = parse_cut(&ps, p);
        } else if (strcmp(key, "opposite") == 0) {
            rc = parse_opposite(&ps, p);
        } else {
            int k = -1;
            for (int i = 0; i < K_NSCALAR; i++)
                if (strcmp(key, scalar_names[i]) == 0)
                    k = i;
            if (k < 0) {
                if (minor > FC_PROFILE_MINOR)
                    continue; /* a key of a newer minor version: skipped, as the format allows */
                rc = fc__err(FC_ECORRUPT, "%s: line %zu: unknown key '%s'", path, ps.line, key);
            } else if (seen & (1u << k)) {
                rc = fc__err(FC_ECORRUPT, "%s: line %zu: '%s' given twice", path, ps.line, key);
            } else if (ps.ntok != 1 + scalar_fields[k]) {
                rc = fc__err(FC_ECORRUPT, "%s: line %zu: '%s' takes %zu field%s, found %zu", path, ps.line, key,
                             scalar_fields[k], scalar_fields[k] == 1 ? "" : "s", ps.ntok - 1);
            } else {
                seen |= 1u << k;
                rc = parse_scalar(&ps, k, p);
            }
        }
        if (rc != 0)
            goto out;
        errno = 0;
    }
    if (ferror(f)) {
        rc = fc__err(FC_EIO, "%s: read error: %s", path, strerror(errno ? errno : EIO));
        goto out;
    }
    if (minor < 0) {
        rc = fc__err(FC_ECORRUPT, "%s: line %zu: empty: no 'flowcut-profile' record", path, ps.line);
        goto out;
    }
    if (p->ninter && p->inter[p->ninter - 1].hi != UINT64_MAX) {
        rc = fc__err(FC_ECORRUPT, "%s: line %zu: the last inter segment must end at inf", path, ps.line);
        goto out;
    }
    if (p->nintra && p->intra[p->nintra - 1].hi != UINT64_MAX) {
        rc = fc__err(FC_ECORRUPT, "%s: line %zu: the last intra segment must end at inf", path, ps.line);
        goto out;
    }
    if (p->source[0] == '\0')
        strcpy(p->source, "unknown");
out:
    free(buf);
    fclose(f);
    if (rc != 0)
        fc__profile_free(p);
    else
        *out = p;
    return rc;
}

int fc__profile_add_opposite(fc__profile *p, uint32_t k, double p_in, double p_out, double eps)
{
    if (k == 0 || !(p_in >= 0) || !(p_out >= 0) || !isfinite(p_in) || !isfinite(p_out))
        return fc__err(FC_EINVAL, "profile: an opposite entry needs k >= 1 and finite delays >= 0");
    size_t i = 0;
    while (i < p->nopp && p->opp[i].k < k)
        i++;
    if (i < p->nopp && p->opp[i].k == k)
        return fc__err(FC_EINVAL, "profile: a second opposite entry for k = %" PRIu32, k);
    if (p->nopp >= FC_OPPOSITE_MAX)
        return fc__err(FC_ENOMEM, "profile: more than %d opposite entries", FC_OPPOSITE_MAX);
    memmove(&p->opp[i + 1], &p->opp[i], (p->nopp - i) * sizeof p->opp[0]);
    p->opp[i].k = k;
    p->opp[i].p_in = p_in;
    p->opp[i].p_out = p_out;
    p->opp[i].eps = eps;
    p->nopp++;
    return 0;
}

double fc__profile_opposite(const fc__profile *p, int out, double k)
{
    if (p->nopp == 0 || !(k > 0))
        return 0;
    double k0 = 0, v0 = 0;
    for (size_t i = 0; i < p->nopp; i++) {
        double k1 = (double)p->opp[i].k, v1 = out ? p->opp[i].p_out : p->opp[i].p_in;
        if (k <= k1)
            return v0 + (v1 - v0) * (k - k0) / (k1 - k0);
        k0 = k1;
        v0 = v1;
    }
    return v0;
}
