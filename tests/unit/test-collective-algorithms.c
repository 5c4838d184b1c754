/* tests/unit/test-collective-algorithms.c: the collective layer: the step structure of MPICH's algorithms
 * for small communicators (edges, partners and order derived by hand from the algorithms'
 * descriptions), the algorithm chosen on both sides of every threshold of MPICH 4.0.2's
 * coll_selection.json, and algorithms forced through MPIR_CVAR_*_INTRA_ALGORITHM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <flowcut/error.h>
#include <flowcut/format.h>
#include "collective/collective.h"

#define MAXP 16
#define MAXM 64

/* What one member posted: messages with the step (waits before them) they belong to. */
typedef struct msg {
    int send;
    uint32_t peer;
    uint64_t bytes;
    unsigned step;
} msg;

typedef struct member {
    msg v[MAXM];
    size_t n;
    unsigned waits;
} member;

static int on_post(void *ctx, int send, uint32_t peer, uint64_t bytes)
{
    member *m = ctx;
    assert_true(m->n < MAXM);
    m->v[m->n++] = (msg){send, peer, bytes, m->waits};
    return 0;
}

static int on_wait(void *ctx)
{
    ((member *)ctx)->waits++;
    return 0;
}

/* Expands every member's part of a collective with the algorithm MPICH selects (or alg when it
 * is not FC__CA_AUTO). */
static void expand(unsigned kind, unsigned alg, uint32_t p, uint32_t root, uint64_t n, member *out)
{
    if (alg == FC__CA_AUTO)
        alg = fc__coll_select(kind, p, n, NULL);
    for (uint32_t me = 0; me < p; me++) {
        memset(&out[me], 0, sizeof out[me]);
        fc__coll_sink s = {.post = on_post, .wait = on_wait, .ctx = &out[me]};
        assert_int_equal(fc__coll_expand(kind, alg, p, me, root, n, n, &s), 0);
    }
}

/* The k-th send of a to b pairs with the k-th receive of b from a: every pair of members has as
 * many of one as of the other. */
static void assert_paired(const member *m, uint32_t p)
{
    for (uint32_t a = 0; a < p; a++)
        for (uint32_t b = 0; b < p; b++) {
            size_t s = 0, r = 0;
            for (size_t i = 0; i < m[a].n; i++)
                s += m[a].v[i].send && m[a].v[i].peer == b;
            for (size_t i = 0; i < m[b].n; i++)
                r += !m[b].v[i].send && m[b].v[i].peer == a;
            assert_int_equal(s, r);
        }
}

/* Binomial broadcast from root 3 on 6 members. Relative ranks (rank - 3 mod 6): 0 sends to 4,
 * then 2, then 1 (farthest first); 2 sends to 3; 4 sends to 5. So the edges are 3>1, 3>5, 3>4,
 * 5>0 and 1>2, and every other member first receives once from its parent. */
static void test_bcast_binomial_edges(void **state)
{
    (void)state;
    member m[6];
    static const int parent[6] = {5, 3, 1, -1, 3, 3};
    static const uint32_t root_children[3] = {1, 5, 4};
    expand(FC_EV_MPI_Bcast, FC__CA_AUTO, 6, 3, 100, m);
    assert_int_equal(m[3].n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_true(m[3].v[i].send);
        assert_int_equal(m[3].v[i].peer, root_children[i]);
    }
    for (uint32_t me = 0; me < 6; me++) {
        if (me == 3)
            continue;
        assert_false(m[me].v[0].send);
        assert_int_equal(m[me].v[0].peer, parent[me]);
        for (size_t i = 1; i < m[me].n; i++) {
            assert_true(m[me].v[i].send);
            assert_int_equal(parent[m[me].v[i].peer], me);
        }
        assert_int_equal(m[me].v[0].bytes, 100);
    }
    /* 5 edges in all: a tree on 6 members. */
    size_t edges = 0;
    for (uint32_t me = 0; me < 6; me++)
        for (size_t i = 0; i < m[me].n; i++)
            edges += m[me].v[i].send;
    assert_int_equal(edges, 5);
    assert_paired(m, 6);
}

/* Recursive-doubling allreduce on 8 members: rank 5 exchanges with 5^1 = 4, 5^2 = 7, 5^4 = 1, in
 * steps 0, 1, 2. On 6 members (pof2 = 4, rem = 2): ranks 0 and 2 send to 1 and 3 and sit out;
 * the new ranks 0..3 are 1, 3, 4, 5; rank 4 (new 2) exchanges with new 3 = 5 and new 0 = 1;
 * rank 1 (new 0) receives from 0, exchanges with 3 then 4, and sends the result back to 0. */
static void test_allreduce_recursive_doubling_partners(void **state)
{
    (void)state;
    member m[8];
    expand(FC_EV_MPI_Allreduce, FC__CA_AUTO, 8, 0, 8, m);
    static const uint32_t p5[3] = {4, 7, 1};
    assert_int_equal(m[5].n, 6);
    for (unsigned s = 0; s < 3; s++) {
        assert_true(m[5].v[2 * s].send);
        assert_int_equal(m[5].v[2 * s].peer, p5[s]);
        assert_false(m[5].v[2 * s + 1].send);
        assert_int_equal(m[5].v[2 * s + 1].peer, p5[s]);
        assert_int_equal(m[5].v[2 * s].step, s);
    }
    assert_paired(m, 8);

    expand(FC_EV_MPI_Allreduce, FC__CA_AUTO, 6, 0, 8, m);
    assert_int_equal(m[4].n, 4);
    assert_int_equal(m[4].v[0].peer, 5);
    assert_int_equal(m[4].v[2].peer, 1);
    static const struct { int send; uint32_t peer; } r1[6] = {{0, 0}, {1, 3}, {0, 3}, {1, 4}, {0, 4}, {1, 0}};
    assert_int_equal(m[1].n, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(m[1].v[i].send, r1[i].send);
        assert_int_equal(m[1].v[i].peer, r1[i].peer);
    }
    /* Rank 0 sends its data, then receives the result: two messages, nothing else. */
    assert_int_equal(m[0].n, 2);
    assert_true(m[0].v[0].send);
    assert_false(m[0].v[1].send);
    assert_paired(m, 6);
}

/* Ring allgather on 5 members (blocks of 20000 bytes: 100000 >= 81920, so the ring): p - 1 = 4
 * steps, each sending one block to me + 1 and receiving one from me - 1. */
static void test_allgather_ring_order(void **state)
{
    (void)state;
    member m[5];
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allgather, 5, 20000, NULL), FC__CA_RING);
    expand(FC_EV_MPI_Allgather, FC__CA_AUTO, 5, 0, 20000, m);
    for (uint32_t me = 0; me < 5; me++) {
        assert_int_equal(m[me].n, 8);
        assert_int_equal(m[me].waits, 4);
        for (unsigned s = 0; s < 4; s++) {
            assert_int_equal(m[me].v[2 * s].peer, (me + 1) % 5);
            assert_int_equal(m[me].v[2 * s + 1].peer, (me + 4) % 5);
            assert_int_equal(m[me].v[2 * s].bytes, 20000);
            assert_int_equal(m[me].v[2 * s].step, s);
        }
    }
    assert_paired(m, 5);
}

/* Bruck's all-to-all on 8 members: in step k = 1, 2, 4 each member sends to me + k the blocks
 * whose index has bit k set: 4 of the 8 each time. */
static void test_alltoall_brucks_steps(void **state)
{
    (void)state;
    member m[8];
    expand(FC_EV_MPI_Alltoall, FC__CA_AUTO, 8, 0, 100, m);
    for (uint32_t me = 0; me < 8; me++) {
        assert_int_equal(m[me].n, 6);
        for (unsigned s = 0; s < 3; s++) {
            assert_int_equal(m[me].v[2 * s].peer, (me + (1u << s)) % 8);
            assert_int_equal(m[me].v[2 * s + 1].peer, (me + 8 - (1u << s)) % 8);
            assert_int_equal(m[me].v[2 * s].bytes, 400);
        }
    }
    assert_paired(m, 8);
}

/* All-to-all among 8 ranks on 4 nodes, 2 ranks per node (node = rank / 2): each rank sends one
 * block to each of the 8 - 2 = 6 ranks of the other nodes, for the direct algorithms
 * (scattered and pairwise), so the inter-node bytes are 8 * 6 * the block. */
static void test_alltoall_internode_bytes(void **state)
{
    (void)state;
    member m[8];
    static const uint64_t blocks[2] = {1000, 1u << 20};
    static const unsigned algs[2] = {FC__CA_SCATTERED, FC__CA_PAIRWISE};
    for (int c = 0; c < 2; c++) {
        assert_int_equal(fc__coll_select(FC_EV_MPI_Alltoall, 8, blocks[c], NULL), algs[c]);
        expand(FC_EV_MPI_Alltoall, FC__CA_AUTO, 8, 0, blocks[c], m);
        uint64_t inter = 0;
        for (uint32_t me = 0; me < 8; me++)
            for (size_t i = 0; i < m[me].n; i++)
                if (m[me].v[i].send && m[me].v[i].peer / 2 != me / 2)
                    inter += m[me].v[i].bytes;
        assert_int_equal(inter, 8 * 6 * blocks[c]);
        assert_paired(m, 8);
    }
}

