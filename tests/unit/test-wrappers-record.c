/* test-wrappers-record.c: the typed record functions of the wrappers (p2p.c, req.c, coll.c,
 * comm-wrap.c) fill fc__rec slots with the peers, tags, byte counts, objects and flags format.h
 * asks for, checked against values worked out by hand.
 *
 * The record sources are compiled into this test (included below) against a stub runtime and a
 * stub of the few PMPI queries they make, so no MPI library is initialised: communicator sizes,
 * type sizes and status contents are whatever each test sets. Stub conventions: a status' count_lo
 * holds its byte count, bit 0 of count_hi_and_cancelled its cancelled flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above included first. */
#include <cmocka.h>

#include "record.h"

/* The record sources, built here with the stubs below. */
#include "coll.c"
#include "comm-wrap.c"
#include "p2p.c"
#include "req.c"
#include "poll.c"

/* ---- stub runtime (internal.h) ---- */
volatile int fc__state = FC__ON;
__thread fc__thread *fc__self FC__TLS;
int fc__use_tsc = 0;
int fc__depth = 1;
int fc__fold_polls = 1;
/* One tick a nanosecond: the busy times of folded polls are the ticks added up. */
fc__clock_conv fc__conv = {.tick0 = 0, .ns0 = 0, .mult = 1ull << 32};
/* renumber.h: ranks not renumbered, so the world's queries reach the stubs as MPI_COMM_WORLD. */
MPI_Comm fc__world = MPI_COMM_WORLD;

#define SITE 7u
#define NEWCOMM_ID 42u
static fc__rec recs[64];
static fc__thread thr;
static MPI_Comm freed;

/* comm_id of a communicator: a fixed, recognisable mapping (WORLD 0, the fakes 3 and 4); fc__comm
 * (internal.h) answers WORLD itself and asks this for the others. */
#define FAKE_INTRA ((MPI_Comm)0x44000011)
#define FAKE_INTER ((MPI_Comm)0x44000022)
uint32_t fc__comm_lookup(MPI_Comm comm)
{
    return comm == MPI_COMM_WORLD ? 0 : comm == FAKE_INTRA ? 3 : comm == FAKE_INTER ? 4 : 99;
}
uint32_t fc__comm_created(MPI_Comm newcomm)
{
    return newcomm == MPI_COMM_NULL ? UINT32_MAX : NEWCOMM_ID;
}
void fc__comm_freed(MPI_Comm comm)
{
    freed = comm;
}
/* FAKE_INTRA is a distributed graph with 2 sources and 3 destinations; the others have no topology. */
int fc__comm_degrees(MPI_Comm comm, int *indeg, int *outdeg)
{
    *indeg = comm == FAKE_INTRA ? 2 : 0;
    *outdeg = comm == FAKE_INTRA ? 3 : 0;
    return comm == FAKE_INTRA ? 0 : -1;
}
uint32_t fc__site(fc__thread *t, void *ra)
{
    (void)t;
    return ra ? SITE : 0;
}
void fc__warn(const char *fmt, ...)
{
    fail_msg("unexpected warning: %s", fmt);
}
/* Type sizes by table: the second method the byte counts are checked against, for the datatypes
 * fc__bytes (internal.h) does not read from MPICH's handle itself. */
uint64_t fc__bytes_lookup(MPI_Datatype dt, int64_t count)
{
    uint64_t size = dt == MPI_INT ? 4 : dt == MPI_DOUBLE ? 8 : dt == MPI_BYTE ? 1 : 0;
    return count < 0 ? 0 : size * (uint64_t)count;
}
void fc__chunk_full(fc__thread *t)
{
    (void)t;
    fail_msg("a test wrote more records than the buffer holds");
}
fc__thread *fc__thread_start(void)
{
    return NULL;
}

/* ---- stub PMPI queries ---- */
static int fake_size = 4, fake_rank = 1, fake_remote = 3;
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    *size = comm == FAKE_INTER ? 2 : fake_size;
    return MPI_SUCCESS;
}
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    (void)comm;
    *rank = fake_rank;
    return MPI_SUCCESS;
}
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    *flag = comm == FAKE_INTER;
    return MPI_SUCCESS;
}
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    (void)comm;
    *size = fake_remote;
    return MPI_SUCCESS;
}
int PMPI_Get_count_c(const MPI_Status *st, MPI_Datatype dt, MPI_Count *count)
{
    (void)dt;
    *count = st->count_lo;
    return MPI_SUCCESS;
}
int PMPI_Test_cancelled(const MPI_Status *st, int *flag)
{
    *flag = st->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}

/* ---- helpers ---- */
static fc__call call_of(uint16_t kind, int rc)
{
    /* As a wrapper does: the call site is taken before the record function runs. */
    return (fc__call){.t0 = 100, .t1 = 250, .site = fc__site(NULL, (void *)&call_of), .rc = rc, .kind = kind};
}

static int setup(void **state)
{
    (void)state;
    memset(recs, 0xa5, sizeof recs);
    thr.cur = recs;
    thr.end = recs + 64;
    thr.run = NULL;
    fc__fold_polls = 1;
    fake_size = 4;
    fake_rank = 1;
    fake_remote = 3;
    return 0;
}

static int nrecs(void)
{
    return (int)(thr.cur - recs);
}

/* A send or receive buffer that is not MPI_IN_PLACE. */
static int dummy_buf[4];
static const void *rbuf_dummy(void)
{
    return dummy_buf;
}

static MPI_Status status_of(int source, int tag, int bytes)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    st.MPI_SOURCE = source;
    st.MPI_TAG = tag;
    st.count_lo = bytes;
    return st;
}

