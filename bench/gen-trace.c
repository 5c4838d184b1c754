/* bench/gen-trace.c: writes a large synthetic trace of point-to-point traffic between nodes,
 * through the public writer, so that `make bench` can measure the analyzer on traces of any length.
 *
 * Usage: gen-trace [-n EVENTS] [-r RANKS] [-N NODES] [-c ACTIVE] [-s SEED] DIR
 *
 * RANKS ranks (default 64) are placed on NODES nodes (default 16) in contiguous blocks, each node
 * named by its RANK block ("node00", "node01" ...), so the analyzer sees a cluster without running
 * one. The traffic is a sequence of rounds, as in a bulk-synchronous code: in each round the nodes
 * are paired (node n with n + j or n - j, for a distance j that changes from round to round, so
 * every pair of nodes talks sooner or later), 1 to ACTIVE ranks of every node (default 4, or all
 * of a node's ranks when fewer; the count changes every 8 rounds, and which of the node's ranks
 * rotates) talk to the rank of the same local index on the partner node, and the round is one of:
 *   - an exchange: Irecv from the partner, Isend to it, Waitall completing both (two COMPLETE
 *     records: the receive with its status, then the send), five events per rank;
 *   - a blocking exchange: the lower rank of the pair calls Send then Recv, the upper one Recv then
 *     Send, two events per rank, with rendezvous timing for messages at or above 256 KiB (the send
 *     ends when the transfer does) and eager timing below (the send returns at once).
 * Message sizes cycle through 8 KiB, 64 KiB, 512 KiB and 2 MiB. Every rank of a round starts after
 * its own random delay (up to 20 us) and transfers take bytes / 1.25 GB/s times the number of
 * flows that share the node's link, plus up to 10 % noise; so within a round the flows of a node
 * overlap partially, giving outgoing, incoming and mixed conflicts of several sizes, and rounds are
 * separated by a compute phase so they do not overlap. All ranks share one clock (the CLOCK blocks
 * say offset 0), so every receive completes after its send starts: no clock violation.
 *
 * Generation stops after the round in which the event count reaches EVENTS (default 10^7), then
 * every rank writes MPI_Finalize and its END block. Events are buffered per rank and written in
 * EVENTS blocks of CHUNK events, zlib-compressed as the tracer writes them. Prints one line: the
 * events, messages and bytes written. */
#include <errno.h>
#include <flowcut/event.h>
#include <flowcut/reader.h>
#include <flowcut/writer.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CHUNK 4096                 /* events per EVENTS block, about what the tracer writes */
#define JITTER_NS 20000            /* each rank's random start delay within a round */
#define GAP_NS 50000               /* compute phase between rounds, at least */
#define NS_PER_BYTE 0.8            /* 1.25 GB/s */
#define EAGER_BYTES (256u * 1024u) /* the analyzer's default eager threshold */

static const uint64_t sizes[] = {8192, 65536, 512 * 1024, 2 * 1024 * 1024};

/* One rank being written: its file and the events not yet written. */
typedef struct grank {
    fc_writer *w;
    fc_event buf[CHUNK];
    size_t n;
    uint64_t events;
    uint64_t req; /* next request handle */
} grank;

typedef struct gen {
    uint32_t ranks, nodes, per_node, active;
    uint64_t target, events, messages, bytes;
    uint64_t rng;
    grank *rk;
} gen;

/* xorshift64*: fast, and the same trace for the same seed on every host. */
static uint64_t rnd(gen *g)
{
    g->rng ^= g->rng >> 12;
    g->rng ^= g->rng << 25;
    g->rng ^= g->rng >> 27;
    return g->rng * 0x2545F4914F6CDD1Dull;
}

static uint64_t rnd_below(gen *g, uint64_t n)
{
    return (rnd(g) >> 11) % n;
}