/* Every kind, on 1 to 9 members, with every root: sends and receives pair up. */
static void test_all_kinds_pair(void **state)
{
    (void)state;
    static member m[MAXP];
    static const uint64_t sizes[3] = {8, 4096, 1u << 20};
    for (unsigned k = FC_EV_MPI_Barrier; k <= FC_EV_MPI_Iexscan; k++)
        for (uint32_t p = 1; p <= 9; p++)
            for (int s = 0; s < 3; s++)
                for (uint32_t root = 0; root < p; root++) {
                    for (uint32_t me = 0; me < p; me++) {
                        memset(&m[me], 0, sizeof m[me]);
                        fc__coll_sink sk = {.post = on_post, .wait = on_wait, .ctx = &m[me]};
                        unsigned alg = fc__coll_select(k, p, sizes[s] / 64, NULL);
                        assert_int_equal(fc__coll_expand(k, alg, p, me, root, sizes[s] / 64, sizes[s] / 64, &sk), 0);
                    }
                    assert_paired(m, p);
                }
}

/* Expands every member's part with the layout: members on node[], MPICH's settings s. */
static void expand_on(unsigned kind, uint32_t p, uint32_t root, uint64_t n, const uint32_t *node,
                      const fc__coll_settings *s, member *out, unsigned *alg)
{
    fc__coll_layout lay = {.node = node, .settings = s};
    *alg = fc__coll_select_in(kind, p, n, &lay);
    for (uint32_t me = 0; me < p; me++) {
        memset(&out[me], 0, sizeof out[me]);
        fc__coll_sink sk = {.post = on_post, .wait = on_wait, .ctx = &out[me]};
        assert_int_equal(fc__coll_expand_in(kind, *alg, p, me, root, n, n, &lay, &sk), 0);
    }
    assert_paired(out, p);
}

/* Bytes sent from node a to node b (a != b), summed over the members' sends. */
static uint64_t between(const member *m, uint32_t p, const uint32_t *node, uint32_t a, uint32_t b)
{
    uint64_t sum = 0;
    for (uint32_t me = 0; me < p; me++)
        for (size_t i = 0; i < m[me].n; i++)
            if (m[me].v[i].send && node[me] == a && node[m[me].v[i].peer] == b)
                sum += m[me].v[i].bytes;
    return sum;
}

static int sends_to(const member *m, uint32_t from, uint32_t to)
{
    for (size_t i = 0; i < m[from].n; i++)
        if (m[from].v[i].send && m[from].v[i].peer == to)
            return 1;
    return 0;
}

/* The ch4 device's choice (its JSON table in libmpich 4.0.2) for 8 members, 2 on each of 4 nodes:
 * Bcast alpha below 12288 bytes, beta below 524288 (8 is a power of two), MPIR's algorithm on
 * everyone above; Allreduce alpha at any size; Reduce beta up to 2048 bytes, alpha above; Alltoall
 * MPIR's. One member a node takes MPIR's algorithm; the non-blocking Ibcast takes MPIR's "smp"
 * schedule (its table's choice on such a communicator), which has alpha's messages. */
static void test_ch4_selection(void **state)
{
    (void)state;
    static const uint32_t two[8] = {0, 0, 1, 1, 2, 2, 3, 3}, alone[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const uint32_t six[6] = {5, 5, 7, 7, 9, 9}, twelve[12] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5};
    fc__coll_layout l = {.node = two}, one = {.node = alone}, l6 = {.node = six}, l12 = {.node = twelve};
    assert_int_equal(fc__coll_node_aware(8, two), 1);
    assert_int_equal(fc__coll_node_aware(8, alone), 0);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 8, 12287, &l), FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 8, 12288, &l), FC__CA_COMPOSITION_BETA);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 8, 524287, &l), FC__CA_COMPOSITION_BETA);
    /* Gamma: MPIR's table on all 8, whose own threshold is 524288 inclusive. */
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 8, 524288, &l), FC__CA_SCATTER_RD_ALLGATHER);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 8, 524289, &l), FC__CA_SCATTER_RING_ALLGATHER);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 6, 1u << 24, &l6), FC__CA_COMPOSITION_ALPHA);
    /* 12 members: gamma from 12288 bytes, where MPIR's own binomial limit is 12288 inclusive. */
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 12, 12287, &l12), FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 12, 12288, &l12), FC__CA_BINOMIAL);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 12, 12289, &l12), FC__CA_SCATTER_RING_ALLGATHER);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 8, 100, &one), FC__CA_BINOMIAL);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Ibcast, 8, 100, &l), FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Ibcast, 8, 100, &one), FC__CA_BINOMIAL);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Allreduce, 8, 8, &l), FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Allreduce, 8, 1u << 24, &l), FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Allreduce, 8, 1u << 24, &one), FC__CA_REDUCE_SCATTER_ALLGATHER);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Reduce, 8, 2048, &l), FC__CA_COMPOSITION_BETA);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Reduce, 8, 2056, &l), FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Barrier, 8, 0, &l), FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Alltoall, 8, 1u << 20, &l), FC__CA_PAIRWISE);
    /* MPIR_CVAR_DEVICE_COLLECTIVES=0 leaves MPIR's algorithms, whose barrier is node-aware too. */
    fc__coll_settings s;
    memset(&s, 0, sizeof s);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_DEVICE_COLLECTIVES", "0"), 1);
    l.settings = &s;
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 8, 100, &l), FC__CA_BINOMIAL);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Allreduce, 8, 8, &l), FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Barrier, 8, 0, &l), FC__CA_COMPOSITION_ALPHA);
    memset(&s, 0, sizeof s);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_BCAST_DEVICE_COLLECTIVE", "false"), 1);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Bcast, 8, 100, &l), FC__CA_BINOMIAL);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Allreduce, 8, 8, &l), FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE", "/x.json"), FC_EUNSUPPORTED);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_NOLOCAL", "1"), 1);
    assert_int_equal(s.nolocal, 1);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_NUM_CLIQUES", "4"), 1);
    assert_int_equal(s.cliques, 4);
}

/* The compositions' messages, 8 members 2 a node (nodes 0..3 hold members 2k and 2k + 1), from the
 * code of MPIDI_*_intra_composition_*: a broadcast of n bytes from member 1 (alpha): 1 hands the
 * buffer to its leader 0, the leaders 0, 2, 4, 6 run the binomial tree (0 > 4, 0 > 2, 4 > 6), and
 * each leader gives its node the buffer: n from node 0 to 1 and to 2, n from node 2 to 3, and
 * nothing else between nodes; where MPIR's binomial tree on all 8 sends from node 0 three times
 * (1 > 5, 1 > 3, 1 > 2). An all-reduce of 8 bytes (alpha): each node's second member sends to its
 * leader, the 4 leaders run recursive doubling (2 steps of 8 bytes each way between 0-2, 4-6, then
 * 0-4, 2-6), the leaders send the result back: 4 * 2 * 8 = 64 bytes between nodes, against
 * 8 * 2 * 8 = 128 on all 8 members (their steps at distance 2 and 4 both cross nodes). A barrier:
 * each node's second member reports to its leader, the leaders' dissemination (0 > 2, 0 > 4 at
 * positions 0 > 1, 0 > 2), and no message of a second member leaves its node. */
