/* tests/analyzer/gen-trace.c: writes a small hand-built trace through writer.h from a text
 * description on standard input, so that each case of test-analyzer-cases.sh states its events
 * next to the values it expects.
 *
 * usage: gen-trace DIR < SPEC. SPEC lines (blank lines and # comments ignored):
 *   ranks N                      world size (first line)
 *   node R NAME                  node (and host) name of rank R: the rest of the line, spaces
 *                                included (the format's names are any UTF-8 text without NUL)
 *   host R NAME                  host name of rank R, when it differs from its node's (after
 *                                node): the rest of the line
 *   affinity R LIST              the CPUs rank R may run on, e.g. 0-1 (none recorded otherwise)
 *   ev R KIND T0 T1 PEER TAG BYTES OBJ [status] [site=ID] [b2=N] [comm=ID]
 *                                one event of rank R: KIND as `flowcut dump` names it, T0 and T1 in
 *                                microseconds of the rank's clock, OBJ a request handle (0x.. ok),
 *                                `status` to set FC_EVF_STATUS, ID a call site, N the bytes2 field
 *                                (a collective's bytes received); events of a rank in time order
 *   env R NAME=VALUE             an MPIR_CVAR_* setting of rank R's environment (FC_RK_COLL_ENV)
 *   site R ID OFFSET             call site ID of rank R: one frame at OFFSET (hex) in the module
 *                                /nonexistent/libapp.so, which addr2line cannot open, so the site
 *                                reads "libapp.so+0xOFFSET"
 *   partial R                    leave rank R without its END block
 *   program TEXT                 every rank's program path and its one argument: the rest of the
 *                                line (for strings a report must show as text, whatever they hold)
 *   arg TEXT                     one more argument of every rank's program (after program; up
 *                                to 4): the rest of the line
 *   module PATH                  the module of every call site instead of /nonexistent/libapp.so
 *   topo R KIND IN OUT           rank R's neighbours in communicator 2, a copy of MPI_COMM_WORLD
 *                                (same members, ordinal 1) with a virtual topology: KIND cart,
 *                                graph or distgraph, IN and OUT comma lists of world ranks (null
 *                                for MPI_PROC_NULL, - for an empty list); events name the
 *                                communicator with comm=2
 * Every rank gets an MPI_Init at local 0..1 us first, MPI_COMM_WORLD as comm 0, no clock blocks
 * (so aligned time = local time and the origin is 0). At most 4095 events per rank. Exits 1 with a
 * message on any error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/reader.h>
#include <flowcut/writer.h>

#define MAXR 64
#define MAXE 4096

typedef struct grank {
    char node[256], host[256], affinity[64];
    char env[512]; /* NAME=VALUE entries, each ended by a NUL */
    size_t nenv;
    fc_event *ev; /* MAXE of them, allocated for the ranks that have events */
    size_t n;
    int partial;
    int topo;                       /* FC_TOPO_*, 0: no communicator 2 */
    int64_t nbr[2][MAXR];           /* in and out neighbours */
    unsigned deg[2];
    fc_site sites[8];
    fc_frame frames[8];
    size_t nsites;
} grank;

static grank rk[MAXR];
static char program[512], module_path[512] = "/nonexistent/libapp.so", argbuf[4][256];
static unsigned nargs;

/* The rest of the line after a keyword, without its line break, into out. */
static void rest_of_line(const char *buf, size_t skip, char *out, size_t len)
{
    snprintf(out, len, "%s", buf + skip);
    out[strcspn(out, "\r\n")] = '\0';
}

static void die(int line, const char *what)
{
    fprintf(stderr, "gen-trace: line %d: %s\n", line, what);
    exit(1);
}

/* The NAME of a "node R NAME" or "host R NAME" line (the rest of the line after R and the blanks
 * that follow it) into out; a missing name, or one that does not fit, ends the program. */
static void name_of_line(int line, const char *buf, int at, char *out, size_t len)
{
    size_t n = at > 0 ? strcspn(buf + at, "\r\n") : 0;
    if (n == 0)
        die(line, "a node or host name is missing");
    if (n >= len)
        die(line, "a node or host name is longer than 255 bytes");
    memcpy(out, buf + at, n);
    out[n] = '\0';
}

/* A comma list of world ranks (null: MPI_PROC_NULL; -: empty) into v; returns its length. */
static unsigned parse_list(int line, char *text, int64_t *v, unsigned world)
{
    unsigned k = 0;
    if (strcmp(text, "-") == 0)
        return 0;
    for (char *tok = strtok(text, ","); tok != NULL; tok = strtok(NULL, ",")) {
        char *end;
        long x = strtol(tok, &end, 10);
        if (k == MAXR)
            die(line, "too many neighbours");
        if (strcmp(tok, "null") == 0)
            v[k++] = FC_PEER_NULL;
        else if (*end != '\0' || x < 0 || x >= (long)world)
            die(line, "a neighbour is a world rank or null");
        else
            v[k++] = x;
    }
    return k;
}

