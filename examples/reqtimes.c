/* reqtimes.c: receives that complete at well-separated times, all completed by one MPI_Waitall,
 * then the same receives timed one by one by polling MPI_Test, then what MPI_Waitall returns in
 * the cases MPI defines (null, inactive and persistent requests, MPI_STATUSES_IGNORE, count 0,
 * truncated receives, threads). Shows the per-request completion times of the tracer and serves
 * the test that checks them against the times measured here.
 *
 * Usage: mpiexec -n 2 reqtimes K GAP_MS [TIMES_FILE]
 *   Phases 1 and 2: rank 0 posts K MPI_Irecv (tag k) and meets rank 1 in a barrier; rank 1 then
 *   sends message k at (k + 1) x GAP_MS after leaving the barrier, each message carrying the
 *   CLOCK_MONOTONIC time at which it was sent. Phase 1 completes the receives with one MPI_Waitall;
 *   phase 2 polls MPI_Test on each, every 0.1 ms, and notes when it completes. Rank 0 writes these times to
 *   TIMES_FILE (one rank of one host: both ranks read the same clock):
 *     waitall W0 W1          CLOCK_MONOTONIC ns just before and just after phase 1's MPI_Waitall
 *     sent S0 ... S(K-1)     phase 1: when rank 1 sent each message
 *     poll L0 ... L(K-1)     phase 2: ns from the sending of message k to its MPI_Test success
 *     note TEXT              what MPI left to the implementation, for a reader of the file
 *   Then the cases of MPI_Waitall, whose results rank 0 prints on standard output: only what MPI
 *   returned (error classes, statuses, whether each handle is null or kept), which must not change
 *   under the tracer. */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXK 64
#define PATTERN 0x55555555 /* what the statuses hold before a call: fields MPI leaves alone show it */

static int rank;
static FILE *times;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000), (long)(t % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
        ;
}

static void sleep_ms(int ms)
{
    sleep_until(now_ns() + (int64_t)ms * 1000000);
}

/* ---- phases 1 and 2: the timed receives ---- */