static void test_ch4_compositions(void **state)
{
    (void)state;
    static const uint32_t node[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    member m[8];
    unsigned alg;
    const uint64_t n = 4096;
    expand_on(FC_EV_MPI_Bcast, 8, 1, n, node, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_COMPOSITION_ALPHA);
    for (uint32_t a = 0; a < 4; a++)
        for (uint32_t b = 0; b < 4; b++)
            if (a != b)
                assert_int_equal(between(m, 8, node, a, b), (a == 0 && (b == 1 || b == 2)) || (a == 2 && b == 3) ? n : 0);
    assert_true(sends_to(m, 1, 0) && sends_to(m, 0, 4) && sends_to(m, 0, 2) && sends_to(m, 4, 6));
    assert_true(sends_to(m, 0, 1) && sends_to(m, 2, 3) && sends_to(m, 4, 5) && sends_to(m, 6, 7));
    /* Beta from member 3: its own node first (3 > 2), then the leaders' binomial tree from 2
     * (positions relative to position 1: 1 > 3, 1 > 2, 3 > 0, so 2 > 6, 2 > 4, 6 > 0), then nodes
     * 0, 2, 3 inside. */
    expand_on(FC_EV_MPI_Bcast, 8, 3, 65536, node, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_COMPOSITION_BETA);
    assert_true(sends_to(m, 3, 2) && sends_to(m, 2, 6) && sends_to(m, 2, 4) && sends_to(m, 6, 0));
    assert_true(!sends_to(m, 2, 3) && sends_to(m, 0, 1) && sends_to(m, 4, 5) && sends_to(m, 6, 7));
    uint64_t inter = 0;
    for (uint32_t a = 0; a < 4; a++)
        for (uint32_t b = 0; b < 4; b++)
            if (a != b)
                inter += between(m, 8, node, a, b);
    assert_int_equal(inter, 3 * 65536);
    expand_on(FC_EV_MPI_Allreduce, 8, 0, 8, node, NULL, m, &alg);
    inter = 0;
    for (uint32_t a = 0; a < 4; a++)
        for (uint32_t b = 0; b < 4; b++)
            if (a != b)
                inter += between(m, 8, node, a, b);
    assert_int_equal(inter, 64);
    assert_true(sends_to(m, 1, 0) && sends_to(m, 0, 2) && sends_to(m, 0, 4) && sends_to(m, 0, 1));
    expand(FC_EV_MPI_Allreduce, FC__CA_AUTO, 8, 0, 8, m);
    inter = 0;
    for (uint32_t a = 0; a < 4; a++)
        for (uint32_t b = 0; b < 4; b++)
            if (a != b)
                inter += between(m, 8, node, a, b);
    assert_int_equal(inter, 128);
    expand_on(FC_EV_MPI_Barrier, 8, 0, 0, node, NULL, m, &alg);
    assert_true(sends_to(m, 1, 0) && sends_to(m, 0, 2) && sends_to(m, 0, 4) && !sends_to(m, 0, 6) && !sends_to(m, 1, 2));
    /* Reduce of 65536 bytes to member 5 (alpha): to leader 0 through the leaders, then 0 > 5. */
    expand_on(FC_EV_MPI_Reduce, 8, 5, 65536, node, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_COMPOSITION_ALPHA);
    assert_true(sends_to(m, 5, 4) && sends_to(m, 0, 5) && !sends_to(m, 4, 5));
    /* Reduce of 1024 bytes to member 5 (beta): the other nodes to their leaders, the leaders to
     * leader 4 (binomial on positions from 2), node 2 to 5: 4 > 5 but not 5 > 4. */
    expand_on(FC_EV_MPI_Reduce, 8, 5, 1024, node, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_COMPOSITION_BETA);
    assert_true(sends_to(m, 4, 5) && !sends_to(m, 5, 4) && sends_to(m, 1, 0) && !sends_to(m, 0, 5));
}

/* Inter-node bytes of every member's sends. */
static uint64_t inter_bytes(const member *m, uint32_t p, const uint32_t *node)
{
    uint64_t sum = 0;
    for (uint32_t me = 0; me < p; me++)
        for (size_t i = 0; i < m[me].n; i++)
            if (m[me].v[i].send && node[me] != node[m[me].v[i].peer])
                sum += m[me].v[i].bytes;
    return sum;
}

/* MPI_Scan on nodes whose members are consecutive: MPIDI_Scan_intra_composition_alpha, by its
 * code. 8 members 2 a node, n bytes: inside each node 2k and 2k + 1 exchange (recursive doubling
 * on 2) and 2k + 1 hands the node's total to 2k; the leaders 0, 2, 4, 6 run recursive doubling
 * (0-2 and 4-6, then 0-4 and 2-6: 8 messages of n between nodes), then pass their prefix along
 * the chain 0 > 2 > 4 > 6 (3 more), and each leader broadcasts in its node: 11 n between nodes,
 * 2 n of them from node 0 to node 1 and from node 2 to node 3, none from node 3 to node 0. MPIR's
 * recursive doubling on all 8 (the nodes not consecutive: 0, 1, 2, 3, 0, 1, 2, 3) crosses nodes
 * at distances 1 and 2 but not 4: 8 x 2 = 16 messages of n. 6 members on nodes 0, 0, 0, 1, 1, 2:
 * node 0 scans among 0, 1, 2 (0-1, then 0-2), 2 sends to 0; the leaders 0, 3, 5 exchange 0-3,
 * then 0-5 (3 has no partner at distance 2 among 3), and the chain 0 > 3 > 5: 6 n between
 * nodes. With the device off MPIR's "smp" scan has the composition's messages; an algorithm
 * forced then is honoured. Exscan has MPIR's recursive doubling everywhere. */
static void test_scan_composition(void **state)
{
    (void)state;
    static const uint32_t node[8] = {0, 0, 1, 1, 2, 2, 3, 3}, mixed[8] = {0, 1, 2, 3, 0, 1, 2, 3};
    static const uint32_t six[6] = {0, 0, 0, 1, 1, 2};
    member m[8];
    unsigned alg;
    const uint64_t n = 1000;
    expand_on(FC_EV_MPI_Scan, 8, 0, n, node, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(inter_bytes(m, 8, node), 11 * n);
    assert_int_equal(between(m, 8, node, 0, 1), 2 * n);
    assert_int_equal(between(m, 8, node, 2, 3), 2 * n);
    assert_int_equal(between(m, 8, node, 1, 0), n);
    assert_int_equal(between(m, 8, node, 3, 0), 0);
    assert_true(sends_to(m, 1, 0) && sends_to(m, 0, 1) && !sends_to(m, 1, 2) && sends_to(m, 4, 6) && sends_to(m, 6, 7));
    expand_on(FC_EV_MPI_Scan, 8, 0, n, mixed, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(inter_bytes(m, 8, mixed), 16 * n);
    expand_on(FC_EV_MPI_Scan, 6, 0, n, six, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(inter_bytes(m, 6, six), 6 * n);
    assert_true(sends_to(m, 2, 0) && sends_to(m, 0, 5) && sends_to(m, 3, 5) && !sends_to(m, 5, 3) && !sends_to(m, 1, 2));
    fc__coll_settings s;
    memset(&s, 0, sizeof s);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_DEVICE_COLLECTIVES", "0"), 1);
    expand_on(FC_EV_MPI_Scan, 8, 0, n, node, &s, m, &alg);
    assert_int_equal(alg, FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_SCAN_INTRA_ALGORITHM", "recursive_doubling"), 1);
    expand_on(FC_EV_MPI_Scan, 8, 0, n, node, &s, m, &alg);
    assert_int_equal(alg, FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(inter_bytes(m, 8, node), 16 * n);
    expand_on(FC_EV_MPI_Exscan, 8, 0, n, node, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_RECURSIVE_DOUBLING);
    /* MPIR_Iscan_intra_sched_smp: the composition's messages without the 4-byte flag. */
    expand_on(FC_EV_MPI_Iscan, 8, 0, n, node, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_COMPOSITION_ALPHA);
    assert_int_equal(inter_bytes(m, 8, node), 11 * n);
    for (uint32_t i = 0; i < 8; i++)
        for (size_t k = 0; k < m[i].n; k++)
            assert_int_equal(m[i].v[k].bytes, n);
    expand_on(FC_EV_MPI_Iscan, 8, 0, n, mixed, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_RECURSIVE_DOUBLING);
}

/* The non-blocking broadcast and reduce on 8 members 2 a node take MPIR's "smp" schedules
 * (MPIR_Ibcast_intra_sched_smp, MPIR_Ireduce_intra_sched_smp), whose messages are those of the
 * blocking compositions alpha and beta (test_ch4_compositions): an Ibcast of 4096 bytes from 1
 * sends n from node 0 to nodes 1 and 2 and from node 2 to node 3, nothing else between nodes; an
 * Ireduce to 5 of any size goes to leader 4 through the leaders, then 4 > 5. A forced algorithm
 * is honoured: MPIR's binomial Ibcast on all 8 sends from node 0 three times (1 > 5, 1 > 3,
 * 1 > 2). */
static void test_nonblocking_smp(void **state)
{
    (void)state;
    static const uint32_t node[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    member m[8];
    unsigned alg;
    const uint64_t n = 4096;
    expand_on(FC_EV_MPI_Ibcast, 8, 1, n, node, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_COMPOSITION_ALPHA);
    for (uint32_t a = 0; a < 4; a++)
        for (uint32_t b = 0; b < 4; b++)
            if (a != b)
                assert_int_equal(between(m, 8, node, a, b), (a == 0 && (b == 1 || b == 2)) || (a == 2 && b == 3) ? n : 0);
    for (uint64_t size = 1024; size <= 1u << 20; size *= 1024) {
        expand_on(FC_EV_MPI_Ireduce, 8, 5, size, node, NULL, m, &alg);
        assert_int_equal(alg, FC__CA_COMPOSITION_BETA);
        assert_true(sends_to(m, 4, 5) && !sends_to(m, 5, 4) && sends_to(m, 1, 0) && !sends_to(m, 0, 5));
    }
    fc__coll_settings s;
    memset(&s, 0, sizeof s);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_IBCAST_INTRA_ALGORITHM", "sched_binomial"), 1);
    expand_on(FC_EV_MPI_Ibcast, 8, 1, n, node, &s, m, &alg);
    assert_int_equal(alg, FC__CA_BINOMIAL);
    assert_int_equal(between(m, 8, node, 0, 1) + between(m, 8, node, 0, 2), 3 * n);
}

/* Every member's part on an inter-communicator of groups {0, 1, 2} (the low one) and {3, 4}, each
 * member a node of its own. */
static void expand_inter_to(unsigned kind, uint32_t root, uint64_t n, const uint64_t *own, const uint64_t *to,
                            member *out, unsigned *alg)
{
    static const uint32_t node[5] = {0, 1, 2, 3, 4};
    fc__coll_layout lay = {.node = node, .inter = 3, .to = to};
    *alg = fc__coll_select_inter(kind, 3, 2, root, n, NULL);
    for (uint32_t me = 0; me < 5; me++) {
        memset(&out[me], 0, sizeof out[me]);
        fc__coll_sink sk = {.post = on_post, .wait = on_wait, .ctx = &out[me]};
        assert_int_equal(fc__coll_expand_in(kind, *alg, 5, me, root, n, own ? own[me] : n, &lay, &sk), 0);
    }
    assert_paired(out, 5);
}

static void expand_inter(unsigned kind, uint32_t root, uint64_t n, const uint64_t *own, member *out, unsigned *alg)
{
    expand_inter_to(kind, root, n, own, NULL, out, alg);
}

static uint64_t sent_bytes(const member *m, uint32_t p)
{
    uint64_t sum = 0;
    for (uint32_t me = 0; me < p; me++)
        for (size_t i = 0; i < m[me].n; i++)
            if (m[me].v[i].send)
                sum += m[me].v[i].bytes;
    return sum;
}

/* The bytes of one edge a > b (0 when there is none). */
static uint64_t edge(const member *m, uint32_t a, uint32_t b)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < m[a].n; i++)
        if (m[a].v[i].send && m[a].v[i].peer == b)
            sum += m[a].v[i].bytes;
    return sum;
}

/* MPICH 4.0.2's inter-communicator algorithms (MPIR_*_inter_*), by their code, on groups A = {0,
 * 1, 2} (low) and B = {3, 4}:
 *   Bcast of 100 from 1: 1 > 3 (the other group's first member), 3 > 4 (its binomial tree): 200.
 *   Reduce of 100 to 4: A reduces to 0 (binomial on 3: 1 > 0, 2 > 0), 0 > 4: 300.
 *   Allreduce of 8: A reduces to 0 (1 > 0, 2 > 0), B to 3 (4 > 3), 0 and 3 exchange, 0 broadcasts
 *   in A (0 > 2, 0 > 1), 3 in B (3 > 4): 8 messages, 64 bytes.
 *   Alltoall, A's members sending 10 bytes to each of B's 2, B's 7 to each of A's 3: pairwise
 *   over max(3, 2) = 3 steps, each pair once each way: 3 x 20 + 2 x 21 = 102 bytes; A's member 2
 *   has nothing to do at step 0 (its partner 2 + 0 is not in B), so it waits twice only.
 *   Gather of 100-byte blocks to 0: B's 200 < 2048, so 4 > 3 (100) and 3 > 0 (200); of 1024-byte
 *   blocks (2048): linear, 3 > 0 and 4 > 0, 1024 each, 0 receiving one after the other.
 *   Scatter of 100-byte blocks from 4: A's 300 < 2048: 4 > 0 (300), then 0's binomial scatter on
 *   3 (0 > 2 and 0 > 1, a block each): 500; of 1024-byte blocks: 4 > 0, 4 > 1, 4 > 2, 1024 each.
 *   Allgather of 10-byte blocks: A gathers to 0 (1 > 0, 2 > 0), B to 3 (4 > 3); 0 > 3 (30), 3 > 4
 *   (30), then 3 > 0 (20), 0 > 2 and 0 > 1 (20 each): 150.
 *   Barrier: dissemination in A (6 messages of 0 bytes) and B (2), then 1 byte 0 > 3, 3 > 4, and
 *   back 3 > 0, 0 > 2, 0 > 1: 5 bytes, 0 sending to 3 before it receives from 3.
 *   Gatherv to 0, B's members sending 30 and 40 bytes: 3 > 0, 4 > 0, all received in one wait.
 *   Scatterv from 4, its counts 5, 6, 7 for A's members: 4 > 0, 4 > 1, 4 > 2: 18 bytes.
 *   Allgatherv of A's blocks of 10, 11, 12 bytes and B's of 20, 21 (no counts: a block is at most
 *   12 bytes): B's blocks to 0 (41), A's to 3 (33), then 0 broadcasts B's 2 x 12 bytes in A
 *   (0 > 2, 0 > 1) and 3 A's 3 x 12 in B (3 > 4): 41 + 33 + 48 + 36 = 158 bytes.
 *   Reduce_scatter of 60 bytes: B reduces to 3 (4 > 3), 3 > 0; A reduces to 0 (1 > 0, 2 > 0),
 *   0 > 3; 0 scatters 20 bytes to 1 and 2, 3 30 bytes to 4: 60 + 60 + 120 + 60 + 40 + 30 = 370. */
static void test_inter_algorithms(void **state)
{
    (void)state;
    member m[5];
    unsigned alg;
    expand_inter(FC_EV_MPI_Bcast, 1, 100, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_REMOTE_SEND_LOCAL_BCAST);
    assert_int_equal(sent_bytes(m, 5), 200);
    assert_int_equal(edge(m, 1, 3), 100);
    assert_int_equal(edge(m, 3, 4), 100);
    assert_int_equal(m[0].n + m[2].n, 0);
    expand_inter(FC_EV_MPI_Reduce, 4, 100, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_LOCAL_REDUCE_REMOTE_SEND);
    assert_int_equal(sent_bytes(m, 5), 300);
    assert_true(edge(m, 1, 0) == 100 && edge(m, 2, 0) == 100 && edge(m, 0, 4) == 100 && m[3].n == 0);
    expand_inter(FC_EV_MPI_Allreduce, 0, 8, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_REDUCE_EXCHANGE_BCAST);
    assert_int_equal(sent_bytes(m, 5), 64);
    assert_true(edge(m, 0, 3) == 8 && edge(m, 3, 0) == 8 && edge(m, 4, 3) == 8 && edge(m, 3, 4) == 8);
    assert_true(edge(m, 0, 1) == 8 && edge(m, 0, 2) == 8 && edge(m, 1, 0) == 8 && edge(m, 2, 0) == 8);
    static const uint64_t own[5] = {20, 20, 20, 21, 21};
    expand_inter(FC_EV_MPI_Alltoall, 0, 0, own, m, &alg);
    assert_int_equal(alg, FC__CA_PAIRWISE_EXCHANGE);
    assert_int_equal(sent_bytes(m, 5), 102);
    for (uint32_t i = 0; i < 3; i++)
        for (uint32_t j = 3; j < 5; j++)
            assert_true(edge(m, i, j) == 10 && edge(m, j, i) == 7);
    assert_int_equal(m[2].waits, 2);
    assert_int_equal(m[0].waits, 3);
    expand_inter(FC_EV_MPI_Gather, 0, 100, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_LOCAL_GATHER_REMOTE_SEND);
    assert_true(sent_bytes(m, 5) == 300 && edge(m, 4, 3) == 100 && edge(m, 3, 0) == 200);
    expand_inter(FC_EV_MPI_Gather, 0, 1024, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_LINEAR);
    assert_true(sent_bytes(m, 5) == 2048 && edge(m, 4, 0) == 1024 && edge(m, 3, 0) == 1024 && m[0].waits == 2);
    expand_inter(FC_EV_MPI_Scatter, 4, 100, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_REMOTE_SEND_LOCAL_SCATTER);
    assert_true(sent_bytes(m, 5) == 500 && edge(m, 4, 0) == 300 && edge(m, 0, 2) == 100 && edge(m, 0, 1) == 100);
    expand_inter(FC_EV_MPI_Scatter, 4, 1024, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_LINEAR);
    assert_true(sent_bytes(m, 5) == 3072 && edge(m, 4, 1) == 1024 && m[3].n == 0);
    expand_inter(FC_EV_MPI_Allgather, 0, 10, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_LOCAL_GATHER_REMOTE_BCAST);
    assert_true(sent_bytes(m, 5) == 150 && edge(m, 0, 3) == 30 && edge(m, 3, 4) == 30 && edge(m, 3, 0) == 20);
    assert_true(edge(m, 0, 1) == 20 && edge(m, 0, 2) == 20);
    expand_inter(FC_EV_MPI_Barrier, 0, 0, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_INTER_BCAST);
    assert_int_equal(sent_bytes(m, 5), 5);
    assert_true(edge(m, 0, 3) == 1 && edge(m, 3, 4) == 1 && edge(m, 3, 0) == 1 && edge(m, 0, 2) == 1);
    size_t to3 = SIZE_MAX, from3 = SIZE_MAX;
    for (size_t i = 0; i < m[0].n; i++) {
        if (m[0].v[i].send && m[0].v[i].peer == 3)
            to3 = i;
        if (!m[0].v[i].send && m[0].v[i].peer == 3)
            from3 = i;
    }
    assert_true(to3 < from3 && from3 != SIZE_MAX);
    static const uint64_t gv[5] = {0, 0, 0, 30, 40}, sv[5] = {0, 0, 0, 0, 18}, counts[3] = {5, 6, 7};
    expand_inter(FC_EV_MPI_Gatherv, 0, 40, gv, m, &alg);
    assert_int_equal(alg, FC__CA_LINEAR);
    assert_true(sent_bytes(m, 5) == 70 && edge(m, 3, 0) == 30 && edge(m, 4, 0) == 40 && m[0].waits == 1);
    assert_true(m[1].n == 0 && m[2].n == 0);
    expand_inter_to(FC_EV_MPI_Scatterv, 4, 7, sv, counts, m, &alg);
    assert_true(sent_bytes(m, 5) == 18 && edge(m, 4, 0) == 5 && edge(m, 4, 1) == 6 && edge(m, 4, 2) == 7);
    static const uint64_t agv[5] = {10, 11, 12, 20, 21};
    expand_inter(FC_EV_MPI_Allgatherv, 0, 12, agv, m, &alg);
    assert_int_equal(alg, FC__CA_REMOTE_GATHER_LOCAL_BCAST);
    assert_int_equal(sent_bytes(m, 5), 158);
    assert_true(edge(m, 3, 0) == 20 && edge(m, 4, 0) == 21 && edge(m, 2, 3) == 12 && edge(m, 0, 1) == 24);
    assert_true(edge(m, 3, 4) == 36);
    expand_inter(FC_EV_MPI_Reduce_scatter, 0, 60, NULL, m, &alg);
    assert_int_equal(alg, FC__CA_REMOTE_REDUCE_LOCAL_SCATTER);
    assert_int_equal(sent_bytes(m, 5), 370);
    assert_true(edge(m, 4, 3) == 60 && edge(m, 3, 0) == 60 && edge(m, 0, 3) == 60 && edge(m, 0, 2) == 20);
    assert_true(edge(m, 3, 4) == 30 && edge(m, 2, 0) == 60);
    /* The thresholds: the leaf group's blocks together below 2048 bytes. */
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Gather, 3, 2, 0, 1023, NULL), FC__CA_LOCAL_GATHER_REMOTE_SEND);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Gather, 3, 2, 0, 1024, NULL), FC__CA_LINEAR);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Gather, 3, 2, 4, 682, NULL), FC__CA_LOCAL_GATHER_REMOTE_SEND);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Gather, 3, 2, 4, 683, NULL), FC__CA_LINEAR);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Iscan, 3, 2, 0, 8, NULL), FC__CA_AUTO);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Ibcast, 3, 2, 0, 8, NULL), FC__CA_REMOTE_SEND_LOCAL_BCAST);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Ibarrier, 3, 2, 0, 0, NULL), FC__CA_INTER_BCAST);
}

