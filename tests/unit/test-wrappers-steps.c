/* test-wrappers-steps.c: MPI_Waitall completed through PMPI_Waitsome steps (libtrace/waitall.c)
 * leaves the application's requests and statuses as MPI_Waitall would, and notes which request
 * completed in which step.
 *
 * waitall.c is compiled into this test (included below) against a stub MPI whose requests complete
 * in steps the test scripts: PMPI_Waitsome completes, each call, the requests whose step has come
 * (advancing to the next such step, as a blocking call would), filling statuses as MPICH does (a
 * receive's envelope and count; a send's cancelled bit alone; MPI_ERROR only with
 * MPI_ERR_IN_STATUS); PMPI_Waitall handles one null or inactive request as MPICH does and answers
 * any other call with PASSED, so that a call handed over whole can be recognised. The expected
 * values are worked out from the script by hand. */
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
    assert_int_equal(fc__steps_Waitall(7, reqs, sts, &steps), MPI_SUCCESS);
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
     * the inactive request and said so (MPI_UNDEFINED): four calls. */
    assert_non_null(steps);
    assert_int_equal(steps->n, 5);
    const int order[5] = {2, 3, 0, 4, 6};
    for (int k = 0; k < 5; k++)
        assert_int_equal(steps->order[k], order[k]);
    assert_int_equal(waitsome_calls, 4);
    assert_int_equal(steps->when[2], steps->when[3]);
    assert_int_equal(steps->when[4], steps->when[6]);
    assert_true(steps->when[2] <= steps->when[0] && steps->when[0] <= steps->when[4]);
    assert_int_equal(steps->when[1], FC__NOT_STEPPED);
    assert_int_equal(steps->when[5], FC__NOT_STEPPED);
    /* PMPI_Waitall ran on the null and on the inactive request, one at a time. */
    assert_int_equal(waitall_calls, 2);
    /* For the record: the handles as they were before the call, and the statuses as MPI wrote
     * them, in completion order, then those of the null and the inactive request. */
    const MPI_Request before[7] = {r0, MPI_REQUEST_NULL, r2, snd, r4, idle, prs};
    for (int i = 0; i < 7; i++)
        assert_int_equal(steps->reqs[i], before[i]);
    const int source[7] = {2, FC__SRC_UNSET, 1, 3, 4, MPI_ANY_SOURCE, MPI_ANY_SOURCE};
    const int tag[7] = {11, 0, 10, 12, 13, MPI_ANY_TAG, MPI_ANY_TAG};
    const uint64_t bytes[7] = {16, 0, 8, 24, 4, 0, 0};
    /* (the send's status: MPI wrote no envelope, so the record gives it none) */
    for (int k = 0; k < 7; k++) {
        assert_int_equal(steps->sts[k].MPI_SOURCE, source[k]);
        if (source[k] != FC__SRC_UNSET) {
            assert_int_equal(steps->sts[k].MPI_TAG, tag[k]);
            assert_int_equal(fc__status_bytes(&steps->sts[k]), bytes[k]);
        }
    }
}

/* MPI_STATUSES_IGNORE: no status is written, requests and steps as with statuses. */
static void test_statuses_ignored(void **state)
{
    (void)state;
    MPI_Request a = recv_at(2, 1, 1, 1), b = recv_at(1, 1, 2, 2);
    MPI_Request reqs[3] = {a, MPI_REQUEST_NULL, b};
    const fc__steps *steps = NULL;
    assert_int_equal(fc__steps_Waitall(3, reqs, MPI_STATUSES_IGNORE, &steps), MPI_SUCCESS);
    for (int i = 0; i < 3; i++)
        assert_int_equal(reqs[i], MPI_REQUEST_NULL);
    assert_int_equal(steps->n, 2);
    assert_int_equal(steps->order[0], 2);
    assert_int_equal(steps->order[1], 0);
    assert_int_equal(waitall_calls, 0); /* nothing to fill for the null request */
    /* The envelopes reach the record all the same. */
    assert_int_equal(steps->sts[0].MPI_SOURCE, 1);
    assert_int_equal(steps->sts[0].MPI_TAG, 2);
    assert_int_equal(steps->sts[1].MPI_SOURCE, 1);
    assert_int_equal(steps->sts[1].MPI_TAG, 1);
    assert_int_equal(steps->sts[2].MPI_SOURCE, FC__SRC_UNSET);
}

/* Calls MPI must judge, or with nothing to wait for, go to PMPI_Waitall whole. */
static void test_handed_over(void **state)
{
    (void)state;
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[2];
    const fc__steps *steps = (const fc__steps *)&steps;
    assert_int_equal(fc__steps_Waitall(0, reqs, sts, &steps), PASSED);
    assert_null(steps);
    assert_int_equal(passed_count, 0);
    assert_int_equal(fc__steps_Waitall(-1, reqs, sts, &steps), PASSED);
    assert_int_equal(passed_count, -1);
    assert_int_equal(fc__steps_Waitall(2, NULL, sts, &steps), PASSED);
    assert_null(passed_reqs);
    assert_int_equal(fc__steps_Waitall(2, reqs, NULL, &steps), PASSED);
    assert_null(passed_sts);
    /* Only null requests: PMPI_Waitall writes their empty statuses itself; the steps note the
     * null handles for the record, and no status. */
    assert_int_equal(fc__steps_Waitall(2, reqs, sts, &steps), PASSED);
    assert_ptr_equal(passed_reqs, reqs);
    assert_ptr_equal(passed_sts, sts);
    assert_non_null(steps);
    assert_int_equal(steps->n, 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(steps->reqs[i], MPI_REQUEST_NULL);
        assert_int_equal(steps->when[i], FC__NOT_STEPPED);
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
    assert_int_equal(fc__steps_Waitall(3, reqs, sts, &steps), MPI_ERR_IN_STATUS);
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
    assert_int_equal(fc__steps_Waitall(2, reqs, sts, &steps), MPI_ERR_REQUEST);
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
    assert_int_equal(fc__steps_Waitall(N, reqs, sts, &steps), MPI_SUCCESS);
    assert_int_equal(steps->n, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(reqs[i], MPI_REQUEST_NULL);
        check_status(&sts[i], i, 100 + i, 4 * i, MPI_SUCCESS);
        assert_int_equal(steps->order[i], N - 1 - i);
    }
    for (int k = 1; k < N; k++)
        assert_true(steps->when[steps->order[k - 1]] <= steps->when[steps->order[k]]);
    assert_int_equal(waitsome_calls, N);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
