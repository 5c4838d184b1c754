/* test-wrappers-steps.c: MPI_Waitall completed through PMPI_Waitsome steps (libtrace/waitall.c)
 * leaves the application's requests and statuses as MPI_Waitall would, and notes which request
 * completed in which step.
 *
 * waitall.c is compiled into this test (included below) against a stub MPI whose requests complete
 * in steps the test scripts: PMPI_Waitsome completes, each call, the requests whose step has come
 * (advancing to the next such step, as a blocking call would), filling statuses as MPICH does (a
 * receive's envelope and count; a send's cancelled bit alone; MPI_ERROR only with
 * MPI_ERR_IN_STATUS); PMPI_Waitall handles one null or inactive request as MPICH does and answers
 * any other call with PASSED, so that a call handed over whole can be recognised. The steps write
 * the COMPLETE records of the requests they complete into the thread's chunk, after a slot left for
 * the call's record, without taking them (fc__rec_testall does: test-wrappers-record.c). The
 * expected values are worked out from the script by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* cmocka.h needs the headers above included first. */
#include <cmocka.h>

#include "record.h"

#include "waitall.c"

int fc__use_tsc = 0;

/* What req.c defines for the COMPLETE records: no collective requests here. */
__thread unsigned fc__nbc_next;
_Atomic size_t fc__pcoll_live;
int fc__coll_req(MPI_Request req)
{
    (void)req;
    return 0;
}

/* The thread the steps record on, its chunk, and the call (entered at time 0). */
enum { CHUNK = 128 };
static fc__rec chunk[CHUNK];
static fc__thread thr;
static fc__call call = {.t0 = 0, .kind = FC_EV_MPI_Waitall};
#define WAITALL(n, r, s, st) fc__steps_Waitall(&thr, &call, (n), (r), (s), (st))

/* Checks the COMPLETE record r the steps made: request h, envelope (peer FC_PEER_NONE: none). */
static void check_rec(const fc__rec *r, MPI_Request h, int32_t peer, int32_t tag, uint64_t bytes)
{
    assert_int_equal(r->kind, FC_EV_COMPLETE);
    assert_int_equal(r->obj, FC__HANDLE(h));
    assert_int_equal(r->peer, peer);
    assert_int_equal(r->tag, tag);
    assert_int_equal(r->bytes, bytes);
    assert_int_equal(r->flags, FC_EVF_OWN_TIME | (peer != FC_PEER_NONE ? FC_EVF_STATUS : 0));
    assert_int_equal(r->t0, r->t1);
    assert_int_equal(r->site, 0);
}

/* ---- the stub MPI ---- */
#define PASSED 4242 /* PMPI_Waitall's answer to a call handed over whole */
#define GARBAGE 0x55555555

typedef struct fake {
    MPI_Request h;
    int ready;      /* the step at which it completes */
    int persistent; /* stays allocated, inactive once complete */
    int active;     /* a persistent request: started */
    int send;       /* its status gets the cancelled bit alone */
    int source, tag, bytes;
    int error;      /* the request's error code, 0 for none */
} fake;

static fake fakes[64];
static int nfakes, step, waitsome_calls, waitall_calls, waitsome_fails;
static int passed_count;
static MPI_Request *passed_reqs;
static MPI_Status *passed_sts;

static fake *find(MPI_Request h)
{
    for (int i = 0; i < nfakes; i++)
        if (fakes[i].h == h)
            return &fakes[i];
    return NULL;
}

static int pending(MPI_Request h)
{
    const fake *f = h == MPI_REQUEST_NULL ? NULL : find(h);
    return f != NULL && (!f->persistent || f->active);
}