static void timed(int k, int gap_ms, int poll)
{
    int64_t msg[MAXK][2];
    MPI_Request req[MAXK];
    MPI_Status st[MAXK];
    if (rank == 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        int64_t start = now_ns();
        for (int i = 0; i < k; i++) {
            sleep_until(start + (int64_t)(i + 1) * gap_ms * 1000000);
            msg[i][0] = now_ns();
            msg[i][1] = i;
            MPI_Send(msg[i], 2, MPI_INT64_T, 0, i, MPI_COMM_WORLD);
        }
        return;
    }
    for (int i = 0; i < k; i++)
        MPI_Irecv(msg[i], 2, MPI_INT64_T, 1, i, MPI_COMM_WORLD, &req[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t seen[MAXK];
    if (!poll) {
        int64_t w0 = now_ns();
        MPI_Waitall(k, req, st);
        int64_t w1 = now_ns();
        if (times != NULL) {
            fprintf(times, "waitall %lld %lld\nsent", (long long)w0, (long long)w1);
            for (int i = 0; i < k; i++)
                fprintf(times, " %lld", (long long)msg[i][0]);
            fprintf(times, "\n");
        }
    } else {
        int left = k;
        for (int i = 0; i < k; i++)
            seen[i] = -1;
        /* A sweep every 0.1 ms: precise enough against gaps of milliseconds, and few enough calls
         * to keep a trace of this phase small. */
        for (; left > 0; sleep_until(now_ns() + 100000))
            for (int i = 0; i < k; i++) {
                int flag = 0;
                if (seen[i] >= 0)
                    continue;
                MPI_Test(&req[i], &flag, &st[i]);
                if (flag) {
                    seen[i] = now_ns();
                    left--;
                }
            }
        if (times != NULL) {
            fprintf(times, "poll");
            for (int i = 0; i < k; i++)
                fprintf(times, " %lld", (long long)(seen[i] - msg[i][0]));
            fprintf(times, "\n");
        }
    }
    int ok = 1;
    for (int i = 0; i < k; i++) {
        int n = 0;
        MPI_Get_count(&st[i], MPI_INT64_T, &n);
        ok &= st[i].MPI_SOURCE == 1 && st[i].MPI_TAG == i && n == 2 && msg[i][1] == i;
    }
    printf("phase %d: %d receives %s\n", poll ? 2 : 1, k, ok ? "ok" : "WRONG");
}

/* ---- the cases of MPI_Waitall ---- */

static const char *err_name(int code)
{
    static char buf[32];
    int cls;
    if (code == PATTERN)
        return "untouched";
    if (code == MPI_SUCCESS)
        return "success";
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS) {
        snprintf(buf, sizeof buf, "code %d", code);
        return buf;
    }
    switch (cls) {
    case MPI_ERR_IN_STATUS: return "in_status";
    case MPI_ERR_TRUNCATE: return "truncate";
    case MPI_ERR_PENDING: return "pending";
    case MPI_ERR_REQUEST: return "request";
    default:
        snprintf(buf, sizeof buf, "class %d", cls);
        return buf;
    }
}

/* Prints what a call returned: its error class, and for each request whether its handle is now
 * null, the one it had (kept) or another, and every field of its status (raw values; the count as
 * MPI_Get_count of bytes and the cancelled flag as MPI_Test_cancelled read them). */
static void show(const char *what, int rc, int n, const MPI_Request *r, const MPI_Request *before,
                 const MPI_Status *st)
{
    printf("%s: rc=%s\n", what, err_name(rc));
    for (int i = 0; i < n; i++) {
        const char *h = r[i] == MPI_REQUEST_NULL ? "null" : r[i] == before[i] ? "kept" : "other";
        if (st == MPI_STATUSES_IGNORE) {
            printf("  [%d] req=%s\n", i, h);
            continue;
        }
        int count = -1, cancelled = -1;
        MPI_Get_count(&st[i], MPI_BYTE, &count);
        MPI_Test_cancelled(&st[i], &cancelled);
        printf("  [%d] req=%s source=%d tag=%d error=%s count=%d cancelled=%d\n", i, h,
               st[i].MPI_SOURCE, st[i].MPI_TAG, err_name(st[i].MPI_ERROR), count, cancelled);
    }
}

/* Receives, a null request, an inactive and an active persistent request, a send and a wildcard
 * receive, completing over several steps; then the persistent request reused. */
static void mixed(void)
{
    int rbuf[10], pbuf[4], qbuf[8], wbuf[8], sbuf[4] = {1, 2, 3, 4};
    if (rank == 1) {
        int out[6] = {6, 5, 4, 3, 2, 1}, in[4];
        sleep_ms(20);
        MPI_Send(out, 3, MPI_INT, 0, 21, MPI_COMM_WORLD);
        MPI_Recv(in, 4, MPI_INT, 0, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sleep_ms(20);
        MPI_Send(out, 5, MPI_INT, 0, 23, MPI_COMM_WORLD);
        sleep_ms(20);
        MPI_Send(out, 2, MPI_INT, 0, 24, MPI_COMM_WORLD);
        MPI_Send(out, 6, MPI_INT, 0, 23, MPI_COMM_WORLD);
        return;
    }
    MPI_Request r[6], before[6], idle, pers;
    MPI_Status st[6];
    MPI_Recv_init(pbuf, 4, MPI_INT, 1, 29, MPI_COMM_WORLD, &idle);
    MPI_Recv_init(qbuf, 8, MPI_INT, 1, 23, MPI_COMM_WORLD, &pers);
    MPI_Irecv(rbuf, 10, MPI_INT, 1, 21, MPI_COMM_WORLD, &r[0]);
    r[1] = MPI_REQUEST_NULL;
    r[2] = idle;
    MPI_Isend(sbuf, 4, MPI_INT, 1, 22, MPI_COMM_WORLD, &r[3]);
    r[4] = pers;
    MPI_Start(&r[4]);
    MPI_Irecv(wbuf, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[5]);
    memcpy(before, r, sizeof r);
    memset(st, 0x55, sizeof st);
    int rc = MPI_Waitall(6, r, st);
    show("mixed", rc, 6, r, before, st);
    MPI_Start(&r[4]);
    before[4] = r[4];
    memset(st, 0x55, sizeof st);
    rc = MPI_Waitall(1, &r[4], st);
    show("persistent again", rc, 1, &r[4], &before[4], st);
    MPI_Request_free(&idle);
    MPI_Request_free(&pers);
}

/* The same kinds with MPI_STATUSES_IGNORE. */
static void ignored(void)
{
    int rbuf[4], pbuf[4], sbuf[4] = {0};
    if (rank == 1) {
        MPI_Recv(rbuf, 4, MPI_INT, 0, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sleep_ms(20);
        MPI_Send(sbuf, 4, MPI_INT, 0, 41, MPI_COMM_WORLD);
        return;
    }
    MPI_Request r[4], before[4], idle;
    MPI_Recv_init(pbuf, 4, MPI_INT, 1, 49, MPI_COMM_WORLD, &idle);
    MPI_Irecv(rbuf, 4, MPI_INT, 1, 41, MPI_COMM_WORLD, &r[0]);
    r[1] = MPI_REQUEST_NULL;
    r[2] = idle;
    MPI_Isend(sbuf, 4, MPI_INT, 1, 42, MPI_COMM_WORLD, &r[3]);
    memcpy(before, r, sizeof r);
    int rc = MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    show("statuses ignored", rc, 4, r, before, MPI_STATUSES_IGNORE);
    MPI_Request_free(&idle);
}

/* Nothing to wait for: count 0, and only null and inactive requests. */
static void nothing(void)
{
    if (rank == 1)
        return;
    MPI_Request r[2], before[2], idle;
    MPI_Status st[2];
    int buf[1];
    memset(st, 0x55, sizeof st);
    int rc = MPI_Waitall(0, r, st);
    printf("count 0: rc=%s status untouched=%d\n", err_name(rc), st[0].MPI_SOURCE == PATTERN);
    MPI_Recv_init(buf, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, &idle);
    r[0] = MPI_REQUEST_NULL;
    r[1] = idle;
    memcpy(before, r, sizeof r);
    rc = MPI_Waitall(2, r, st);
    show("null and inactive", rc, 2, r, before, st);
    MPI_Request_free(&idle);
}

/* A receive truncated last in the array: MPI_ERR_IN_STATUS, each status' error. The statuses
 * start zeroed: MPICH leaves the error field of a null request's status alone when the failure
 * comes later in the array, where MPI asks for it to be set. */
static void truncated_last(void)
{
    int six[6] = {0}, a[4], b[2];
    if (rank == 1) {
        MPI_Send(six, 4, MPI_INT, 0, 51, MPI_COMM_WORLD);
        sleep_ms(20);
        MPI_Send(six, 6, MPI_INT, 0, 52, MPI_COMM_WORLD);
        return;
    }
    MPI_Request r[3], before[3];
    MPI_Status st[3];
    MPI_Irecv(a, 4, MPI_INT, 1, 51, MPI_COMM_WORLD, &r[0]);
    r[1] = MPI_REQUEST_NULL;
    MPI_Irecv(b, 2, MPI_INT, 1, 52, MPI_COMM_WORLD, &r[2]);
    memcpy(before, r, sizeof r);
    memset(st, 0, sizeof st);
    int rc = MPI_Waitall(3, r, st);
    show("truncated last", rc, 3, r, before, st);
}

/* A receive truncated first: MPI_ERR_IN_STATUS; the others either completed (MPI_SUCCESS) or, as
 * MPI allows, pending (MPI_ERR_PENDING, still active, completed here by MPI_Wait). What the
 * application ends up with is printed; which of the two MPI chose goes to the times file. */
static void truncated_first(void)
{
    int six[6] = {0}, a[2], b[4], c[4];
    if (rank == 1) {
        MPI_Send(six, 6, MPI_INT, 0, 61, MPI_COMM_WORLD);
        MPI_Send(six, 4, MPI_INT, 0, 62, MPI_COMM_WORLD);
        sleep_ms(20);
        MPI_Send(six, 3, MPI_INT, 0, 63, MPI_COMM_WORLD);
        return;
    }
    MPI_Request r[3];
    MPI_Status st[3];
    MPI_Irecv(a, 2, MPI_INT, 1, 61, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(b, 4, MPI_INT, 1, 62, MPI_COMM_WORLD, &r[1]);
    MPI_Irecv(c, 4, MPI_INT, 1, 63, MPI_COMM_WORLD, &r[2]);
    memset(st, 0, sizeof st);
    int rc = MPI_Waitall(3, r, st);
    printf("truncated first: rc=%s [0] error=%s req=%s\n", err_name(rc), err_name(st[0].MPI_ERROR),
           r[0] == MPI_REQUEST_NULL ? "null" : "kept");
    for (int i = 1; i < 3; i++) {
        int pending = st[i].MPI_ERROR == MPI_ERR_PENDING, count = -1;
        if (pending)
            MPI_Wait(&r[i], &st[i]);
        MPI_Get_count(&st[i], MPI_BYTE, &count);
        printf("  [%d] %s req=%s source=%d tag=%d count=%d\n", i,
               pending || st[i].MPI_ERROR == MPI_SUCCESS ? "received" : err_name(st[i].MPI_ERROR),
               r[i] == MPI_REQUEST_NULL ? "null" : "kept", st[i].MPI_SOURCE, st[i].MPI_TAG, count);
        if (times != NULL)
            fprintf(times, "note truncated first: [%d] %s\n", i, pending ? "pending" : "completed");
    }
}

/* Two threads of rank 0 each complete their own receives with MPI_Waitall at once. */
typedef struct waiter {
    int id, tags[3], counts[3], ok;
} waiter;

static void *waiter_main(void *p)
{
    waiter *w = p;
    int buf[3][8];
    MPI_Request r[3];
    MPI_Status st[3];
    for (int i = 0; i < 3; i++)
        MPI_Irecv(buf[i], 8, MPI_INT, 1, 70 + 10 * w->id + i, MPI_COMM_WORLD, &r[i]);
    w->ok = MPI_Waitall(3, r, st) == MPI_SUCCESS;
    for (int i = 0; i < 3; i++) {
        w->tags[i] = st[i].MPI_TAG;
        MPI_Get_count(&st[i], MPI_INT, &w->counts[i]);
        w->ok &= r[i] == MPI_REQUEST_NULL;
    }
    return NULL;
}

static void threads(void)
{
    int out[8] = {0};
    if (rank == 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < 3; i++)
            for (int id = 0; id < 2; id++) {
                sleep_ms(5);
                MPI_Send(out, 1 + i + id, MPI_INT, 0, 70 + 10 * id + i, MPI_COMM_WORLD);
            }
        return;
    }
    waiter w[2] = {{.id = 0}, {.id = 1}};
    pthread_t th[2];
    for (int id = 0; id < 2; id++)
        pthread_create(&th[id], NULL, waiter_main, &w[id]);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int id = 0; id < 2; id++) {
        pthread_join(th[id], NULL);
        printf("thread %d: ok=%d tags %d %d %d counts %d %d %d\n", id, w[id].ok, w[id].tags[0],
               w[id].tags[1], w[id].tags[2], w[id].counts[0], w[id].counts[1], w[id].counts[2]);
    }
}

int main(int argc, char **argv)
{
    int provided, nranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int k = argc > 2 ? atoi(argv[1]) : 0, gap = argc > 2 ? atoi(argv[2]) : 0;
    if (nranks != 2 || k < 1 || k > MAXK || gap < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 reqtimes K(1..%d) GAP_MS [TIMES_FILE]\n", MAXK);
        MPI_Finalize();
        return 2;
    }
    if (rank == 0 && argc > 3 && (times = fopen(argv[3], "w")) == NULL) {
        perror(argv[3]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    timed(k, gap, 0);
    timed(k, gap, 1);
    mixed();
    ignored();
    nothing();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    truncated_last();
    truncated_first();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (provided == MPI_THREAD_MULTIPLE)
        threads();
    else if (rank == 0)
        printf("threads: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Barrier(MPI_COMM_WORLD);
    if (times != NULL)
        fclose(times);
    MPI_Finalize();
    return 0;
}