/* Every member's part on an inter-communicator whose low group is members 0 .. a - 1, with each
 * member's own bytes, v-form counts (to[me], from[me]: NULL or rows indexing the other group) and
 * the members' nodes. */
static void expand_inter_each(unsigned kind, uint32_t p, uint32_t a, uint32_t root, uint64_t n, const uint64_t *own,
                              const uint64_t *const *to, const uint64_t *const *from, const uint32_t *node,
                              member *out, unsigned *alg)
{
    *alg = fc__coll_select_inter(kind, a, p - a, root, n, NULL);
    for (uint32_t me = 0; me < p; me++) {
        fc__coll_layout lay = {.node = node, .inter = a, .to = to ? to[me] : NULL, .from = from ? from[me] : NULL};
        memset(&out[me], 0, sizeof out[me]);
        fc__coll_sink sk = {.post = on_post, .wait = on_wait, .ctx = &out[me]};
        assert_int_equal(fc__coll_expand_in(kind, *alg, p, me, root, n, own ? own[me] : n, &lay, &sk), 0);
    }
    assert_paired(out, p);
}

/* The position of member a's first post to (send) or from (receive) peer b, SIZE_MAX when none. */
static size_t post_at(const member *m, uint32_t a, int send, uint32_t b)
{
    for (size_t i = 0; i < m[a].n; i++)
        if (m[a].v[i].send == send && m[a].v[i].peer == b)
            return i;
    return SIZE_MAX;
}