int PMPI_Waitsome(int n, MPI_Request live[], int *out, int idx[], MPI_Status sts[])
{
    waitsome_calls++;
    if (waitsome_fails)
        return waitsome_fails;
    int any = 0;
    for (int j = 0; j < n; j++)
        any |= pending(live[j]);
    if (!any) {
        *out = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    int k = 0, rc = MPI_SUCCESS;
    const fake *got[64];
    while (k == 0) {
        step++;
        for (int j = 0; j < n; j++) {
            if (!pending(live[j]) || find(live[j])->ready > step)
                continue;
            fake *f = find(live[j]);
            if (sts != MPI_STATUSES_IGNORE) {
                if (f->send) {
                    sts[k].count_hi_and_cancelled &= ~1;
                } else {
                    sts[k].MPI_SOURCE = f->source;
                    sts[k].MPI_TAG = f->tag;
                    sts[k].count_lo = f->bytes;
                    sts[k].count_hi_and_cancelled = 0;
                }
            }
            if (f->error)
                rc = MPI_ERR_IN_STATUS;
            if (f->persistent)
                f->active = 0;
            else
                live[j] = MPI_REQUEST_NULL;
            got[k] = f;
            idx[k++] = j;
        }
    }
    *out = k;
    if (rc == MPI_ERR_IN_STATUS && sts != MPI_STATUSES_IGNORE)
        for (int i = 0; i < k; i++)
            sts[i].MPI_ERROR = got[i]->error;
    return rc;
}

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status sts[])
{
    waitall_calls++;
    if (count == 1 && !pending(reqs[0])) {
        if (sts != MPI_STATUSES_IGNORE) {
            sts[0].MPI_SOURCE = MPI_ANY_SOURCE;
            sts[0].MPI_TAG = MPI_ANY_TAG;
            sts[0].count_lo = 0;
            sts[0].count_hi_and_cancelled = 0;
            if (reqs[0] != MPI_REQUEST_NULL)
                sts[0].MPI_ERROR = MPI_SUCCESS; /* MPICH: a persistent request goes through completion */
        }
        return MPI_SUCCESS;
    }
    passed_count = count;
    passed_reqs = reqs;
    passed_sts = sts;
    return PASSED;
}

static int setup(void **state)
{
    (void)state;
    memset(fakes, 0, sizeof fakes);
    nfakes = step = waitsome_calls = waitall_calls = waitsome_fails = 0;
    passed_count = -1;
    passed_reqs = NULL;
    passed_sts = NULL;
    memset(chunk, 0, sizeof chunk);
    thr.cur = chunk;
    thr.end = chunk + CHUNK;
    return 0;
}

static MPI_Request add(fake f)
{
    f.h = (MPI_Request)(0xac000100 + nfakes);
    fakes[nfakes++] = f;
    return f.h;
}
static MPI_Request recv_at(int ready, int source, int tag, int bytes)
{
    return add((fake){.ready = ready, .source = source, .tag = tag, .bytes = bytes});
}

static void garble(MPI_Status *sts, int n)
{
    memset(sts, 0x55, (size_t)n * sizeof *sts);
}

static void check_status(const MPI_Status *st, int source, int tag, int bytes, int error)
{
    assert_int_equal(st->MPI_SOURCE, source);
    assert_int_equal(st->MPI_TAG, tag);
    assert_int_equal(st->count_lo, bytes);
    assert_int_equal(st->count_hi_and_cancelled, 0);
    assert_int_equal(st->MPI_ERROR, error);
}

/* ---- tests ---- */

/* Receives completing in steps 2, 1 and 3, a null request, a send (step 1), an inactive persistent
 * request and a started one (step 3): each status at its request's index, as MPICH's Waitall
 * writes it; handles nulled except the persistent ones; the steps in completion order. */