static void check_rec(const fc__rec *r, unsigned kind, int32_t peer, int32_t tag, uint32_t comm,
                      uint64_t bytes, uint64_t obj, unsigned flags, uint64_t bytes2)
{
    assert_int_equal(r->kind, kind);
    assert_int_equal(r->peer, peer);
    assert_int_equal(r->tag, tag);
    assert_int_equal(r->comm, comm);
    assert_int_equal(r->bytes, bytes);
    assert_int_equal(r->obj, obj);
    assert_int_equal(r->flags, flags);
    assert_int_equal(r->bytes2, bytes2);
}

/* ---- point to point ---- */
static void test_send(void **state)
{
    (void)state;
    fc__call c = call_of(FC_EV_MPI_Send, MPI_SUCCESS);
    fc__rec_send(&thr, &c, MPI_COMM_WORLD, 2, 9, MPI_DOUBLE, 3, NULL); /* 3 doubles: 24 bytes */
    MPI_Request req = (MPI_Request)0x6c000001;
    c = call_of(FC_EV_MPI_Isend, MPI_SUCCESS);
    fc__rec_send(&thr, &c, FAKE_INTRA, MPI_PROC_NULL, 1, MPI_INT, 10, &req);
    c = call_of(FC_EV_MPI_Isend, 5); /* a failed call: flagged, and *req is not trusted */
    fc__rec_send(&thr, &c, FAKE_INTRA, 0, 1, MPI_INT, 1, &req);
    assert_int_equal(nrecs(), 3);
    check_rec(&recs[0], FC_EV_MPI_Send, 2, 9, 0, 24, 0, 0, 0);
    assert_int_equal(recs[0].t0, 100);
    assert_int_equal(recs[0].t1, 250);
    assert_int_equal(recs[0].site, SITE);
    check_rec(&recs[1], FC_EV_MPI_Isend, FC_PEER_NULL, 1, 3, 40, 0x6c000001, 0, 0);
    check_rec(&recs[2], FC_EV_MPI_Isend, 0, 1, 3, 4, 0, FC_EVF_ERROR, 0);
}

static void test_receives(void **state)
{
    (void)state;
    MPI_Request req = (MPI_Request)0xac000003;
    fc__call c = call_of(FC_EV_MPI_Irecv, MPI_SUCCESS);
    fc__rec_irecv(&thr, &c, MPI_COMM_WORLD, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_INT, 10, &req);
    /* Recv from any source: the status says rank 4, tag 11, 12 bytes. */
    MPI_Status st = status_of(4, 11, 12);
    c = call_of(FC_EV_MPI_Recv, MPI_SUCCESS);
    fc__rec_recv(&thr, &c, MPI_COMM_WORLD, MPI_ANY_SOURCE, 11, MPI_INT, 10, &st);
    /* A status MPI did not fill: the requested envelope and the capacity. */
    st = status_of(FC__SRC_UNSET, 0, 0);
    c = call_of(FC_EV_MPI_Recv, 3);
    fc__rec_recv(&thr, &c, FAKE_INTRA, 2, 5, MPI_DOUBLE, 2, &st);
    assert_int_equal(nrecs(), 3);
    check_rec(&recs[0], FC_EV_MPI_Irecv, FC_PEER_ANY, FC_TAG_ANY, 0, 40, 0xac000003,
              FC_EVF_ANY_SOURCE | FC_EVF_ANY_TAG, 0);
    check_rec(&recs[1], FC_EV_MPI_Recv, 4, 11, 0, 12, 0, FC_EVF_ANY_SOURCE, 0);
    check_rec(&recs[2], FC_EV_MPI_Recv, 2, 5, 3, 16, 0, FC_EVF_ERROR, 0);
}

static void test_sendrecv(void **state)
{
    (void)state;
    /* Send 2 ints to 1 (tag 5), room for 6 doubles (48 bytes); 24 bytes arrive from 3, tag 6. */
    MPI_Status st = status_of(3, 6, 24);
    fc__call c = call_of(FC_EV_MPI_Sendrecv, MPI_SUCCESS);
    fc__rec_sendrecv(&thr, &c, FAKE_INTRA, 1, 5, MPI_INT, 2, MPI_DOUBLE, 6, MPI_ANY_SOURCE, 6, &st);
    assert_int_equal(nrecs(), 2);
    check_rec(&recs[0], FC_EV_MPI_Sendrecv, 1, 5, 3, 8, 0, FC_EVF_ANY_SOURCE, 48);
    check_rec(&recs[1], FC_EV_COMPLETE, 3, 6, 3, 24, 0, FC_EVF_STATUS | FC_EVF_ANY_SOURCE, 0);
    assert_int_equal(recs[1].t0, 250);
    assert_int_equal(recs[1].t1, 250);
}

static void test_probe_and_matched_receive(void **state)
{
    (void)state;
    int found = 1, none = 0;
    MPI_Message msg = (MPI_Message)0xec000005;
    MPI_Status st = status_of(2, 30, 20);
    fc__call c = call_of(FC_EV_MPI_Iprobe, MPI_SUCCESS);
    fc__rec_probe(&thr, &c, FAKE_INTRA, MPI_ANY_SOURCE, 30, &none, NULL, &st);
    c = call_of(FC_EV_MPI_Improbe, MPI_SUCCESS);
    fc__rec_probe(&thr, &c, FAKE_INTRA, 2, MPI_ANY_TAG, &found, &msg, &st);
    /* The Imrecv of that message: envelope and communicator from the probe. */
    MPI_Request req = (MPI_Request)0xac000009;
    c = call_of(FC_EV_MPI_Imrecv, MPI_SUCCESS);
    fc__rec_imrecv(&thr, &c, msg, MPI_INT, 100, &req);
    /* An Mrecv of a message probed elsewhere: communicator unknown (0), envelope from its status.
     */
    st = status_of(1, 7, 4);
    c = call_of(FC_EV_MPI_Mrecv, MPI_SUCCESS);
    fc__rec_mrecv(&thr, &c, (MPI_Message)0xec000077, MPI_INT, 1, &st);
    assert_int_equal(nrecs(), 4);
    check_rec(&recs[0], FC_EV_MPI_Iprobe, FC_PEER_ANY, 30, 3, 0, 0, FC_EVF_ANY_SOURCE, 0);
    check_rec(&recs[1], FC_EV_MPI_Improbe, 2, 30, 3, 20, 0xec000005, FC_EVF_ANY_TAG | FC_EVF_FOUND,
              0);
    check_rec(&recs[2], FC_EV_MPI_Imrecv, 2, 30, 3, 20, 0xac000009, 0, 0);
    check_rec(&recs[3], FC_EV_MPI_Mrecv, 1, 7, 0, 4, 0, 0, 0);
}