/* Appends one event to rank r, writing a block when the buffer is full. Returns 0 or FC_E*. */
static int emit(gen *g, uint32_t r, uint32_t kind, uint64_t t0, uint64_t t1, int64_t peer,
                int64_t tag, uint64_t bytes, uint64_t obj, uint64_t flags, uint64_t bytes2)
{
    grank *k = &g->rk[r];
    fc_event *e = &k->buf[k->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->t0 = t0;
    e->t1 = t1;
    e->peer = peer;
    e->tag = tag;
    e->bytes = bytes;
    e->obj = obj;
    e->flags = flags;
    e->bytes2 = bytes2;
    k->events++;
    g->events++;
    if (k->n == CHUNK) {
        int rc = fc_writer_events(k->w, 0, k->buf, k->n);
        k->n = 0;
        return rc;
    }
    return 0;
}

static int flush(gen *g, uint32_t r)
{
    grank *k = &g->rk[r];
    int rc = k->n ? fc_writer_events(k->w, 0, k->buf, k->n) : 0;
    k->n = 0;
    return rc;
}

/* Transfer time of one message of b bytes sharing its link with `share` flows, with noise. */
static uint64_t xfer(gen *g, uint64_t b, uint32_t share)
{
    double t = (double)b * NS_PER_BYTE * share;
    return (uint64_t)(t * (1.0 + (double)rnd_below(g, 1000) / 10000.0)) + 2000;
}

/* One round starting at time t; returns the time its last event ends. */
static int round_at(gen *g, uint64_t round, uint64_t t, uint64_t *end)
{
    uint32_t j = 1 + (uint32_t)(round % (g->nodes - 1)); /* node distance this round */
    uint64_t b = sizes[(round / 2) % (sizeof sizes / sizeof *sizes)];
    int blocking = round % 2;
    /* 1 .. ACTIVE ranks of each node, changing every 8 rounds (after each size has been seen in
     * both kinds of round): k of the same-direction conflicts runs through 1 .. ACTIVE. */
    uint32_t active = 1 + (uint32_t)((round / 8) % g->active);
    int64_t tag = (int64_t)(round % 32768);
    uint64_t last = t;
    int rc = 0;

    for (uint32_t lo = 0; lo < g->nodes; lo++) {
        if ((lo / j) % 2 || lo + j >= g->nodes)
            continue; /* lo is the lower node of a pair only when lo / j is even */
        uint32_t hi = lo + j;
        for (uint32_t a = 0; a < active; a++) {
            uint32_t local = (uint32_t)((round + a) % g->per_node);
            uint32_t rl = lo * g->per_node + local, rh = hi * g->per_node + local;
            uint64_t sl = t + rnd_below(g, JITTER_NS), sh = t + rnd_below(g, JITTER_NS);
            uint64_t go = (sl > sh ? sl : sh) + 1000; /* both sides have posted */
            if (!blocking) {
                /* Both directions at once: each node has `active` flows leaving and as many
                 * entering. */
                uint32_t pr[2] = {rl, rh};
                uint64_t st[2] = {sl, sh};
                uint64_t done = go + xfer(g, b, active);
                for (int s = 0; s < 2 && rc == 0; s++) {
                    uint32_t me = pr[s], peer = pr[!s];
                    grank *k = &g->rk[me];
                    uint64_t rq = k->req, sq = k->req + 1, x = done + rnd_below(g, 2000);
                    k->req += 2;
                    rc = emit(g, me, FC_EV_MPI_Irecv, st[s], st[s] + 150, peer, tag, b, rq, 0, 0);
                    if (!rc)
                        rc = emit(g, me, FC_EV_MPI_Isend, st[s] + 300, st[s] + 800, peer, tag, b,
                                  sq, 0, 0);
                    if (!rc)
                        rc = emit(g, me, FC_EV_MPI_Waitall, st[s] + 900, x, FC_PEER_NONE, 0, 0, 0,
                                  FC_EVF_FOUND, 2);
                    if (!rc)
                        rc = emit(g, me, FC_EV_COMPLETE, x, x, peer, tag, b, rq, FC_EVF_STATUS, 0);
                    if (!rc)
                        rc = emit(g, me, FC_EV_COMPLETE, x, x, FC_PEER_NONE, 0, 0, sq, 0, 0);
                    if (x > last)
                        last = x;
                }
                g->messages += 2;
                g->bytes += 2 * b;
            } else {
                /* Lower sends first, upper receives first, then the other way round. */
                int eager = b < EAGER_BYTES;
                uint64_t d1 = go + xfer(g, b, active); /* first message in */
                uint64_t l_send_end = eager ? sl + 1500 : d1;
                uint64_t h_recv_end = d1 + 500;
                uint64_t h_send = h_recv_end + 300 + rnd_below(g, JITTER_NS / 4);
                uint64_t l_recv = l_send_end + 300;
                uint64_t d2 = (h_send > l_recv ? h_send : l_recv) + 1000 + xfer(g, b, active);
                uint64_t h_send_end = eager ? h_send + 1500 : d2;
                rc = emit(g, rl, FC_EV_MPI_Send, sl, l_send_end, rh, tag, b, 0, 0, 0);
                if (!rc)
                    rc = emit(g, rl, FC_EV_MPI_Recv, l_recv, d2 + 500, rh, tag, b, 0, 0, 0);
                if (!rc)
                    rc = emit(g, rh, FC_EV_MPI_Recv, sh, h_recv_end, rl, tag, b, 0, 0, 0);
                if (!rc)
                    rc = emit(g, rh, FC_EV_MPI_Send, h_send, h_send_end, rl, tag, b, 0, 0, 0);
                if (d2 + 500 > last)
                    last = d2 + 500;
                if (h_send_end > last)
                    last = h_send_end;
                g->messages += 2;
                g->bytes += 2 * b;
            }
            if (rc)
                return rc;
        }
    }
    *end = last;
    return 0;
}

/* Opens rank r's file and writes its definitions and MPI_Init. */
static int open_rank(gen *g, const char *dir, uint32_t r)
{
    char path[4200], node[32];
    char name[32];
    fc_rank_info info;
    fc_clock clk[1];
    int rc;

    snprintf(name, sizeof name, FC_TRACE_FILE_FMT, (int)r);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(node, sizeof node, "node%02u", r / g->per_node);
    rc = fc_writer_open(path, r, g->ranks, 1700000000000000000ull, 1000 + r, 0, &g->rk[r].w);
    if (rc)
        return rc;
    memset(&info, 0, sizeof info);
    info.present = (1u << FC_RK_RANK) | (1u << FC_RK_SIZE) | (1u << FC_RK_NODE) |
                   (1u << FC_RK_HOST) | (1u << FC_RK_CORE);
    info.rank = r;
    info.size = g->ranks;
    info.host = info.node = node;
    info.core = (int32_t)(r % g->per_node);
    memset(clk, 0, sizeof clk);
    clk[0].phase = FC_CLOCK_INIT;
    clk[0].uncertainty_ns = 100;
    clk[0].samples = 1;
    clk[0].min_rtt_ns = 200;
    /* No COMMS block: as the tracer, MPI_COMM_WORLD is left for readers to supply. */
    if ((rc = fc_writer_rank(g->rk[r].w, &info)) || (rc = fc_writer_clock(g->rk[r].w, clk, 1)))
        return rc;
    g->rk[r].req = 0x1000;
    return emit(g, r, FC_EV_MPI_Init, 0, 50000, FC_PEER_NONE, 0, 0, 0, 0, 0);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: gen-trace [-n EVENTS] [-r RANKS] [-N NODES] [-c ACTIVE] [-s SEED] DIR\n");
}

/* Parses a positive integer option value; 0 when it is not one. */
static uint64_t num(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    return (errno || end == s || *end || v == 0) ? 0 : (uint64_t)v;
}

int main(int argc, char **argv)
{
    gen g = {
        .ranks = 64, .nodes = 16, .active = 4, .target = 10000000, .rng = 0x9E3779B97F4A7C15ull};
    const char *dir = NULL;
    uint64_t t = 100000, round = 0;
    int rc = 0, status = 1, c_given = 0;

    for (int i = 1; i < argc; i++) {
        uint64_t v = 0;
        if (argv[i][0] != '-' && !dir) {
            dir = argv[i];
            continue;
        }
        if (i + 1 >= argc || strlen(argv[i]) != 2 || !strchr("nrNcs", argv[i][1]) ||
            (v = num(argv[i + 1])) == 0) {
            usage();
            return 2;
        }
        switch (argv[i++][1]) {
        case 'n':
            g.target = v;
            break;
        case 'r':
            g.ranks = (uint32_t)v;
            break;
        case 'N':
            g.nodes = (uint32_t)v;
            break;
        case 'c':
            g.active = (uint32_t)v;
            c_given = 1;
            break;
        case 's':
            g.rng = v * 0x9E3779B97F4A7C15ull | 1;
            break;
        }
    }
    if (!dir) {
        usage();
        return 2;
    }
    if (g.nodes < 2 || g.ranks % g.nodes || g.ranks > 1000000) {
        fprintf(
            stderr,
            "gen-trace: need at least 2 nodes and ranks a multiple of nodes (%u ranks, %u nodes)\n",
            g.ranks, g.nodes);
        return 2;
    }
    g.per_node = g.ranks / g.nodes;
    if (!c_given && g.active > g.per_node)
        g.active = g.per_node; /* the default adapts to small nodes; an explicit -c does not */
    if (g.active > g.per_node) {
        fprintf(stderr, "gen-trace: -c %u is more than the %u ranks of a node\n", g.active,
                g.per_node);
        return 2;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "gen-trace: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    g.rk = calloc(g.ranks, sizeof *g.rk);
    if (!g.rk) {
        fprintf(stderr, "gen-trace: out of memory for %u ranks\n", g.ranks);
        goto out;
    }
    for (uint32_t r = 0; r < g.ranks && rc == 0; r++)
        rc = open_rank(&g, dir, r);
    while (rc == 0 && g.events + g.ranks < g.target) {
        uint64_t end;
        rc = round_at(&g, round++, t, &end);
        t = end + GAP_NS + rnd_below(&g, GAP_NS);
    }
    for (uint32_t r = 0; r < g.ranks && rc == 0; r++) {
        uint64_t f = t + rnd_below(&g, JITTER_NS);
        if ((rc = emit(&g, r, FC_EV_MPI_Finalize, f, f + 1000, FC_PEER_NONE, 0, 0, 0, 0, 0)) == 0 &&
            (rc = flush(&g, r)) == 0)
            rc = fc_writer_end(g.rk[r].w, 0, 0, f + 1000, 0);
    }
    if (rc) {
        fprintf(stderr, "gen-trace: %s\n", fc_errmsg());
        goto out;
    }
    printf("gen-trace: %" PRIu64 " events, %" PRIu64 " messages, %" PRIu64 " bytes, %" PRIu64
           " rounds, %u ranks on %u nodes, %.3f s of traced time in %s\n",
           g.events, g.messages, g.bytes, round, g.ranks, g.nodes, (double)t / 1e9, dir);
    status = 0;
out:
    if (g.rk)
        for (uint32_t r = 0; r < g.ranks; r++)
            if (fc_writer_close(g.rk[r].w) != 0 && status == 0) {
                fprintf(stderr, "gen-trace: %s\n", fc_errmsg());
                status = 1;
            }
    free(g.rk);
    return status;
}