static void test_statuses_in_place(void **state)
{
    (void)state;
    MPI_Request r0 = recv_at(2, 1, 10, 8), r2 = recv_at(1, 2, 11, 16), r4 = recv_at(3, 3, 12, 24);
    MPI_Request snd = add((fake){.ready = 1, .send = 1});
    MPI_Request idle = add((fake){.persistent = 1, .active = 0});
    MPI_Request prs = add((fake){.ready = 3, .persistent = 1, .active = 1, .source = 4, .tag = 13, .bytes = 4});
    MPI_Request reqs[7] = {r0, MPI_REQUEST_NULL, r2, snd, r4, idle, prs};
    MPI_Status sts[7];
    garble(sts, 7);
    const fc__steps *steps = NULL;
    assert_int_equal(WAITALL(7, reqs, sts, &steps), MPI_SUCCESS);
    check_status(&sts[0], 1, 10, 8, MPI_SUCCESS);
    check_status(&sts[2], 2, 11, 16, MPI_SUCCESS);
    check_status(&sts[4], 3, 12, 24, MPI_SUCCESS);
    check_status(&sts[6], 4, 13, 4, MPI_SUCCESS);
    /* The send's status: its cancelled bit cleared and MPI_ERROR set, the rest as it was. */
    assert_int_equal(sts[3].MPI_SOURCE, GARBAGE);
    assert_int_equal(sts[3].MPI_TAG, GARBAGE);
    assert_int_equal(sts[3].count_lo, GARBAGE);
    assert_int_equal(sts[3].count_hi_and_cancelled, GARBAGE & ~1);
    assert_int_equal(sts[3].MPI_ERROR, MPI_SUCCESS);
    /* The null request: an empty status, MPI_ERROR untouched; the inactive one: empty. */
    check_status(&sts[1], MPI_ANY_SOURCE, MPI_ANY_TAG, 0, GARBAGE);
    check_status(&sts[5], MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
    const MPI_Request want[7] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                                 MPI_REQUEST_NULL, idle, prs};
    for (int i = 0; i < 7; i++)
        assert_int_equal(reqs[i], want[i]);
    /* Step 1: entries 2 and 3; step 2: entry 0; step 3: entries 4 and 6. The last step saw only
     * the inactive request and said so (MPI_UNDEFINED): four calls. Their records follow the slot
     * left for the call's, in completion order, each at its step's time; the thread's chunk is
     * not yet advanced. */
    assert_non_null(steps);
    assert_int_equal(steps->n, 5);
    assert_ptr_equal(steps->head, chunk);
    assert_ptr_equal(steps->recs, chunk + 1);
    assert_ptr_equal(thr.cur, chunk);
    assert_int_equal(waitsome_calls, 4);
    const fc__rec *r = steps->recs;
    check_rec(&r[0], r2, 2, 11, 16);
    check_rec(&r[1], snd, FC_PEER_NONE, 0, 0); /* MPI wrote no envelope: the record gives none */
    check_rec(&r[2], r0, 1, 10, 8);
    check_rec(&r[3], r4, 3, 12, 24);
    check_rec(&r[4], prs, 4, 13, 4);
    assert_int_equal(r[0].t0, r[1].t0);
    assert_int_equal(r[3].t0, r[4].t0);
    assert_true(r[1].t0 <= r[2].t0 && r[2].t0 <= r[3].t0);
    const unsigned char stepped[7] = {1, 0, 1, 1, 1, 0, 1};
    for (int i = 0; i < 7; i++)
        assert_int_equal(steps->stepped[i], stepped[i]);
    /* PMPI_Waitall ran on the null and on the inactive request, one at a time. */
    assert_int_equal(waitall_calls, 2);
    /* For the record of those: the handles as they were before the call, and their statuses as
     * MPI wrote them, in array order. */
    const MPI_Request before[7] = {r0, MPI_REQUEST_NULL, r2, snd, r4, idle, prs};
    for (int i = 0; i < 7; i++)
        assert_int_equal(steps->reqs[i], before[i]);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(steps->sts[k].MPI_SOURCE, MPI_ANY_SOURCE);
        assert_int_equal(steps->sts[k].MPI_TAG, MPI_ANY_TAG);
        assert_int_equal(fc__status_bytes(&steps->sts[k]), 0);
    }
}

/* MPI_STATUSES_IGNORE: no status is written, requests and steps as with statuses. */
static void test_statuses_ignored(void **state)
{
    (void)state;
    MPI_Request a = recv_at(2, 1, 1, 1), b = recv_at(1, 1, 2, 2);
    MPI_Request reqs[3] = {a, MPI_REQUEST_NULL, b};
    const fc__steps *steps = NULL;
    assert_int_equal(WAITALL(3, reqs, MPI_STATUSES_IGNORE, &steps), MPI_SUCCESS);
    for (int i = 0; i < 3; i++)
        assert_int_equal(reqs[i], MPI_REQUEST_NULL);
    assert_int_equal(steps->n, 2);
    assert_int_equal(waitall_calls, 0); /* nothing to fill for the null request */
    /* The envelopes reach the records all the same: entry 2 first, then entry 0. */
    check_rec(&steps->recs[0], b, 1, 2, 2);
    check_rec(&steps->recs[1], a, 1, 1, 1);
    assert_int_equal(steps->sts[0].MPI_SOURCE, FC__SRC_UNSET);
}

/* Calls MPI must judge, or with nothing to wait for, go to PMPI_Waitall whole. */
static void test_handed_over(void **state)
{
    (void)state;
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[2];
    const fc__steps *steps = (const fc__steps *)&steps;
    assert_int_equal(WAITALL(0, reqs, sts, &steps), PASSED);
    assert_null(steps);
    assert_int_equal(passed_count, 0);
    assert_int_equal(WAITALL(-1, reqs, sts, &steps), PASSED);
    assert_int_equal(passed_count, -1);
    assert_int_equal(WAITALL(2, NULL, sts, &steps), PASSED);
    assert_null(passed_reqs);
    assert_int_equal(WAITALL(2, reqs, NULL, &steps), PASSED);
    assert_null(passed_sts);
    /* Only null requests: PMPI_Waitall writes their empty statuses itself; the steps note the
     * null handles for the record, and no status. */
    assert_int_equal(WAITALL(2, reqs, sts, &steps), PASSED);
    assert_ptr_equal(passed_reqs, reqs);
    assert_ptr_equal(passed_sts, sts);
    assert_non_null(steps);
    assert_int_equal(steps->n, 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(steps->reqs[i], MPI_REQUEST_NULL);
        assert_int_equal(steps->stepped[i], 0);
        assert_int_equal(steps->sts[i].MPI_SOURCE, FC__SRC_UNSET);
    }
    assert_int_equal(waitsome_calls, 0);
}