/* MPICH 4.0.2's non-blocking inter-communicator schedules (MPIR_I*_inter_sched_*), by their code,
 * on A = {0, 1, 2} (low) and B = {3, 4}, each member a node of its own (so that every group step
 * is MPIR's flat schedule: binomial for these sizes):
 *   Ireduce of 100 to 4: A reduces to 0 (1 > 0, 2 > 0), 0 > 4: 300.
 *   Iallreduce of 8 (remote_reduce_local_bcast): B reduces to 3 (4 > 3), 3 > 0; then A reduces to
 *   0 (1 > 0, 2 > 0), 0 > 3; 0 broadcasts in A (0 > 2, 0 > 1), 3 in B (3 > 4): 8 messages, 64
 *   bytes, as the blocking reduce_exchange_bcast, but 0 posts its receive from 3 before its
 *   group's reduce and sends to 3 after it, and 3 sends to 0 before it receives from 0.
 *   Igather of 100-byte blocks to 0: B's 200 < 2048, short: 4 > 3 (100), 3 > 0 (200); of
 *   1024-byte blocks, long: 3 > 0 and 4 > 0 (1024 each), both receives posted before 0's one wait.
 *   Iscatter of 100-byte blocks from 4: A's 300 < 2048: 4 > 0 (300), then 0 > 2 and 0 > 1 (100
 *   each): 500; of 1024-byte blocks, linear: 4 > 0, 4 > 1, 4 > 2 (1024 each) in one wait.
 *   Igatherv to 0, 3 sending 30 and 4 nothing (the root's counts 30, 0): 3 > 0 only, 30 bytes.
 *   Iscatterv from 4, counts 5, 6, 7 for A: 4 > 0, 4 > 1, 4 > 2: 18 bytes, one wait.
 *   Iallgather of 10-byte blocks: 1 > 0, 2 > 0 (10 each), 4 > 3 (10); 0 > 3 (30) posted with 0's
 *   receive 3 > 0 (20) in one step; 3 > 4 (30), 0 > 2 and 0 > 1 (20 each): 150.
 *   Iallgatherv of A's blocks of 10, 11, 12 and B's of 20, 21 (no counts: a block is at most 12):
 *   3 > 0 (20), 4 > 0 (21), 0 > 3 (10), 1 > 3 (11), 2 > 3 (12), with 0's receives and its send
 *   in one step; then 0 broadcasts 2 x 12 in A (0 > 2, 0 > 1), 3 3 x 12 in B (3 > 4): 158.
 *   Ialltoall, A sending 10 bytes to each of B's members and B 7 to each of A's: 102, as the
 *   blocking one; Ialltoallv where 1 and 4 exchange nothing (A sending 50 bytes, B 35): 85 bytes,
 *   and no post at all between 1 and 4.
 *   Ireduce_scatter of 60: 4 > 3 (60), 3 > 0 (60), 1 > 0, 2 > 0 (60 each), 0 > 3 (60), then 0 >
 *   1 and 0 > 2 (20 each, one wait) and 3 > 4 (30): 370; Ireduce_scatter_block the same bytes,
 *   its scatter in A binomial (0 > 2, then 0 > 1: one wait more at 0). */