static void put_uv(unsigned char *b, size_t *len, uint64_t v)
{
    *len += fc_put_uvarint(b + *len, v);
}

/* The COMMS block of rank i: MPI_COMM_WORLD and, with a topology, communicator 2. */
static int write_comms(fc_writer *w, unsigned i, unsigned n)
{
    static unsigned char b[16 * (4 * MAXR + 16)];
    size_t len = 0;
    put_uv(b, &len, rk[i].topo ? 2 : 1);
    for (uint64_t id = 0; id < (rk[i].topo ? 3u : 1u); id += 2) {
        put_uv(b, &len, id);
        put_uv(b, &len, 0);
        put_uv(b, &len, n);
        for (unsigned k = 0; k < n; k++)
            put_uv(b, &len, k);
        put_uv(b, &len, 0);
        put_uv(b, &len, fc_zigzag(id ? 1 : 0));
    }
    if (rk[i].topo) {
        put_uv(b, &len, 1);
        put_uv(b, &len, 2);
        put_uv(b, &len, (uint64_t)rk[i].topo);
        for (int d = 0; d < 2; d++) {
            put_uv(b, &len, rk[i].deg[d]);
            for (unsigned k = 0; k < rk[i].deg[d]; k++)
                put_uv(b, &len, fc_zigzag(rk[i].nbr[d][k]));
        }
    }
    return fc_writer_block(w, FC_BLK_COMMS, 0, b, len);
}