/* ---- requests ---- */
static void test_waitall_completions(void **state)
{
    (void)state;
    MPI_Request reqs[3] = {(MPI_Request)0xac000001, MPI_REQUEST_NULL, (MPI_Request)0x6c000001};
    MPI_Status sts[3];
    memset(sts, 0, sizeof sts);
    sts[2].MPI_SOURCE = 55;
    MPI_Status *s = fc__wrap_statuses(sts, 3); /* marks the application's array */
    assert_ptr_equal(s, sts);
    const MPI_Request *copy = fc__wrap_reqs(reqs, 3);
    /* What MPI does: fills the receive's status and the null one's (empty), not the send's. */
    sts[0] = status_of(1, 2, 8);
    sts[1] = status_of(MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    reqs[0] = reqs[2] = MPI_REQUEST_NULL;
    fc__call c = call_of(FC_EV_MPI_Waitall, MPI_SUCCESS);
    fc__rec_testall(&thr, &c, 3, copy, s, NULL, NULL);
    fc__wrap_statuses_done(sts, 3);
    assert_int_equal(nrecs(), 4);
    check_rec(&recs[0], FC_EV_MPI_Waitall, FC_PEER_NONE, 0, 0, 0, 0, FC_EVF_FOUND, 3);
    check_rec(&recs[1], FC_EV_COMPLETE, 1, 2, 0, 8, 0xac000001, FC_EVF_STATUS, 0);
    check_rec(&recs[2], FC_EV_COMPLETE, FC_PEER_NONE, 0, 0, 0, FC__HANDLE(MPI_REQUEST_NULL),
              FC_EVF_NULL, 0);
    check_rec(&recs[3], FC_EV_COMPLETE, FC_PEER_NONE, 0, 0, 0, 0x6c000001, 0, 0);
    /* The entry MPI did not touch got the application's value back. */
    assert_int_equal(sts[2].MPI_SOURCE, 55);
}

static void test_testall_nothing_and_err_in_status(void **state)
{
    (void)state;
    MPI_Request reqs[2] = {(MPI_Request)0xac000001, (MPI_Request)0xac000002};
    int flag = 0;
    fc__call c = call_of(FC_EV_MPI_Testall, MPI_SUCCESS);
    fc__rec_testall(&thr, &c, 2, reqs, MPI_STATUSES_IGNORE, &flag, NULL);
    /* Waitall with MPI_ERR_IN_STATUS: entry 1 still pending, entry 0 completed with an error. */
    MPI_Status sts[2] = {status_of(0, 4, 4), status_of(FC__SRC_UNSET, 0, 0)};
    sts[0].MPI_ERROR = 15;
    sts[1].MPI_ERROR = MPI_ERR_PENDING;
    c = call_of(FC_EV_MPI_Waitall, MPI_ERR_IN_STATUS);
    fc__rec_testall(&thr, &c, 2, reqs, sts, NULL, NULL);
    assert_int_equal(nrecs(), 3);
    check_rec(&recs[0], FC_EV_MPI_Testall, FC_PEER_NONE, 0, 0, 0, 0, 0, 2);
    check_rec(&recs[1], FC_EV_MPI_Waitall, FC_PEER_NONE, 0, 0, 0, 0, FC_EVF_FOUND | FC_EVF_ERROR,
              2);
    check_rec(&recs[2], FC_EV_COMPLETE, 0, 4, 0, 4, 0xac000001, FC_EVF_STATUS, 0);
}

/* A COMPLETE record as the steps make it: request h at time at, its envelope (peer FC_PEER_NONE:
 * none). */
static fc__rec step_rec(MPI_Request h, uint64_t at, int32_t peer, int32_t tag, uint64_t bytes)
{
    return (fc__rec){.t0 = at, .t1 = at, .bytes = bytes, .obj = FC__HANDLE(h), .peer = peer, .tag = tag,
                     .kind = FC_EV_COMPLETE,
                     .flags = FC_EVF_OWN_TIME | (peer != FC_PEER_NONE ? FC_EVF_STATUS : 0)};
}

/* A Waitall completed in steps: the call's record, then the COMPLETE records the steps made, in the
 * order the requests completed, each at its own time capped at the call's exit; the null and
 * inactive requests follow at the exit, in array order. The steps' records are taken where they
 * are when they follow the slot the steps left for the call's record, and copied from scratch
 * otherwise, to the same records. */
static void test_waitall_in_steps(void **state)
{
    (void)state;
    MPI_Request reqs[5] = {(MPI_Request)0xac000001, MPI_REQUEST_NULL, (MPI_Request)0xac000003,
                           (MPI_Request)0x6c000004, (MPI_Request)0xa8000005};
    /* The statuses of the requests no step completed (the null and the inactive one). */
    MPI_Status rest[2] = {status_of(MPI_ANY_SOURCE, MPI_ANY_TAG, 0), status_of(MPI_ANY_SOURCE, MPI_ANY_TAG, 0)};
    const unsigned char stepped[5] = {1, 0, 1, 1, 0};
    /* call_of's call runs from 100 to 250. Entry 2 completed first (120), then 3 and 0 together,
     * in a step whose time was read on another core, after the call's exit (260). */
    fc__rec done[3] = {step_rec(reqs[2], 120, 3, 11, 16), step_rec(reqs[3], 260, FC_PEER_NONE, 0, 0),
                       step_rec(reqs[0], 260, 2, 10, 8)};
    for (int in_place = 0; in_place < 2; in_place++) {
        setup(NULL);
        fc__steps steps = {3, NULL, done, stepped, reqs, rest};
        if (in_place) {
            memcpy(recs + 1, done, sizeof done);
            steps.head = recs;
            steps.recs = recs + 1;
        }
        fc__call c = call_of(FC_EV_MPI_Waitall, MPI_SUCCESS);
        fc__rec_testall(&thr, &c, 5, NULL, NULL, NULL, &steps);
        assert_int_equal(nrecs(), 6);
        check_rec(&recs[0], FC_EV_MPI_Waitall, FC_PEER_NONE, 0, 0, 0, 0, FC_EVF_FOUND, 5);
        check_rec(&recs[1], FC_EV_COMPLETE, 3, 11, 0, 16, 0xac000003, FC_EVF_STATUS | FC_EVF_OWN_TIME, 0);
        check_rec(&recs[2], FC_EV_COMPLETE, FC_PEER_NONE, 0, 0, 0, 0x6c000004, FC_EVF_OWN_TIME, 0);
        check_rec(&recs[3], FC_EV_COMPLETE, 2, 10, 0, 8, 0xac000001, FC_EVF_STATUS | FC_EVF_OWN_TIME, 0);
        check_rec(&recs[4], FC_EV_COMPLETE, FC_PEER_NONE, 0, 0, 0, FC__HANDLE(MPI_REQUEST_NULL),
                  FC_EVF_NULL, 0);
        check_rec(&recs[5], FC_EV_COMPLETE, FC_PEER_NONE, 0, 0, 0, 0xa8000005, FC_EVF_NULL, 0);
        /* 120, then 260 capped at the exit, 250. */
        const uint64_t t[6][2] = {{100, 250}, {120, 120}, {250, 250}, {250, 250}, {250, 250}, {250, 250}};
        for (int i = 0; i < 6; i++) {
            assert_int_equal(recs[i].t0, t[i][0]);
            assert_int_equal(recs[i].t1, t[i][1]);
        }
    }
    /* A call that failed for itself, after a step: what the steps completed, nothing else. */
    setup(NULL);
    fc__steps steps = {1, NULL, done, stepped, reqs, rest};
    fc__call c = call_of(FC_EV_MPI_Waitall, MPI_ERR_REQUEST);
    fc__rec_testall(&thr, &c, 5, NULL, NULL, NULL, &steps);
    assert_int_equal(nrecs(), 2);
    check_rec(&recs[0], FC_EV_MPI_Waitall, FC_PEER_NONE, 0, 0, 0, 0, FC_EVF_FOUND | FC_EVF_ERROR, 5);
    check_rec(&recs[1], FC_EV_COMPLETE, 3, 11, 0, 16, 0xac000003, FC_EVF_STATUS | FC_EVF_OWN_TIME, 0);
    /* Steps whose slot is no longer the thread's next (tracing stopped meanwhile): copied. */
    setup(NULL);
    memcpy(recs + 11, done, sizeof done);
    steps = (fc__steps){3, recs + 10, recs + 11, stepped, reqs, rest};
    c = call_of(FC_EV_MPI_Waitall, MPI_SUCCESS);
    fc__rec_testall(&thr, &c, 5, NULL, NULL, NULL, &steps);
    assert_int_equal(nrecs(), 6);
    check_rec(&recs[3], FC_EV_COMPLETE, 2, 10, 0, 8, 0xac000001, FC_EVF_STATUS | FC_EVF_OWN_TIME, 0);
    /* Without the steps' scratch or a copy of the requests (no memory), no COMPLETE records at all. */
    setup(NULL);
    MPI_Status sts[5];
    c = call_of(FC_EV_MPI_Waitall, MPI_SUCCESS);
    fc__rec_testall(&thr, &c, 5, NULL, sts, NULL, NULL);
    assert_int_equal(nrecs(), 1);
}

static void test_any_some_and_cancel(void **state)
{
    (void)state;
    MPI_Request reqs[4] = {(MPI_Request)0xa1, (MPI_Request)0xa2, (MPI_Request)0xa3,
                           (MPI_Request)0xa4};
    int idx = MPI_UNDEFINED, flag = 1, out = 2, ind[2] = {3, 1};
    MPI_Status st = status_of(FC__SRC_UNSET, 0, 0);
    fc__call c = call_of(FC_EV_MPI_Testany, MPI_SUCCESS); /* no active request: nothing completes */
    fc__rec_testany(&thr, &c, 4, reqs, &idx, &st, &flag);
    MPI_Status sts[2] = {status_of(2, 8, 16), status_of(3, 9, 0)};
    sts[1].count_hi_and_cancelled = 1; /* entry 1 was cancelled */
    c = call_of(FC_EV_MPI_Waitsome, MPI_SUCCESS);
    fc__rec_testsome(&thr, &c, 4, reqs, &out, ind, sts);
    idx = 2;
    st = status_of(0, 1, 4);
    c = call_of(FC_EV_MPI_Waitany, MPI_SUCCESS);
    fc__rec_testany(&thr, &c, 4, reqs, &idx, &st, NULL);
    assert_int_equal(nrecs(), 6);
    check_rec(&recs[0], FC_EV_MPI_Testany, FC_PEER_NONE, 0, 0, 0, 0, 0, 4);
    check_rec(&recs[1], FC_EV_MPI_Waitsome, FC_PEER_NONE, 0, 0, 0, 0, FC_EVF_FOUND, 4);
    check_rec(&recs[2], FC_EV_COMPLETE, 2, 8, 0, 16, 0xa4, FC_EVF_STATUS, 0);
    check_rec(&recs[3], FC_EV_COMPLETE, FC_PEER_NONE, 0, 0, 0, 0xa2, FC_EVF_CANCELLED, 0);
    check_rec(&recs[4], FC_EV_MPI_Waitany, FC_PEER_NONE, 0, 0, 0, 0, FC_EVF_FOUND, 4);
    check_rec(&recs[5], FC_EV_COMPLETE, 0, 1, 0, 4, 0xa3, FC_EVF_STATUS, 0);
}

/* A call of kind k entered at t0 and left at t1, at call site SITE. */
static fc__call call_at(uint16_t kind, uint64_t t0, uint64_t t1)
{
    fc__call c = call_of(kind, MPI_SUCCESS);
    c.t0 = t0;
    c.t1 = t1;
    return c;
}

/* Polls that found nothing, on the same arguments one after the other: one record and a POLLS
 * with the last call's times, the count and the time inside them; a poll that finds something, on
 * other arguments or after another record starts afresh. */
static void test_polls_folded(void **state)
{
    (void)state;
    MPI_Request req = (MPI_Request)0xb1;
    MPI_Status st = status_of(FC__SRC_UNSET, 0, 0);
    int no = 0, yes = 1;
    fc__call c = call_at(FC_EV_MPI_Test, 1000, 1010);
    fc__rec_test(&thr, &c, req, &st, &no);
    c = call_at(FC_EV_MPI_Test, 1100, 1103);
    fc__rec_test(&thr, &c, req, &st, &no);
    c = call_at(FC_EV_MPI_Test, 1200, 1207);
    fc__rec_test(&thr, &c, req, &st, &no);
    st = status_of(2, 5, 8);
    c = call_at(FC_EV_MPI_Test, 1300, 1320); /* completes: a record of its own */
    fc__rec_test(&thr, &c, req, &st, &yes);
    c = call_at(FC_EV_MPI_Iprobe, 1400, 1402);
    fc__rec_probe(&thr, &c, MPI_COMM_WORLD, 2, 5, &no, NULL, &st);
    c = call_at(FC_EV_MPI_Iprobe, 1500, 1501); /* another tag: not the same run */
    fc__rec_probe(&thr, &c, MPI_COMM_WORLD, 2, 6, &no, NULL, &st);
    c = call_at(FC_EV_MPI_Iprobe, 1600, 1604);
    fc__rec_probe(&thr, &c, MPI_COMM_WORLD, 2, 6, &no, NULL, &st);
    assert_int_equal(nrecs(), 7);
    check_rec(&recs[0], FC_EV_MPI_Test, FC_PEER_NONE, 0, 0, 0, 0xb1, 0, 1);
    assert_int_equal(recs[0].t0, 1000);
    assert_int_equal(recs[0].t1, 1010);
    check_rec(&recs[1], FC_EV_POLLS, FC_PEER_NONE, 0, 0, 3, 0, 0, 10 + 3 + 7);
    assert_int_equal(recs[1].t0, 1200);
    assert_int_equal(recs[1].t1, 1207);
    assert_int_equal(recs[1].site, 0);
    check_rec(&recs[2], FC_EV_MPI_Test, FC_PEER_NONE, 0, 0, 0, 0xb1, FC_EVF_FOUND, 1);
    check_rec(&recs[3], FC_EV_COMPLETE, 2, 5, 0, 8, 0xb1, FC_EVF_STATUS, 0);
    check_rec(&recs[4], FC_EV_MPI_Iprobe, 2, 5, 0, 0, 0, 0, 0);
    check_rec(&recs[5], FC_EV_MPI_Iprobe, 2, 6, 0, 0, 0, 0, 0);
    check_rec(&recs[6], FC_EV_POLLS, FC_PEER_NONE, 0, 0, 2, 0, 0, 1 + 4);
    assert_int_equal(recs[6].t1, 1604);
    /* A further call of the run updates its POLLS record in place. */
    c = call_at(FC_EV_MPI_Iprobe, 1700, 1702);
    fc__rec_probe(&thr, &c, MPI_COMM_WORLD, 2, 6, &no, NULL, &st);
    assert_int_equal(nrecs(), 7);
    assert_int_equal(recs[6].bytes, 3);
    assert_int_equal(recs[6].bytes2, 1 + 4 + 2);
    assert_int_equal(recs[6].t0, 1700);
    /* Testany, Testsome and Testall that found nothing fold too. */
    MPI_Request reqs[2] = {(MPI_Request)0xc1, (MPI_Request)0xc2};
    int idx = MPI_UNDEFINED, out = 0;
    for (int k = 0; k < 2; k++) {
        c = call_at(FC_EV_MPI_Testany, 1800 + 10 * k, 1801 + 10 * k);
        fc__rec_testany(&thr, &c, 2, reqs, &idx, &st, &no);
    }
    for (int k = 0; k < 2; k++) {
        c = call_at(FC_EV_MPI_Testsome, 1900 + 10 * k, 1901 + 10 * k);
        fc__rec_testsome(&thr, &c, 2, reqs, &out, NULL, NULL);
    }
    for (int k = 0; k < 2; k++) {
        c = call_at(FC_EV_MPI_Testall, 2000 + 10 * k, 2001 + 10 * k);
        fc__rec_testall(&thr, &c, 2, reqs, NULL, &no, NULL);
    }
    assert_int_equal(nrecs(), 13);
    check_rec(&recs[7], FC_EV_MPI_Testany, FC_PEER_NONE, 0, 0, 0, 0, 0, 2);
    check_rec(&recs[8], FC_EV_POLLS, FC_PEER_NONE, 0, 0, 2, 0, 0, 2);
    check_rec(&recs[9], FC_EV_MPI_Testsome, FC_PEER_NONE, 0, 0, 0, 0, 0, 2);
    check_rec(&recs[10], FC_EV_POLLS, FC_PEER_NONE, 0, 0, 2, 0, 0, 2);
    check_rec(&recs[11], FC_EV_MPI_Testall, FC_PEER_NONE, 0, 0, 0, 0, 0, 2);
    check_rec(&recs[12], FC_EV_POLLS, FC_PEER_NONE, 0, 0, 2, 0, 0, 2);
}

/* FLOWCUT_FOLD_POLLS=0: each poll is a record of its own. */
static void test_polls_each(void **state)
{
    (void)state;
    fc__fold_polls = 0;
    MPI_Status st = status_of(FC__SRC_UNSET, 0, 0);
    int no = 0;
    for (int k = 0; k < 3; k++) {
        fc__call c = call_at(FC_EV_MPI_Improbe, 100 * k, 100 * k + 5);
        MPI_Message msg = MPI_MESSAGE_NULL;
        fc__rec_probe(&thr, &c, MPI_COMM_WORLD, 1, 2, &no, &msg, &st);
    }
    assert_int_equal(nrecs(), 3);
    for (int k = 0; k < 3; k++)
        check_rec(&recs[k], FC_EV_MPI_Improbe, 1, 2, 0, 0, 0, 0, 0);
}

static void test_startall_and_status_marks(void **state)
{
    (void)state;
    MPI_Request reqs[2] = {(MPI_Request)0xb1, (MPI_Request)0xb2};
    fc__call c = call_of(FC_EV_MPI_Startall, MPI_SUCCESS);
    fc__rec_startall(&thr, &c, 2, reqs);
    assert_int_equal(nrecs(), 3);
    check_rec(&recs[0], FC_EV_MPI_Startall, FC_PEER_NONE, 0, 0, 0, 0, 0, 2);
    check_rec(&recs[1], FC_EV_START, FC_PEER_NONE, 0, 0, 0, 0xb1, 0, 0);
    check_rec(&recs[2], FC_EV_START, FC_PEER_NONE, 0, 0, 0, 0xb2, 0, 0);
    /* A single status: the application's source comes back when MPI did not write one. */
    MPI_Status own, app = status_of(77, 1, 1);
    int saved = 0;
    MPI_Status *s = fc__wrap_status(&app, &own, &saved);
    assert_ptr_equal(s, &app);
    assert_int_equal(app.MPI_SOURCE, FC__SRC_UNSET);
    fc__wrap_status_done(&app, saved);
    assert_int_equal(app.MPI_SOURCE, 77);
    s = fc__wrap_status(MPI_STATUS_IGNORE, &own, &saved);
    assert_ptr_equal(s, &own);
    assert_false(fc__status_filled(s));
    /* Ignored arrays get marked scratch of their own. */
    MPI_Status *scratch_sts = fc__wrap_statuses(MPI_STATUSES_IGNORE, 5);
    assert_ptr_not_equal(scratch_sts, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 5; i++)
        assert_int_equal(scratch_sts[i].MPI_SOURCE, FC__SRC_UNSET);
    assert_null(fc__wrap_reqs(reqs, 0));
}

/* ---- collectives: a 4-rank intra-communicator where this rank is 1 ---- */
static void test_rooted_collectives(void **state)
{
    (void)state;
    int counts[4] = {1, 2, 3, 4};
    MPI_Count wide[4] = {1, 2, 3, 4};
    fc__call c = call_of(FC_EV_MPI_Gatherv, MPI_SUCCESS);
    fc__rec_gatherv(&thr, &c, FAKE_INTRA, 1, rbuf_dummy(), MPI_INT, 2, MPI_INT, counts, 0, NULL);
    fc__rec_gatherv(&thr, &c, FAKE_INTRA, 1, MPI_IN_PLACE, MPI_INT, 2, MPI_INT, wide, 1, NULL);
    fc__rec_gatherv(&thr, &c, FAKE_INTRA, 0, rbuf_dummy(), MPI_INT, 2, MPI_INT, counts, 0, NULL);
    c = call_of(FC_EV_MPI_Scatterv, MPI_SUCCESS);
    fc__rec_scatterv(&thr, &c, FAKE_INTRA, 1, rbuf_dummy(), MPI_DOUBLE, counts, 0, MPI_INT, 3,
                     NULL);
    c = call_of(FC_EV_MPI_Bcast, MPI_SUCCESS);
    fc__rec_bcast(&thr, &c, FAKE_INTRA, 1, MPI_INT, 5, NULL);
    fc__rec_bcast(&thr, &c, FAKE_INTRA, 3, MPI_INT, 5, NULL);
    c = call_of(FC_EV_MPI_Reduce, MPI_SUCCESS);
    fc__rec_reduce(&thr, &c, FAKE_INTRA, MPI_SUM, 0, MPI_DOUBLE, 2, NULL);
    /* Each Gatherv and the Scatterv at the root is followed by its COUNTS: the counts 1, 2, 3, 4
     * differ from rank to rank, so a run of one rank each, in rank order. */
    assert_int_equal(nrecs(), 19);
    check_rec(&recs[0], FC_EV_MPI_Gatherv, 1, 0, 3, 8, 0, 0, 40); /* (1+2+3+4) ints at the root */
    for (int i = 0; i < 4; i++)
        check_rec(&recs[1 + i], FC_EV_COUNTS, i, 0, 0, 0, 1, 0, 4 * (uint64_t)(i + 1)); /* from rank i */
    check_rec(&recs[5], FC_EV_MPI_Gatherv, 1, 0, 3, 8, 0, 0,
              40); /* in place: its own block, 2 ints */
    for (int i = 0; i < 4; i++)
        check_rec(&recs[6 + i], FC_EV_COUNTS, i, 0, 0, 0, 1, 0, 4 * (uint64_t)(i + 1));
    check_rec(&recs[10], FC_EV_MPI_Gatherv, 0, 0, 3, 8, 0, 0, 0);    /* a leaf: no counts */
    check_rec(&recs[11], FC_EV_MPI_Scatterv, 1, 0, 3, 80, 0, 0, 12); /* 10 doubles out, 3 ints in */
    for (int i = 0; i < 4; i++)
        check_rec(&recs[12 + i], FC_EV_COUNTS, i, 0, 0, 8 * (uint64_t)(i + 1), 1, 0, 0); /* to rank i */
    check_rec(&recs[16], FC_EV_MPI_Bcast, 1, 0, 3, 20, 0, 0, 0);
    check_rec(&recs[17], FC_EV_MPI_Bcast, 3, 0, 3, 0, 0, 0, 20);
    check_rec(&recs[18], FC_EV_MPI_Reduce, 0, 0, 3, 16, 0, 0, 0);
}

static void test_all_to_all_collectives(void **state)
{
    (void)state;
    int ones[4] = {1, 1, 1, 1}, twos[4] = {2, 2, 2, 2}, rcounts[4] = {2, 0, 1, 0},
        rs[4] = {1, 2, 3, 4};
    MPI_Datatype stypes[4] = {MPI_INT, MPI_DOUBLE, MPI_INT, MPI_DOUBLE};
    MPI_Datatype rtypes[4] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
    MPI_Request req = (MPI_Request)0xcc000001;
    fc__call c = call_of(FC_EV_MPI_Alltoallv, MPI_SUCCESS);
    fc__rec_alltoallv(&thr, &c, FAKE_INTRA, rbuf_dummy(), MPI_INT, ones, MPI_DOUBLE, twos, 0, NULL);
    c = call_of(FC_EV_MPI_Ialltoallw, MPI_SUCCESS);
    fc__rec_alltoallw(&thr, &c, FAKE_INTRA, rbuf_dummy(), stypes, ones, rtypes, rcounts, 0, &req);
    c = call_of(FC_EV_MPI_Allgather, MPI_SUCCESS);
    fc__rec_allgather(&thr, &c, FAKE_INTRA, MPI_IN_PLACE, MPI_INT, 99, MPI_DOUBLE, 2, NULL);
    c = call_of(FC_EV_MPI_Reduce_scatter, MPI_SUCCESS);
    fc__rec_reduce_scatter(&thr, &c, FAKE_INTRA, MPI_SUM, MPI_INT, rs, 0, NULL);
    c = call_of(FC_EV_MPI_Reduce_scatter_block, MPI_SUCCESS);
    fc__rec_reduce_scatter_block(&thr, &c, FAKE_INTRA, MPI_SUM, MPI_DOUBLE, 3, NULL);
    c = call_of(FC_EV_MPI_Allreduce, MPI_SUCCESS);
    fc__rec_allreduce(&thr, &c, MPI_COMM_WORLD, MPI_SUM, MPI_INT, 6, NULL);
    /* The Alltoallv is even (4 bytes to and 16 from every rank): no COUNTS. The Ialltoallw sends
     * 4, 8, 4, 8 bytes (int, double, int, double) and receives 16, 0, 8, 0: a run per rank. */
    assert_int_equal(nrecs(), 10);
    check_rec(&recs[0], FC_EV_MPI_Alltoallv, FC_PEER_NONE, 0, 3, 16, 0, 0, 64);
    check_rec(&recs[1], FC_EV_MPI_Ialltoallw, FC_PEER_NONE, 0, 3, 24, 0xcc000001, 0, 24);
    static const uint64_t to[4] = {4, 8, 4, 8}, from[4] = {16, 0, 8, 0};
    for (int i = 0; i < 4; i++)
        check_rec(&recs[2 + i], FC_EV_COUNTS, i, 0, 0, to[i], 1, 0, from[i]);
    check_rec(&recs[6], FC_EV_MPI_Allgather, FC_PEER_NONE, 0, 3, 16, 0, 0, 64);
    check_rec(&recs[7], FC_EV_MPI_Reduce_scatter, FC_PEER_NONE, 0, 3, 40, 0, 0, 8);
    check_rec(&recs[8], FC_EV_MPI_Reduce_scatter_block, FC_PEER_NONE, 0, 3, 96, 0, 0, 24);
    check_rec(&recs[9], FC_EV_MPI_Allreduce, FC_PEER_NONE, 0, 0, 24, 0, 0, 24);
}

/* An inter-communicator whose remote group has 3 ranks. */
static void test_intercomm_collectives(void **state)
{
    (void)state;
    fc__call c = call_of(FC_EV_MPI_Gather, MPI_SUCCESS);
    fc__rec_gather(&thr, &c, FAKE_INTER, MPI_ROOT, rbuf_dummy(), MPI_INT, 7, MPI_INT, 2, NULL);
    fc__rec_gather(&thr, &c, FAKE_INTER, MPI_PROC_NULL, rbuf_dummy(), MPI_INT, 7, MPI_INT, 2, NULL);
    fc__rec_gather(&thr, &c, FAKE_INTER, 0, rbuf_dummy(), MPI_INT, 2, MPI_INT, 99, NULL);
    assert_int_equal(nrecs(), 3);
    check_rec(&recs[0], FC_EV_MPI_Gather, FC_PEER_ROOT, 0, 4, 0, 0, 0, 24); /* 3 x 2 ints */
    check_rec(&recs[1], FC_EV_MPI_Gather, FC_PEER_NULL, 0, 4, 0, 0, 0, 0);
    check_rec(&recs[2], FC_EV_MPI_Gather, 0, 0, 4, 8, 0, 0, 0);
}

/* ---- communicators and Fortran arguments ---- */
static void test_communicators(void **state)
{
    (void)state;
    MPI_Comm newcomm = FAKE_INTRA, none = MPI_COMM_NULL, victim = FAKE_INTER;
    fc__call c = call_of(FC_EV_MPI_Comm_split, MPI_SUCCESS);
    fc__rec_comm_new(&thr, &c, MPI_COMM_WORLD, &newcomm);
    fc__rec_comm_new(&thr, &c, MPI_COMM_WORLD, &none);
    uint32_t id = fc__wrap_freeing(&victim);
    assert_int_equal(id, 4);
    assert_int_equal(freed, FAKE_INTER);
    c = call_of(FC_EV_MPI_Comm_free, MPI_SUCCESS);
    fc__rec_comm_free(&thr, &c, id);
    assert_int_equal(nrecs(), 3);
    check_rec(&recs[0], FC_EV_MPI_Comm_split, FC_PEER_NONE, 0, 0, 0, NEWCOMM_ID + 1, 0, 0);
    check_rec(&recs[1], FC_EV_MPI_Comm_split, FC_PEER_NONE, 0, 0, 0, 0, 0, 0);
    check_rec(&recs[2], FC_EV_MPI_Comm_free, FC_PEER_NONE, 0, 4, 0, 0, 0, 0);
}

static void test_f08_arguments(void **state)
{
    (void)state;
    MPI_F08_status st;
    MPI_Fint w[2] = {1, 2};
    assert_ptr_equal(fc__f08_status(&MPIR_F08_MPI_STATUS_IGNORE_OBJ), MPI_STATUS_IGNORE);
    assert_ptr_equal(fc__f08_status(&st), (MPI_Status *)(void *)&st);
    assert_ptr_equal(fc__f08_statuses(MPIR_F08_MPI_STATUSES_IGNORE_OBJ), MPI_STATUSES_IGNORE);
    assert_ptr_equal(fc__f08_statuses(NULL), NULL);
    assert_ptr_equal(fc__f08_weights(w), w);
    assert_ptr_equal(fc__f08_weights(NULL), NULL);
}

/* The neighbourhood collectives on FAKE_INTRA (in-degree 2, out-degree 3): totals over the
 * positions, COUNTS over the 3 positions where they differ; a user's operation flagged. */
static void test_neighbourhood_collectives(void **state)
{
    (void)state;
    int scounts[3] = {1, 2, 3}, rcounts[2] = {4, 4};
    MPI_Request req = (MPI_Request)0xcc000002;
    fc__call c = call_of(FC_EV_MPI_Neighbor_alltoall, MPI_SUCCESS);
    fc__rec_nbr(&thr, &c, FAKE_INTRA, MPI_INT, 5, MPI_DOUBLE, 2, NULL, 0);
    c = call_of(FC_EV_MPI_Ineighbor_alltoallv, MPI_SUCCESS);
    fc__rec_nbrv(&thr, &c, FAKE_INTRA, MPI_INT, 0, scounts, MPI_DOUBLE, rcounts, 0, &req, 0);
    c = call_of(FC_EV_MPI_Neighbor_allgatherv_init, MPI_SUCCESS);
    fc__rec_nbrv(&thr, &c, FAKE_INTRA, MPI_INT, 2, NULL, MPI_INT, rcounts, 0, &req, 1);
    c = call_of(FC_EV_MPI_Neighbor_allgather, MPI_SUCCESS);
    fc__rec_nbr(&thr, &c, MPI_COMM_WORLD, MPI_INT, 5, MPI_INT, 5, NULL, 0); /* no topology: nothing */
    assert_int_equal(nrecs(), 9);
    check_rec(&recs[0], FC_EV_MPI_Neighbor_alltoall, FC_PEER_NONE, 0, 3, 3 * 20, 0, 0, 2 * 16);
    check_rec(&recs[1], FC_EV_MPI_Ineighbor_alltoallv, FC_PEER_NONE, 0, 3, 24, 0xcc000002, 0, 64);
    /* Positions 0, 1, 2: 4, 8, 12 bytes out; 32, 32, 0 in (only 2 sources). */
    check_rec(&recs[2], FC_EV_COUNTS, 0, 0, 0, 4, 1, 0, 32);
    check_rec(&recs[3], FC_EV_COUNTS, 1, 0, 0, 8, 1, 0, 32);
    check_rec(&recs[4], FC_EV_COUNTS, 2, 0, 0, 12, 1, 0, 0);
    /* The persistent allgatherv: its block of 8 bytes to each of 3, 16 from each of 2. */
    check_rec(&recs[5], FC_EV_MPI_Neighbor_allgatherv_init, FC_PEER_NONE, 0, 3, 24, 0xcc000002, 0, 32);
    check_rec(&recs[6], FC_EV_COUNTS, 0, 0, 0, 8, 2, 0, 16);
    check_rec(&recs[7], FC_EV_COUNTS, 2, 0, 0, 8, 1, 0, 0);
    check_rec(&recs[8], FC_EV_MPI_Neighbor_allgather, FC_PEER_NONE, 0, 0, 0, 0, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_send, setup),
        cmocka_unit_test_setup(test_receives, setup),
        cmocka_unit_test_setup(test_sendrecv, setup),
        cmocka_unit_test_setup(test_probe_and_matched_receive, setup),
        cmocka_unit_test_setup(test_waitall_completions, setup),
        cmocka_unit_test_setup(test_testall_nothing_and_err_in_status, setup),
        cmocka_unit_test_setup(test_waitall_in_steps, setup),
        cmocka_unit_test_setup(test_any_some_and_cancel, setup),
        cmocka_unit_test_setup(test_polls_folded, setup),
        cmocka_unit_test_setup(test_polls_each, setup),
        cmocka_unit_test_setup(test_startall_and_status_marks, setup),
        cmocka_unit_test_setup(test_rooted_collectives, setup),
        cmocka_unit_test_setup(test_all_to_all_collectives, setup),
        cmocka_unit_test_setup(test_intercomm_collectives, setup),
        cmocka_unit_test_setup(test_communicators, setup),
        cmocka_unit_test_setup(test_f08_arguments, setup),
        cmocka_unit_test_setup(test_neighbourhood_collectives, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