static void test_inter_nonblocking(void **state)
{
    (void)state;
    static const uint32_t own_node[5] = {0, 1, 2, 3, 4};
    member m[8];
    unsigned alg;
    expand_inter_each(FC_EV_MPI_Ireduce, 5, 3, 4, 100, NULL, NULL, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_LOCAL_REDUCE_REMOTE_SEND);
    assert_int_equal(sent_bytes(m, 5), 300);
    assert_true(edge(m, 1, 0) == 100 && edge(m, 2, 0) == 100 && edge(m, 0, 4) == 100 && m[3].n == 0);

    expand_inter_each(FC_EV_MPI_Iallreduce, 5, 3, 0, 8, NULL, NULL, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_REMOTE_REDUCE_LOCAL_BCAST);
    assert_int_equal(sent_bytes(m, 5), 64);
    assert_true(edge(m, 0, 3) == 8 && edge(m, 3, 0) == 8 && edge(m, 4, 3) == 8 && edge(m, 3, 4) == 8);
    assert_true(edge(m, 0, 1) == 8 && edge(m, 0, 2) == 8 && edge(m, 1, 0) == 8 && edge(m, 2, 0) == 8);
    assert_true(post_at(m, 0, 0, 3) < post_at(m, 0, 0, 1) && post_at(m, 0, 0, 2) < post_at(m, 0, 1, 3));
    assert_true(post_at(m, 3, 1, 0) < post_at(m, 3, 0, 0));

    expand_inter_each(FC_EV_MPI_Igather, 5, 3, 0, 100, NULL, NULL, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_INTER_SHORT);
    assert_true(sent_bytes(m, 5) == 300 && edge(m, 4, 3) == 100 && edge(m, 3, 0) == 200);
    expand_inter_each(FC_EV_MPI_Igather, 5, 3, 0, 1024, NULL, NULL, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_INTER_LONG);
    assert_true(sent_bytes(m, 5) == 2048 && edge(m, 4, 0) == 1024 && edge(m, 3, 0) == 1024);
    assert_true(m[0].n == 2 && m[0].v[1].step == 0 && m[0].waits == 1);

    expand_inter_each(FC_EV_MPI_Iscatter, 5, 3, 4, 100, NULL, NULL, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_REMOTE_SEND_LOCAL_SCATTER);
    assert_true(sent_bytes(m, 5) == 500 && edge(m, 4, 0) == 300 && edge(m, 0, 2) == 100 && edge(m, 0, 1) == 100);
    expand_inter_each(FC_EV_MPI_Iscatter, 5, 3, 4, 1024, NULL, NULL, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_LINEAR);
    assert_true(sent_bytes(m, 5) == 3072 && edge(m, 4, 1) == 1024 && m[3].n == 0 && m[4].waits == 1);

    static const uint64_t gv_own[5] = {0, 0, 0, 30, 0}, gv_from0[2] = {30, 0};
    const uint64_t *gv_from[5] = {gv_from0, NULL, NULL, NULL, NULL};
    expand_inter_each(FC_EV_MPI_Igatherv, 5, 3, 0, 30, gv_own, NULL, gv_from, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_LINEAR);
    assert_true(sent_bytes(m, 5) == 30 && edge(m, 3, 0) == 30 && m[0].n == 1 && m[4].n == 0);

    static const uint64_t sv_own[5] = {0, 0, 0, 0, 18}, sv_to4[3] = {5, 6, 7};
    const uint64_t *sv_to[5] = {NULL, NULL, NULL, NULL, sv_to4};
    expand_inter_each(FC_EV_MPI_Iscatterv, 5, 3, 4, 7, sv_own, sv_to, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_LINEAR);
    assert_true(sent_bytes(m, 5) == 18 && edge(m, 4, 0) == 5 && edge(m, 4, 1) == 6 && edge(m, 4, 2) == 7);
    assert_int_equal(m[4].waits, 1);

    expand_inter_each(FC_EV_MPI_Iallgather, 5, 3, 0, 10, NULL, NULL, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_LOCAL_GATHER_REMOTE_BCAST);
    assert_true(sent_bytes(m, 5) == 150 && edge(m, 0, 3) == 30 && edge(m, 3, 4) == 30 && edge(m, 3, 0) == 20);
    assert_true(edge(m, 0, 1) == 20 && edge(m, 0, 2) == 20 && edge(m, 1, 0) == 10 && edge(m, 4, 3) == 10);
    assert_int_equal(m[0].v[post_at(m, 0, 1, 3)].step, m[0].v[post_at(m, 0, 0, 3)].step);

    static const uint64_t agv[5] = {10, 11, 12, 20, 21};
    expand_inter_each(FC_EV_MPI_Iallgatherv, 5, 3, 0, 12, agv, NULL, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_REMOTE_GATHER_LOCAL_BCAST);
    assert_int_equal(sent_bytes(m, 5), 158);
    assert_true(edge(m, 3, 0) == 20 && edge(m, 4, 0) == 21 && edge(m, 2, 3) == 12 && edge(m, 0, 1) == 24);
    assert_true(edge(m, 3, 4) == 36 && m[0].v[post_at(m, 0, 1, 3)].step == 0);

    static const uint64_t a2a[5] = {20, 20, 20, 21, 21};
    expand_inter_each(FC_EV_MPI_Ialltoall, 5, 3, 0, 0, a2a, NULL, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_PAIRWISE_EXCHANGE);
    assert_int_equal(sent_bytes(m, 5), 102);
    /* Ialltoallv: A's rows index B, B's index A; 1 sends nothing to 4, 4 nothing to anyone in A
     * but 7 bytes to 0 and 2. */
    static const uint64_t v_a[3][2] = {{10, 10}, {10, 0}, {10, 10}}, v_b[2][3] = {{7, 7, 7}, {7, 0, 7}};
    static const uint64_t fa[3][2] = {{7, 7}, {7, 0}, {7, 7}}, fb[2][3] = {{10, 10, 10}, {10, 0, 10}};
    const uint64_t *vto[5] = {v_a[0], v_a[1], v_a[2], v_b[0], v_b[1]}, *vfrom[5] = {fa[0], fa[1], fa[2], fb[0], fb[1]};
    static const uint64_t vown[5] = {20, 10, 20, 21, 14};
    expand_inter_each(FC_EV_MPI_Ialltoallv, 5, 3, 0, 0, vown, vto, vfrom, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_PAIRWISE_EXCHANGE);
    assert_int_equal(sent_bytes(m, 5), 85);
    assert_true(post_at(m, 1, 1, 4) == SIZE_MAX && post_at(m, 1, 0, 4) == SIZE_MAX && post_at(m, 4, 1, 1) == SIZE_MAX);

    expand_inter_each(FC_EV_MPI_Ireduce_scatter, 5, 3, 0, 60, NULL, NULL, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_REMOTE_REDUCE_LOCAL_SCATTERV);
    assert_int_equal(sent_bytes(m, 5), 370);
    assert_true(edge(m, 4, 3) == 60 && edge(m, 3, 0) == 60 && edge(m, 0, 3) == 60 && edge(m, 0, 2) == 20);
    assert_true(edge(m, 3, 4) == 30 && edge(m, 2, 0) == 60);
    assert_true(post_at(m, 0, 0, 3) < post_at(m, 0, 0, 1));
    unsigned linear_waits = m[0].waits;
    expand_inter_each(FC_EV_MPI_Ireduce_scatter_block, 5, 3, 0, 60, NULL, NULL, NULL, own_node, m, &alg);
    assert_int_equal(alg, FC__CA_REMOTE_REDUCE_LOCAL_SCATTERV);
    assert_int_equal(sent_bytes(m, 5), 370);
    assert_true(edge(m, 0, 2) == 20 && edge(m, 0, 1) == 20 && edge(m, 3, 4) == 30);
    assert_int_equal(m[0].waits, linear_waits + 1);

    /* The thresholds, as the blocking Gather's and Scatter's: the leaf group's blocks together
     * below 2048 bytes. */
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Igather, 3, 2, 0, 1023, NULL), FC__CA_INTER_SHORT);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Igather, 3, 2, 0, 1024, NULL), FC__CA_INTER_LONG);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Iscatter, 3, 2, 4, 682, NULL), FC__CA_REMOTE_SEND_LOCAL_SCATTER);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Iscatter, 3, 2, 4, 683, NULL), FC__CA_LINEAR);

    /* MPIR_CVAR_<COLL>_INTER_ALGORITHM: a named algorithm of the collective's is forced, "auto"
     * and "sched_auto" give the choice back, others are refused. */
    fc__coll_settings s;
    memset(&s, 0, sizeof s);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_IGATHER_INTER_ALGORITHM", "sched_long"), 1);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Igather, 3, 2, 0, 10, &s), FC__CA_INTER_LONG);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_IGATHER_INTER_ALGORITHM", "sched_auto"), 1);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Igather, 3, 2, 0, 10, &s), FC__CA_INTER_SHORT);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_ISCATTER_INTER_ALGORITHM", "sched_linear"), 1);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Iscatter, 3, 2, 4, 10, &s), FC__CA_LINEAR);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_GATHER_INTER_ALGORITHM", "linear"), 1);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Gather, 3, 2, 0, 10, &s), FC__CA_LINEAR);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_IBCAST_INTER_ALGORITHM", "sched_flat"), 1);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_IALLREDUCE_INTER_ALGORITHM", "sched_remote_reduce_local_bcast"), 1);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Iallreduce, 3, 2, 0, 8, &s), FC__CA_REMOTE_REDUCE_LOCAL_BCAST);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_GATHER_INTER_ALGORITHM", "nb"), FC_EUNSUPPORTED);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_IGATHER_INTER_ALGORITHM", "sched_linear"), FC_EUNSUPPORTED);
    assert_int_equal(fc__coll_select_inter(FC_EV_MPI_Gather, 3, 2, 0, 10, &s), FC__CA_LINEAR);
}

/* Groups whose members share nodes: A = {0, 1, 2, 3} on nodes 0, 1, 0, 1 and B = {4, 5, 6, 7} on
 * nodes 2, 3, 2, 3. The non-blocking group reduce is MPICH's "smp" schedule (composition beta):
 * in A, 3 > 1 (its node's leader), 1 > 0 (the leaders), 2 > 0 (the root's node); in B likewise
 * 7 > 5, 5 > 4, 6 > 4, numbered from B's first member. The blocking Allreduce's group reduce is
 * MPIR's binomial tree whatever the nodes: 1 > 0, 3 > 2, 2 > 0. The blocking Reduce_scatter's
 * reduces are the same; their scatters below. */