int main(int argc, char **argv)
{
    char buf[512], kind[64], extra[4][64];
    unsigned n = 0;
    int line = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: gen-trace DIR < SPEC\n");
        return 1;
    }
    while (fgets(buf, sizeof buf, stdin)) {
        unsigned r;
        double t0, t1;
        long long peer, tag;
        unsigned long long bytes, obj;
        char name[64], name2[256];
        int at = -1;
        line++;
        if (buf[0] == '#' || strspn(buf, " \t\r\n") == strlen(buf))
            continue;
        if (sscanf(buf, "ranks %u", &n) == 1) {
            if (n == 0 || n > MAXR)
                die(line, "bad rank count");
            for (unsigned i = 0; i < n; i++)
                snprintf(rk[i].node, sizeof rk[i].node, "node%u", i);
        } else if (sscanf(buf, "node %u %n", &r, &at) == 1) {
            if (r >= n)
                die(line, "rank out of range");
            name_of_line(line, buf, at, rk[r].node, sizeof rk[r].node);
        } else if (sscanf(buf, "env %u %255s", &r, name2) == 2) {
            size_t l = strlen(name2) + 1;
            if (r >= n || rk[r].nenv + l > sizeof rk[r].env)
                die(line, "rank out of range or too many env entries");
            memcpy(rk[r].env + rk[r].nenv, name2, l);
            rk[r].nenv += l;
        } else if (sscanf(buf, "host %u %n", &r, &at) == 1) {
            if (r >= n)
                die(line, "rank out of range");
            name_of_line(line, buf, at, rk[r].host, sizeof rk[r].host);
        } else if (sscanf(buf, "affinity %u %63s", &r, name) == 2) {
            if (r >= n)
                die(line, "rank out of range");
            snprintf(rk[r].affinity, sizeof rk[r].affinity, "%s", name);
        } else if (strncmp(buf, "program ", 8) == 0) {
            rest_of_line(buf, 8, program, sizeof program);
        } else if (strncmp(buf, "arg ", 4) == 0) {
            if (nargs == 4)
                die(line, "too many arguments");
            rest_of_line(buf, 4, argbuf[nargs], sizeof argbuf[nargs]);
            nargs++;
        } else if (strncmp(buf, "module ", 7) == 0) {
            rest_of_line(buf, 7, module_path, sizeof module_path);
        } else if (strncmp(buf, "topo ", 5) == 0) {
            char in[256], out[256];
            if (sscanf(buf, "topo %u %63s %255s %255s", &r, name, in, out) != 4 || r >= n)
                die(line, "expected: topo R KIND IN OUT");
            rk[r].topo = strcmp(name, "cart") == 0        ? FC_TOPO_CART
                         : strcmp(name, "graph") == 0     ? FC_TOPO_GRAPH
                         : strcmp(name, "distgraph") == 0 ? FC_TOPO_DIST_GRAPH
                                                          : 0;
            if (rk[r].topo == 0)
                die(line, "a topology is cart, graph or distgraph");
            rk[r].deg[0] = parse_list(line, in, rk[r].nbr[0], n);
            rk[r].deg[1] = parse_list(line, out, rk[r].nbr[1], n);
        } else if (sscanf(buf, "partial %u", &r) == 1) {
            if (r >= n)
                die(line, "rank out of range");
            rk[r].partial = 1;
        } else if (sscanf(buf, "site %u %llu %llx", &r, &bytes, &obj) == 3) {
            if (r >= n || rk[r].nsites == 8)
                die(line, "rank out of range or too many sites");
            size_t q = rk[r].nsites++;
            rk[r].frames[q] = (fc_frame){.module = 0, .offset = obj};
            rk[r].sites[q] = (fc_site){.id = bytes, .depth = 1, .frames = &rk[r].frames[q]};
        } else {
            int k = sscanf(buf, "ev %u %63s %lf %lf %lld %lld %llu %lli %63s %63s %63s %63s", &r, kind, &t0, &t1, &peer,
                           &tag, &bytes, (long long *)&obj, extra[0], extra[1], extra[2], extra[3]);
            if (k < 8 || r >= n || rk[r].n + 1 >= MAXE)
                die(line, "expected: ev R KIND T0 T1 PEER TAG BYTES OBJ [status] [site=ID]");
            int kn = fc_event_kind_from_name(kind);
            if (kn < 0)
                die(line, "unknown event kind");
            if (rk[r].ev == NULL && (rk[r].ev = calloc(MAXE, sizeof *rk[r].ev)) == NULL)
                die(line, "out of memory");
            fc_event *e = &rk[r].ev[rk[r].n++];
            memset(e, 0, sizeof *e);
            e->kind = (uint32_t)kn;
            e->t0 = (uint64_t)(t0 * 1000 + 0.5);
            e->t1 = (uint64_t)(t1 * 1000 + 0.5);
            e->peer = peer;
            e->tag = tag;
            e->bytes = bytes;
            e->obj = obj;
            for (int x = 0; x + 8 < k; x++) {
                unsigned long long id;
                if (strcmp(extra[x], "status") == 0)
                    e->flags = FC_EVF_STATUS;
                else if (sscanf(extra[x], "site=%llu", &id) == 1)
                    e->site = id;
                else if (sscanf(extra[x], "b2=%llu", &id) == 1)
                    e->bytes2 = id;
                else if (sscanf(extra[x], "comm=%llu", &id) == 1)
                    e->comm = id;
                else
                    die(line, "extra fields are status, site=ID, b2=N and comm=ID");
            }
        }
    }
    for (unsigned i = 0; i < n; i++) {
        char path[4200], fname[64];
        fc_writer *w;
        fc_rank_info info;
        static fc_event all[MAXE + 1];
        fc_module module = {.id = 0, .base = 0x400000, .size = 0x100000, .path = module_path, .build_id = ""};
        const char *args[5] = {program, argbuf[0], argbuf[1], argbuf[2], argbuf[3]};
        memset(&info, 0, sizeof info);
        info.present = (1u << FC_RK_RANK) | (1u << FC_RK_SIZE) | (1u << FC_RK_NODE) | (1u << FC_RK_HOST);
        info.rank = i;
        info.size = n;
        info.node = info.host = rk[i].node;
        if (rk[i].host[0])
            info.host = rk[i].host;
        if (rk[i].affinity[0]) {
            info.present |= 1u << FC_RK_AFFINITY;
            info.affinity = rk[i].affinity;
        }
        if (program[0]) {
            info.present |= (1u << FC_RK_PROGRAM) | (1u << FC_RK_ARGS);
            info.program = program;
            info.argc = 1 + nargs;
            info.argv = args;
        }
        memset(&all[0], 0, sizeof all[0]);
        all[0].kind = FC_EV_MPI_Init;
        all[0].t1 = 1000;
        all[0].peer = FC_PEER_NONE;
        if (rk[i].n > 0) /* a rank without events has no array */
            memcpy(all + 1, rk[i].ev, rk[i].n * sizeof *all);
        snprintf(fname, sizeof fname, FC_TRACE_FILE_FMT, (int)i);
        snprintf(path, sizeof path, "%s/%s", argv[1], fname);
        if (fc_writer_open(path, i, n, 0, 1, 0, &w) < 0 ||
            (rk[i].nenv && fc_writer_rank_coll_env(w, rk[i].env, rk[i].nenv) < 0) || fc_writer_rank(w, &info) < 0 ||
            write_comms(w, i, n) < 0 ||
            (rk[i].nsites && (fc_writer_modules(w, &module, 1) < 0 || fc_writer_sites(w, rk[i].sites, rk[i].nsites) < 0)) ||
            fc_writer_events(w, 0, all, rk[i].n + 1) < 0 ||
            (!rk[i].partial && fc_writer_end(w, 0, 0, 0, 0) < 0) || fc_writer_close(w) < 0) {
            fprintf(stderr, "gen-trace: %s\n", fc_errmsg());
            return 1;
        }
    }
    return 0;
}