/* A request that fails (step 1) does not stop the others (step 2): MPI_ERR_IN_STATUS, and every
 * status' MPI_ERROR set, MPI_SUCCESS for the null request too. */
static void test_error_in_a_request(void **state)
{
    (void)state;
    MPI_Request bad = add((fake){.ready = 1, .source = 1, .tag = 5, .bytes = 2, .error = 15});
    MPI_Request good = recv_at(2, 1, 6, 4);
    MPI_Request reqs[3] = {bad, MPI_REQUEST_NULL, good};
    MPI_Status sts[3];
    garble(sts, 3);
    const fc__steps *steps = NULL;
    assert_int_equal(WAITALL(3, reqs, sts, &steps), MPI_ERR_IN_STATUS);
    assert_int_equal(steps->n, 2);
    assert_int_equal(reqs[0], MPI_REQUEST_NULL);
    assert_int_equal(reqs[2], MPI_REQUEST_NULL);
    check_status(&sts[0], 1, 5, 2, 15);
    check_status(&sts[2], 1, 6, 4, MPI_SUCCESS);
    check_status(&sts[1], MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
}

/* An error of the call itself ends the steps at once: returned as it came, nothing else done. */
static void test_error_of_the_call(void **state)
{
    (void)state;
    MPI_Request reqs[2] = {recv_at(1, 0, 0, 0), MPI_REQUEST_NULL};
    MPI_Status sts[2];
    garble(sts, 2);
    waitsome_fails = MPI_ERR_REQUEST;
    const fc__steps *steps = NULL;
    assert_int_equal(WAITALL(2, reqs, sts, &steps), MPI_ERR_REQUEST);
    assert_int_equal(steps->n, 0);
    assert_int_equal(waitall_calls, 0);
    assert_int_equal(sts[1].MPI_SOURCE, GARBAGE);
    assert_int_not_equal(reqs[0], MPI_REQUEST_NULL);
}

/* Many requests (more than the scratch first holds), completing one a step from the last: each
 * still lands at its own index, in completion order, however the live ones are packed. */
static void test_many_in_reverse(void **state)
{
    (void)state;
    enum { N = 40 };
    MPI_Request reqs[N];
    MPI_Status sts[N];
    for (int i = 0; i < N; i++)
        reqs[i] = recv_at(N - i, i, 100 + i, 4 * i);
    garble(sts, N);
    const fc__steps *steps = NULL;
    assert_int_equal(WAITALL(N, reqs, sts, &steps), MPI_SUCCESS);
    assert_int_equal(steps->n, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(reqs[i], MPI_REQUEST_NULL);
        check_status(&sts[i], i, 100 + i, 4 * i, MPI_SUCCESS);
        int j = N - 1 - i; /* the i-th to complete */
        check_rec(&steps->recs[i], (MPI_Request)(0xac000100 + j), j, 100 + j, 4 * (uint64_t)j);
    }
    for (int k = 1; k < N; k++)
        assert_true(steps->recs[k - 1].t0 <= steps->recs[k].t0);
    assert_int_equal(waitsome_calls, N);
}

/* A chunk without room for the call's records (the call's own and one a request): the records go
 * to scratch, the same as they would have been in the chunk, and the chunk is left alone. */
static void test_no_room(void **state)
{
    (void)state;
    MPI_Request a = recv_at(2, 5, 7, 9), b = recv_at(1, 6, 8, 10);
    MPI_Request reqs[2] = {a, b};
    MPI_Status sts[2];
    garble(sts, 2);
    thr.end = thr.cur + 2;
    const fc__steps *steps = NULL;
    assert_int_equal(WAITALL(2, reqs, sts, &steps), MPI_SUCCESS);
    assert_int_equal(steps->n, 2);
    assert_null(steps->head);
    assert_true(steps->recs < chunk || steps->recs >= chunk + CHUNK);
    check_rec(&steps->recs[0], b, 6, 8, 10);
    check_rec(&steps->recs[1], a, 5, 7, 9);
    assert_int_equal(chunk[0].kind, 0);
    assert_int_equal(chunk[1].kind, 0);
    check_status(&sts[0], 5, 7, 9, MPI_SUCCESS);
    check_status(&sts[1], 6, 8, 10, MPI_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_statuses_in_place, setup),
        cmocka_unit_test_setup(test_statuses_ignored, setup),
        cmocka_unit_test_setup(test_handed_over, setup),
        cmocka_unit_test_setup(test_error_in_a_request, setup),
        cmocka_unit_test_setup(test_error_of_the_call, setup),
        cmocka_unit_test_setup(test_many_in_reverse, setup),
        cmocka_unit_test_setup(test_no_room, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