static void test_inter_groups_sharing_nodes(void **state)
{
    (void)state;
    static const uint32_t node[8] = {0, 1, 0, 1, 2, 3, 2, 3};
    member m[8];
    unsigned alg;
    expand_inter_each(FC_EV_MPI_Iallreduce, 8, 4, 0, 8, NULL, NULL, NULL, node, m, &alg);
    assert_int_equal(alg, FC__CA_REMOTE_REDUCE_LOCAL_BCAST);
    assert_true(edge(m, 3, 1) == 8 && edge(m, 1, 0) == 8 && edge(m, 2, 0) == 8 && edge(m, 3, 2) == 0);
    assert_true(edge(m, 7, 5) == 8 && edge(m, 5, 4) == 8 && edge(m, 6, 4) == 8 && edge(m, 7, 6) == 0);
    assert_true(edge(m, 0, 4) == 8 && edge(m, 4, 0) == 8);
    expand_inter_each(FC_EV_MPI_Allreduce, 8, 4, 0, 8, NULL, NULL, NULL, node, m, &alg);
    assert_int_equal(alg, FC__CA_REDUCE_EXCHANGE_BCAST);
    assert_true(edge(m, 3, 2) == 8 && edge(m, 3, 1) == 0 && edge(m, 7, 6) == 8);
    /* Reduce_scatter_block of 64 bytes scatters its 16-byte blocks binomially in each group of 4
     * (MPIR_Scatter): 0 > 2 two blocks, 0 > 1 and 2 > 3 one; Reduce_scatter linearly
     * (MPIR_Scatterv): 0 > 1, 0 > 2, 0 > 3 one block each. */
    expand_inter_each(FC_EV_MPI_Reduce_scatter_block, 8, 4, 0, 64, NULL, NULL, NULL, node, m, &alg);
    assert_true(edge(m, 0, 2) == 32 && edge(m, 0, 1) == 16 && edge(m, 2, 3) == 16 && edge(m, 0, 3) == 0);
    assert_true(edge(m, 4, 6) == 32 && edge(m, 6, 7) == 16);
    expand_inter_each(FC_EV_MPI_Reduce_scatter, 8, 4, 0, 64, NULL, NULL, NULL, node, m, &alg);
    assert_true(edge(m, 0, 2) == 16 && edge(m, 0, 1) == 16 && edge(m, 0, 3) == 16 && edge(m, 2, 3) == 0);
}

/* MPICH 4.0.2's table, on both sides of each threshold. */
static void test_selection_thresholds(void **state)
{
    (void)state;
    /* Bcast: binomial below 8 members or up to 12288 bytes; power-of-two sizes up to 524288
     * bytes scatter + recursive doubling; the ring otherwise. Ibcast's short limit is strict. */
    assert_int_equal(fc__coll_select(FC_EV_MPI_Bcast, 16, 12288, NULL), FC__CA_BINOMIAL);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Bcast, 16, 12289, NULL), FC__CA_SCATTER_RD_ALLGATHER);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Bcast, 16, 524288, NULL), FC__CA_SCATTER_RD_ALLGATHER);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Bcast, 16, 524289, NULL), FC__CA_SCATTER_RING_ALLGATHER);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Bcast, 12, 12289, NULL), FC__CA_SCATTER_RING_ALLGATHER);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Bcast, 7, 1u << 24, NULL), FC__CA_BINOMIAL);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Bcast, 8, 1u << 24, NULL), FC__CA_SCATTER_RING_ALLGATHER);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Ibcast, 16, 12287, NULL), FC__CA_BINOMIAL);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Ibcast, 16, 12288, NULL), FC__CA_SCATTER_RD_ALLGATHER);
    /* Allreduce on 8: recursive doubling up to 8 bytes or fewer than 8 elements (of 8 bytes). */
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allreduce, 8, 8, NULL), FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allreduce, 8, 56, NULL), FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allreduce, 8, 64, NULL), FC__CA_REDUCE_SCATTER_ALLGATHER);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Iallreduce, 8, 2048, NULL), FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Iallreduce, 8, 2056, NULL), FC__CA_REDUCE_SCATTER_ALLGATHER);
    /* Reduce: binomial up to 2048 bytes. */
    assert_int_equal(fc__coll_select(FC_EV_MPI_Reduce, 8, 2048, NULL), FC__CA_BINOMIAL);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Reduce, 8, 2056, NULL), FC__CA_REDUCE_SCATTER_GATHER);
    /* Allgather: totals below 524288 (power of two) or 81920 (other sizes). */
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allgather, 8, 65535, NULL), FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allgather, 8, 65536, NULL), FC__CA_RING);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allgather, 6, 13653, NULL), FC__CA_BRUCKS);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allgather, 6, 13654, NULL), FC__CA_RING);
    /* Alltoall: Bruck for 8 members or more up to 256 bytes a peer (2048 for Ialltoall),
     * scattered up to 32768, pairwise above; fewer than 8 members never Bruck. */
    assert_int_equal(fc__coll_select(FC_EV_MPI_Alltoall, 8, 256, NULL), FC__CA_BRUCKS);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Alltoall, 8, 257, NULL), FC__CA_SCATTERED);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Alltoall, 7, 256, NULL), FC__CA_SCATTERED);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Alltoall, 8, 32768, NULL), FC__CA_SCATTERED);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Alltoall, 8, 32769, NULL), FC__CA_PAIRWISE);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Ialltoall, 8, 2048, NULL), FC__CA_BRUCKS);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Ialltoall, 8, 2049, NULL), FC__CA_SCATTERED);
    /* Reduce_scatter: recursive halving for power-of-two sizes and totals below 524288. */
    assert_int_equal(fc__coll_select(FC_EV_MPI_Reduce_scatter, 8, 524287, NULL), FC__CA_RECURSIVE_HALVING);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Reduce_scatter, 8, 524288, NULL), FC__CA_PAIRWISE);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Reduce_scatter, 6, 100, NULL), FC__CA_PAIRWISE);
    /* Communicator constructors synchronise like a barrier. */
    assert_int_equal(fc__coll_select(FC_EV_MPI_Comm_split, 8, 0, NULL), FC__CA_K_DISSEMINATION);
}

/* MPIR_CVAR_<COLL>_INTRA_ALGORITHM forces an algorithm the expansion models; others are refused
 * and leave MPICH's selection in place. */
static void test_cvar_forcing(void **state)
{
    (void)state;
    fc__coll_settings s;
    memset(&s, 0, sizeof s);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM", "pairwise"), 1);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Alltoall, 8, 100, &s), FC__CA_PAIRWISE);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Ialltoall, 8, 100, &s), FC__CA_BRUCKS);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_BCAST_INTRA_ALGORITHM", "scatter_ring_allgather"), 1);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Bcast, 8, 100, &s), FC__CA_SCATTER_RING_ALLGATHER);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_BCAST_INTRA_ALGORITHM", "auto"), 1);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Bcast, 8, 100, &s), FC__CA_BINOMIAL);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", "nb"), FC_EUNSUPPORTED);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allreduce, 8, 8, &s), FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM", "sched_reduce_scatter_allgather"), 1);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Iallreduce, 8, 8, &s), FC__CA_REDUCE_SCATTER_ALLGATHER);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allreduce, 8, 8, &s), FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM", "pairwise"), 1);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Reduce_scatter_block, 8, 100, &s), FC__CA_PAIRWISE);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Reduce_scatter, 8, 100, &s), FC__CA_RECURSIVE_HALVING);
    /* Recursive doubling needs a power of two: MPICH falls back to its table on 6 members. */
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM", "recursive_doubling"), 1);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allgather, 8, 1u << 20, &s), FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(fc__coll_select(FC_EV_MPI_Allgather, 6, 100, &s), FC__CA_BRUCKS);
    /* Variables that do not choose an algorithm change nothing. */
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE", "1"), 0);
    assert_int_equal(fc__coll_setting(&s, "PATH", "/bin"), 0);
    assert_int_equal(fc__coll_setting(&s, "MPIR_CVAR_ALLTOAL_INTRA_ALGORITHM", "pairwise"), 0);
    assert_string_equal(fc__coll_alg_name(FC__CA_SCATTER_RD_ALLGATHER), "scatter_recursive_doubling_allgather");
}

/* The neighbourhood collectives (MPICH 4.0.2's linear schedule): sends to the out-neighbours in
 * order, receives from the in-neighbours (reversed for Neighbor_alltoall), one wait; MPI_PROC_NULL
 * moves nothing; per-position bytes from the counts when given, the totals spread evenly else. */
static void test_neighbor_linear(void **state)
{
    (void)state;
    /* A periodic ring of 2: each member's two neighbours are the other one. */
    const uint32_t other[2][2] = {{1, 1}, {0, 0}};
    member m[3];
    for (uint32_t me = 0; me < 2; me++) {
        fc__coll_nbrs nb = {.indeg = 2, .outdeg = 2, .src = other[me], .dst = other[me]};
        uint64_t to[2] = {8, 24}, from[2] = {24, 8};
        fc__coll_layout lay = {.nbrs = &nb, .received = 32, .to = to, .from = from};
        memset(&m[me], 0, sizeof m[me]);
        fc__coll_sink s = {.post = on_post, .wait = on_wait, .ctx = &m[me]};
        assert_int_equal(fc__coll_select_in(FC_EV_MPI_Neighbor_alltoallv, 2, 32, &lay), FC__CA_LINEAR);
        assert_int_equal(fc__coll_expand_in(FC_EV_MPI_Neighbor_alltoallv, FC__CA_LINEAR, 2, me, 0, 32, 32, &lay, &s), 0);
        assert_int_equal(m[me].n, 4);
        assert_int_equal(m[me].waits, 1);
        assert_true(m[me].v[0].send && m[me].v[0].bytes == 8 && m[me].v[1].send && m[me].v[1].bytes == 24);
        /* The v form receives in order: position 0 first. */
        assert_true(!m[me].v[2].send && m[me].v[2].bytes == 24 && !m[me].v[3].send && m[me].v[3].bytes == 8);
    }
    assert_paired(m, 2);
    /* Neighbor_alltoall of 64 bytes to each of 2 positions: receives in reverse order. */
    fc__coll_nbrs nb = {.indeg = 2, .outdeg = 2, .src = other[0], .dst = other[0]};
    fc__coll_layout lay = {.nbrs = &nb, .received = 128};
    memset(&m[0], 0, sizeof m[0]);
    fc__coll_sink s0 = {.post = on_post, .wait = on_wait, .ctx = &m[0]};
    assert_int_equal(fc__coll_expand_in(FC_EV_MPI_Neighbor_alltoall, FC__CA_LINEAR, 2, 0, 0, 128, 128, &lay, &s0), 0);
    assert_int_equal(m[0].n, 4);
    for (size_t i = 0; i < 4; i++)
        assert_true(m[0].v[i].peer == 1 && m[0].v[i].bytes == 64 && m[0].v[i].send == (i < 2));
    /* A line of 3 without wrap-around: member 0's negative neighbour is MPI_PROC_NULL. */
    const uint32_t ends[3][2] = {{FC__COLL_NO_PEER, 1}, {0, 2}, {1, FC__COLL_NO_PEER}};
    for (uint32_t me = 0; me < 3; me++) {
        fc__coll_nbrs line = {.indeg = 2, .outdeg = 2, .src = ends[me], .dst = ends[me]};
        fc__coll_layout ll = {.nbrs = &line, .received = 16};
        memset(&m[me], 0, sizeof m[me]);
        fc__coll_sink s = {.post = on_post, .wait = on_wait, .ctx = &m[me]};
        assert_int_equal(fc__coll_expand_in(FC_EV_MPI_Ineighbor_allgather, FC__CA_LINEAR, 3, me, 0, 16, 16, &ll, &s), 0);
        assert_int_equal(m[me].n, me == 1 ? 4 : 2);
        for (size_t i = 0; i < m[me].n; i++)
            assert_int_equal(m[me].v[i].bytes, 8);
    }
    assert_paired(m, 3);
    /* Without the topology there is no expansion. */
    fc__coll_layout none = {0};
    assert_int_equal(fc__coll_expand_in(FC_EV_MPI_Neighbor_alltoall, FC__CA_LINEAR, 2, 0, 0, 8, 8, &none, &s0),
                     FC_EUNSUPPORTED);
}

/* Reductions with operations of the program's own: the algorithm MPICH picks, and the messages of
 * the non-commutative ones. */
static void test_noncommutative(void **state)
{
    (void)state;
    fc__coll_layout user = {.op = FC_EVF_USER_OP}, nc = {.op = FC_EVF_USER_OP | FC_EVF_NONCOMMUTATIVE};
    /* 65536 bytes on 8: Rabenseifner for a predefined operation, recursive doubling for the user's. */
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Allreduce, 8, 65536, NULL), FC__CA_REDUCE_SCATTER_ALLGATHER);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Allreduce, 8, 65536, &user), FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Iallreduce, 8, 65536, &nc), FC__CA_RECURSIVE_DOUBLING);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Reduce, 8, 8192, NULL), FC__CA_REDUCE_SCATTER_GATHER);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Reduce, 8, 8192, &nc), FC__CA_BINOMIAL);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Reduce_scatter_block, 8, 8192, &user), FC__CA_RECURSIVE_HALVING);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Reduce_scatter_block, 8, 8192, &nc), FC__CA_NONCOMMUTATIVE);
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Reduce_scatter_block, 6, 8192, &nc), FC__CA_RECURSIVE_DOUBLING);
    nc.irregular = 1;
    assert_int_equal(fc__coll_select_in(FC_EV_MPI_Reduce_scatter, 8, 8192, &nc), FC__CA_RECURSIVE_DOUBLING);
    nc.irregular = 0;
    /* Reduce to root 5 on 8: the tree rooted at 0 (1>0 3>2 5>4 7>6, 2>0 6>4, 4>0), then 0>5. */
    member m[8];
    static const uint32_t parent[8] = {UINT32_MAX, 0, 0, 2, 0, 4, 4, 6};
    for (uint32_t me = 0; me < 8; me++) {
        memset(&m[me], 0, sizeof m[me]);
        fc__coll_sink s = {.post = on_post, .wait = on_wait, .ctx = &m[me]};
        assert_int_equal(fc__coll_expand_in(FC_EV_MPI_Reduce, FC__CA_BINOMIAL, 8, me, 5, 100, 100, &nc, &s), 0);
        size_t sends = 0;
        for (size_t i = 0; i < m[me].n; i++)
            if (m[me].v[i].send) {
                sends++;
                assert_int_equal(m[me].v[i].peer, me == 0 ? 5 : parent[me]);
            }
        assert_int_equal(sends, 1);
    }
    assert_paired(m, 8);
    /* Reduce_scatter_block of 8192 bytes on 8, member 5: partners 4, 7, 1 with 4096, 2048, 1024. */
    static const uint32_t partner[3] = {4, 7, 1};
    for (uint32_t me = 0; me < 8; me++) {
        memset(&m[me], 0, sizeof m[me]);
        fc__coll_sink s = {.post = on_post, .wait = on_wait, .ctx = &m[me]};
        assert_int_equal(
            fc__coll_expand_in(FC_EV_MPI_Reduce_scatter_block, FC__CA_NONCOMMUTATIVE, 8, me, 0, 8192, 8192, &nc, &s), 0);
    }
    assert_int_equal(m[5].n, 6);
    for (unsigned k = 0; k < 3; k++)
        assert_true(m[5].v[2 * k].peer == partner[k] && m[5].v[2 * k].bytes == 4096u >> k && m[5].v[2 * k].step == k);
    assert_paired(m, 8);
    /* Recursive doubling on 6 members, 600 bytes (blocks of 100), worked out from MPICH's
     * MPIR_Reduce_scatter_intra_recursive_doubling. Mask 1: pairs 0-1, 2-3, 4-5, each sending the 5
     * blocks outside its own. Mask 2: 0-2 and 1-3 swap the 4 blocks outside their pairs; 4 and 5
     * have no partner (6, 7). Mask 4: 0-4 and 1-5: 0 sends the 2 blocks outside {0..3}, 4 sends
     * the 4 outside {4, 5}; 2 and 3 have no partner, and since {4..7} runs past member 5, the
     * subtree {0..3} forwards: 2 of its members (6 - 0 - 4) have the data, 0 sends its 400 bytes
     * to 2 and 1 to 3. */
    struct { uint32_t me, step, peer; int send; uint64_t bytes; } want[] = {
        {0, 0, 1, 1, 500}, {0, 0, 1, 0, 500}, {0, 1, 2, 1, 400}, {0, 1, 2, 0, 400},
        {0, 2, 4, 1, 200}, {0, 2, 4, 0, 400}, {0, 3, 2, 1, 400},
        {2, 0, 3, 1, 500}, {2, 0, 3, 0, 500}, {2, 1, 0, 1, 400}, {2, 1, 0, 0, 400}, {2, 2, 0, 0, 400},
        {4, 0, 5, 1, 500}, {4, 0, 5, 0, 500}, {4, 1, 0, 1, 400}, {4, 1, 0, 0, 200},
    };
    size_t count[6] = {7, 0, 5, 0, 4, 0};
    for (uint32_t me = 0; me < 6; me++) {
        memset(&m[me], 0, sizeof m[me]);
        fc__coll_sink s = {.post = on_post, .wait = on_wait, .ctx = &m[me]};
        assert_int_equal(
            fc__coll_expand_in(FC_EV_MPI_Reduce_scatter_block, FC__CA_RECURSIVE_DOUBLING, 6, me, 0, 600, 600, &nc, &s),
            0);
    }
    for (uint32_t me = 0; me < 6; me += 2)
        assert_int_equal(m[me].n, count[me]);
    for (size_t i = 0, at = 0; i < sizeof want / sizeof *want; i++, at++) {
        if (i > 0 && want[i].me != want[i - 1].me)
            at = 0;
        const msg *g = &m[want[i].me].v[at];
        assert_true(g->step == want[i].step && g->peer == want[i].peer && g->send == want[i].send &&
                    g->bytes == want[i].bytes);
    }
    /* Members 1, 3 and 5 mirror 0, 2 and 4; every send has its receive. */
    assert_int_equal(m[1].n, 7);
    assert_int_equal(m[3].n, 5);
    assert_int_equal(m[5].n, 4);
    assert_paired(m, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bcast_binomial_edges),
        cmocka_unit_test(test_allreduce_recursive_doubling_partners),
        cmocka_unit_test(test_allgather_ring_order),
        cmocka_unit_test(test_alltoall_brucks_steps),
        cmocka_unit_test(test_alltoall_internode_bytes),
        cmocka_unit_test(test_all_kinds_pair),
        cmocka_unit_test(test_selection_thresholds),
        cmocka_unit_test(test_cvar_forcing),
        cmocka_unit_test(test_ch4_selection),
        cmocka_unit_test(test_ch4_compositions),
        cmocka_unit_test(test_scan_composition),
        cmocka_unit_test(test_inter_algorithms),
        cmocka_unit_test(test_inter_nonblocking),
        cmocka_unit_test(test_inter_groups_sharing_nodes),
        cmocka_unit_test(test_nonblocking_smp),
        cmocka_unit_test(test_neighbor_linear),
        cmocka_unit_test(test_noncommutative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
