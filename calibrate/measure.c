/* calibrate/measure.c: the measurement engine of flowcut-calibrate: SKaMPI's repetitions and
 * statistics, rank 0's commands, ping-pongs, sets of simultaneously started flows, and IMB-style
 * multi-pair ping-pongs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "calibrate.h"

enum { TAG_CMD = 101, TAG_GO, TAG_STOP, TAG_RES, TAG_DATA, TAG_PING };
enum { OP_QUIT, OP_PONG, OP_FLOWS, OP_MPP };

typedef struct cmd {
    int32_t op, peer;
    uint64_t bytes;
    cal_flows flows;
} cmd;

static char *sbuf, *rbuf;

int cal_init(uint64_t max_bytes)
{
    /* One extra byte so that a zero-byte message still has a valid buffer. */
    sbuf = malloc(max_bytes + 1);
    rbuf = malloc(max_bytes + 1);
    int ok = sbuf != NULL && rbuf != NULL, all;
    if (ok)
        memset(sbuf, 0x5a, max_bytes + 1);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all ? 0 : -1;
}

/* Naps between polls, in microseconds: waiting for a command (rare, and idle ranks must leave the
 * cores to those that measure: 8 ranks share 2 cores on the emulated cluster), for a start
 * signal (the nap bounds the start skew of a flow set), and for data (the kernel's socket buffers
 * keep the link busy meanwhile: 100 us is 2.5 KB at 200 Mbit/s), and within a multi-pair
 * ping-pong on crowded CPUs, where each step of a message's protocol waits for the nap that ends
 * after it (shorter: 20 us, about 70 us with the kernel's default timer slack, against the 1.3 ms
 * that the smallest message, 32 KiB, takes at 200 Mbit/s). */
enum { NAP_CMD = 1000, NAP_GO = 100, NAP_DATA = 100, NAP_PP = CAL_NAP_PP };

/* Waits for req, sleeping nap_us between polls. */
static void wait_sleepy(MPI_Request *req, MPI_Status *st, long nap_us)
{
    const struct timespec nap = {0, nap_us * 1000};
    for (;;) {
        int done = 0;
        MPI_Test(req, &done, st);
        if (done)
            return;
        nanosleep(&nap, NULL);
    }
}

static void waitall_sleepy(int n, MPI_Request *req)
{
    for (int i = 0; i < n; i++)
        wait_sleepy(&req[i], MPI_STATUS_IGNORE, NAP_DATA);
}

/* ---- statistics --------------------------------------------------------------------------------- */

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

cal_stat cal_stat_of(double *v, size_t n)
{
    cal_stat s = {0, INFINITY, n};
    if (n == 0)
        return s;
    qsort(v, n, sizeof *v, dbl_cmp);
    /* The middle half: drop the lowest and highest quarter (at least one sample kept). */
    size_t lo = n / 4, hi = n - n / 4;
    if (hi <= lo)
        hi = lo + 1;
    size_t m = hi - lo;
    double sum = 0, ss = 0;
    for (size_t i = lo; i < hi; i++)
        sum += v[i];
    s.mean = sum / (double)m;
    for (size_t i = lo; i < hi; i++)
        ss += (v[i] - s.mean) * (v[i] - s.mean);
    /* The standard error of the trimmed mean, from the spread of the kept samples: a descheduled
     * repetition on a loaded machine must not make the others look noisy. */
    s.rel_se = m > 1 && s.mean > 0 ? sqrt(ss / (double)(m - 1) / (double)m) / s.mean : INFINITY;
    return s;
}

/* SKaMPI's stopping rule: at least min_reps samples, then until the standard error is below eps,
 * at most max_reps samples or the time budget. */
static int enough(const cal_opts *o, double *v, size_t n, double started)
{
    if (n < (size_t)o->min_reps)
        return 0;
    if (n >= (size_t)o->max_reps || MPI_Wtime() - started > o->budget)
        return 1;
    double *tmp = malloc(n * sizeof *tmp);
    if (tmp == NULL)
        return 1;
    memcpy(tmp, v, n * sizeof *v);
    cal_stat s = cal_stat_of(tmp, n);
    free(tmp);
    return s.rel_se <= o->eps;
}

/* ---- the other ranks ---------------------------------------------------------------------------- */

static void pong(int peer)
{
    for (;;) {
        MPI_Status st;
        int count;
        /* Busy: a ping-pong's two ranks are the only ones running, and sleeping here would add
         * the nap to every round trip. */
        MPI_Recv(rbuf, INT32_MAX, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == TAG_STOP)
            return;
        MPI_Get_count(&st, MPI_BYTE, &count);
        MPI_Send(sbuf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
    }
}

/* This rank's part in a flow set, or -1. *sender is set when it sends. */
static int my_flow(const cal_flows *f, int me, int *sender)
{
    for (int i = 0; i < f->n; i++) {
        if (f->src[i] == me) {
            *sender = 1;
            return i;
        }
        if (f->dst[i] == me) {
            *sender = 0;
            return i;
        }
    }
    return -1;
}

/* Plays every part rank me has in f, started at t0: the flows without delay at once, the others
 * when their delay has passed, napping between polls; t[i] is set for each flow i it receives,
 * from the flow's own start to the end of its receive. The receives are posted only at the start:
 * a receive left posted at the end of a set could not be cancelled reliably and would match the
 * next set's data; a rendezvous request that comes first waits as unexpected for the few
 * microseconds until it is posted. A second receive of one rank gets a buffer of its own. */
static void play(const cal_flows *f, int me, uint64_t bytes, double t0, double *t)
{
    MPI_Request req[CAL_MAXFLOWS];
    char *own[CAL_MAXFLOWS] = {0};
    int state[CAL_MAXFLOWS], left = 0, nrecv = 0; /* 0 no part, 1 waiting to start, 2 in flight */
    const struct timespec nap = {0, NAP_DATA * 1000L};
    for (int i = 0; i < f->n; i++) {
        state[i] = f->src[i] == me || f->dst[i] == me;
        left += state[i];
    }
    while (left > 0) {
        int moved = 0;
        double now = MPI_Wtime();
        for (int i = 0; i < f->n; i++) {
            uint64_t n = f->size[i] ? f->size[i] : bytes;
            if (state[i] == 1 && (f->dst[i] == me || now >= t0 + f->delay[i])) {
                if (f->src[i] == me) {
                    MPI_Isend(sbuf, (int)n, MPI_BYTE, f->dst[i], TAG_DATA, MPI_COMM_WORLD, &req[i]);
                } else {
                    char *buf = rbuf;
                    if (nrecv++ > 0 && (buf = own[i] = malloc(n + 1)) == NULL)
                        buf = rbuf; /* no memory: the data lands in rbuf twice, the times stand */
                    MPI_Irecv(buf, (int)n, MPI_BYTE, f->src[i], TAG_DATA, MPI_COMM_WORLD, &req[i]);
                }
                state[i] = 2;
                moved = 1;
            } else if (state[i] == 2) {
                int done = 0;
                MPI_Test(&req[i], &done, MPI_STATUS_IGNORE);
                if (done) {
                    if (f->dst[i] == me)
                        t[i] = MPI_Wtime() - (t0 + f->delay[i]);
                    state[i] = 0;
                    left--;
                    moved = 1;
                }
            }
        }
        if (!moved)
            nanosleep(&nap, NULL);
    }
    for (int i = 0; i < f->n; i++)
        free(own[i]);
}

static void serve_flows(const cmd *c, int me)
{
    int sender = 0;
    if (my_flow(&c->flows, me, &sender) < 0)
        return;
    for (;;) {
        MPI_Request go;
        MPI_Status st;
        double t[CAL_MAXFLOWS];
        MPI_Irecv(NULL, 0, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &go);
        wait_sleepy(&go, &st, NAP_GO);
        if (st.MPI_TAG == TAG_STOP)
            return;
        play(&c->flows, me, c->bytes, MPI_Wtime(), t);
        /* In the order of the flows, as rank 0 posts its receives for them. */
        for (int i = 0; i < c->flows.n; i++)
            if (c->flows.dst[i] == me)
                MPI_Send(&t[i], 1, MPI_DOUBLE, 0, TAG_RES, MPI_COMM_WORLD);
    }
}

static int crowded;

void cal_set_crowded(int c)
{
    crowded = c;
}

/* Waits for req as IMB does, polling, or, when ranks share CPUs, napping NAP_PP between polls. */
static void wait_pp(MPI_Request *req)
{
    if (crowded)
        wait_sleepy(req, MPI_STATUS_IGNORE, NAP_PP);
    else
        MPI_Wait(req, MPI_STATUS_IGNORE);
}

/* This rank's part in one multi-pair ping-pong: pair i's initiator (src) sends and receives reps
 * times, its responder (dst) answers; the initiator's elapsed time goes to rank 0. IMB polls
 * busily, and so do the ranks here when each has a CPU of its own. On the emulated cluster the
 * four ranks of two pairs share 2 cores: a rank polling for its pong takes the core its peer needs
 * to answer, and the time slices lost that way went into the fit as a slower link. There the
 * waits nap: a nap delays each step of a message's protocol, but far less than the lost slices
 * did (the fitted T_1 of a --quick run on an idle machine fell from 0.8-1.1 ms to 0.2-0.7 ms). */
static double mpp_part(const cal_flows *f, int i, int initiator, uint64_t bytes, int reps)
{
    int peer = initiator ? f->dst[i] : f->src[i];
    double t0 = MPI_Wtime();
    for (int r = 0; r < reps; r++) {
        MPI_Request req;
        if (initiator) {
            MPI_Isend(sbuf, (int)bytes, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, &req);
            wait_pp(&req);
            MPI_Irecv(rbuf, (int)bytes, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, &req);
            wait_pp(&req);
        } else {
            MPI_Irecv(rbuf, (int)bytes, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, &req);
            wait_pp(&req);
            MPI_Isend(sbuf, (int)bytes, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, &req);
            wait_pp(&req);
        }
    }
    return MPI_Wtime() - t0;
}

static void serve_mpp(const cmd *c, int me)
{
    int initiator = 0, i = my_flow(&c->flows, me, &initiator);
    if (i < 0)
        return;
    for (;;) {
        MPI_Request go;
        MPI_Status st;
        MPI_Irecv(NULL, 0, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &go);
        wait_sleepy(&go, &st, NAP_GO);
        if (st.MPI_TAG == TAG_STOP)
            return;
        double t = mpp_part(&c->flows, i, initiator, c->bytes, c->peer);
        if (initiator)
            MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG_RES, MPI_COMM_WORLD);
    }
}

void cal_serve(void)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (;;) {
        cmd c;
        MPI_Request req;
        MPI_Irecv(&c, (int)sizeof c, MPI_BYTE, 0, TAG_CMD, MPI_COMM_WORLD, &req);
        wait_sleepy(&req, MPI_STATUS_IGNORE, NAP_CMD);
        if (c.op == OP_QUIT)
            return;
        if (c.op == OP_PONG)
            pong(c.peer);
        else if (c.op == OP_FLOWS)
            serve_flows(&c, me);
        else if (c.op == OP_MPP)
            serve_mpp(&c, me);
    }
}

static void send_cmd(int to, const cmd *c)
{
    MPI_Send(c, (int)sizeof *c, MPI_BYTE, to, TAG_CMD, MPI_COMM_WORLD);
}

void cal_quit(void)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    cmd c = {.op = OP_QUIT};
    for (int r = 1; r < n; r++)
        send_cmd(r, &c);
}

/* ---- rank 0: ping-pong -------------------------------------------------------------------------- */

/* One sample: batch round trips, returned as the one-way time of one. */
static double pp_sample(int peer, uint64_t bytes, int batch)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < batch; i++) {
        MPI_Send(sbuf, (int)bytes, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
        MPI_Recv(rbuf, (int)bytes, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return (MPI_Wtime() - t0) / batch / 2;
}

cal_stat cal_pingpong(const cal_opts *o, int peer, uint64_t bytes)
{
    cmd c = {.op = OP_PONG, .peer = 0};
    send_cmd(peer, &c);
    /* Warm-up (connections, registration caches), then as many round trips per sample as it takes
     * for a sample to last tick / eps: the clock's resolution then costs at most eps. */
    int batch = 1;
    double floor_t = MPI_Wtick() / o->eps;
    static int warmed[1024];
    if (peer < 1024 && !warmed[peer]) {
        /* The first exchanges with a peer pay for connection set-up and slow paths (measured: 250 us
         * round trips inside a node for a few milliseconds, then 10 us): 100 ms of empty
         * ping-pongs before the first size. */
        double until = MPI_Wtime() + 0.1;
        while (MPI_Wtime() < until)
            pp_sample(peer, 0, 16);
        warmed[peer] = 1;
    }
    pp_sample(peer, bytes, 1);
    while (2 * batch * pp_sample(peer, bytes, batch) < floor_t && batch < (1 << 20))
        batch *= 2;
    size_t cap = (size_t)o->max_reps, n = 0;
    double *v = malloc(cap * sizeof *v), started = MPI_Wtime();
    cal_stat s = {0, INFINITY, 0};
    if (v != NULL) {
        while (!enough(o, v, n, started) && n < cap)
            v[n++] = pp_sample(peer, bytes, batch);
        s = cal_stat_of(v, n);
    }
    free(v);
    MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_STOP, MPI_COMM_WORLD);
    return s;
}

/* ---- rank 0: flow sets -------------------------------------------------------------------------- */

/* One repetition: one start signal to every rank taking part, rank 0's own parts if it has any,
 * then the receivers' times into t[0 .. f->n). */
static void flows_once(const cal_flows *f, uint64_t bytes, double *t)
{
    MPI_Request req[2 * CAL_MAXFLOWS + 1];
    int nreq = 0, sent[2 * CAL_MAXFLOWS], nsent = 0;
    for (int i = 0; i < 2 * f->n; i++) {
        int r = i < f->n ? f->src[i] : f->dst[i - f->n], dup = r == 0;
        for (int j = 0; j < nsent && !dup; j++)
            dup = sent[j] == r;
        if (!dup) {
            MPI_Send(NULL, 0, MPI_BYTE, r, TAG_GO, MPI_COMM_WORLD);
            sent[nsent++] = r;
        }
    }
    double t0 = MPI_Wtime();
    for (int i = 0; i < f->n; i++)
        if (f->dst[i] != 0)
            MPI_Irecv(&t[i], 1, MPI_DOUBLE, f->dst[i], TAG_RES, MPI_COMM_WORLD, &req[nreq++]);
    play(f, 0, bytes, t0, t);
    waitall_sleepy(nreq, req);
}

void cal_run_flows(const cal_opts *o, const cal_flows *f, uint64_t bytes, cal_stat *per, cal_stat *all)
{
    cmd c = {.op = OP_FLOWS, .bytes = bytes, .flows = *f};
    int sent[CAL_MAXFLOWS * 2], nsent = 0;
    for (int i = 0; i < 2 * f->n; i++) {
        int r = i < f->n ? f->src[i] : f->dst[i - f->n], dup = 0;
        for (int j = 0; j < nsent; j++)
            dup |= sent[j] == r;
        if (r != 0 && !dup) {
            send_cmd(r, &c);
            sent[nsent++] = r;
        }
    }
    size_t cap = (size_t)o->max_reps, n = 0;
    double *v = malloc(cap * (size_t)(f->n + 1) * sizeof *v), *col = malloc(cap * sizeof *col);
    double t[CAL_MAXFLOWS], started;
    if (v == NULL || col == NULL)
        goto out;
    flows_once(f, bytes, t); /* warm-up */
    started = MPI_Wtime();
    for (;;) {
        int done = n >= (size_t)o->min_reps;
        for (int i = 0; done && i <= f->n; i++) {
            for (size_t r = 0; r < n; r++)
                col[r] = v[r * (size_t)(f->n + 1) + (size_t)i];
            done = enough(o, col, n, started);
        }
        if (done || n >= cap)
            break;
        flows_once(f, bytes, t);
        double last = 0;
        for (int i = 0; i < f->n; i++) {
            v[n * (size_t)(f->n + 1) + (size_t)i] = t[i];
            last = fmax(last, t[i]);
        }
        v[n * (size_t)(f->n + 1) + (size_t)f->n] = last;
        n++;
    }
    for (int i = 0; i <= f->n; i++) {
        for (size_t r = 0; r < n; r++)
            col[r] = v[r * (size_t)(f->n + 1) + (size_t)i];
        cal_stat s = cal_stat_of(col, n);
        if (i < f->n)
            per[i] = s;
        else if (all != NULL)
            *all = s;
    }
out:
    free(v);
    free(col);
    for (int j = 0; j < nsent; j++)
        MPI_Send(NULL, 0, MPI_BYTE, sent[j], TAG_STOP, MPI_COMM_WORLD);
}

/* ---- rank 0: IMB-style multi-pair ping-pong ----------------------------------------------------- */

cal_stat cal_multi_pingpong(const cal_opts *o, const cal_flows *f, uint64_t bytes, int reps)
{
    /* The command's peer field carries the repetitions of one sample. */
    cmd c = {.op = OP_MPP, .peer = reps, .bytes = bytes, .flows = *f};
    for (int i = 0; i < f->n; i++) {
        if (f->src[i] != 0)
            send_cmd(f->src[i], &c);
        if (f->dst[i] != 0)
            send_cmd(f->dst[i], &c);
    }
    int initiator = 0, mine = my_flow(f, 0, &initiator);
    size_t cap = (size_t)o->max_reps, n = 0;
    double *v = malloc(cap * sizeof *v), t[CAL_MAXFLOWS], started = MPI_Wtime();
    cal_stat s = {0, INFINITY, 0};
    for (int warm = 1; v != NULL; warm = 0) {
        if (!warm && (enough(o, v, n, started) || n >= cap))
            break;
        MPI_Request req[CAL_MAXFLOWS];
        int nreq = 0;
        for (int i = 0; i < f->n; i++) {
            if (f->src[i] != 0)
                MPI_Send(NULL, 0, MPI_BYTE, f->src[i], TAG_GO, MPI_COMM_WORLD);
            if (f->dst[i] != 0)
                MPI_Send(NULL, 0, MPI_BYTE, f->dst[i], TAG_GO, MPI_COMM_WORLD);
        }
        for (int i = 0; i < f->n; i++)
            if (f->src[i] != 0)
                MPI_Irecv(&t[i], 1, MPI_DOUBLE, f->src[i], TAG_RES, MPI_COMM_WORLD, &req[nreq++]);
        if (mine >= 0) {
            double mt = mpp_part(f, mine, initiator, bytes, reps);
            if (initiator)
                t[mine] = mt;
        }
        waitall_sleepy(nreq, req);
        /* T_b: the pairs run together, so the sample lasts until the slowest pair is done. */
        double tb = 0;
        for (int i = 0; i < f->n; i++)
            tb = fmax(tb, t[i]);
        if (!warm)
            v[n++] = tb;
    }
    if (v != NULL)
        s = cal_stat_of(v, n);
    free(v);
    for (int i = 0; i < f->n; i++) {
        if (f->src[i] != 0)
            MPI_Send(NULL, 0, MPI_BYTE, f->src[i], TAG_STOP, MPI_COMM_WORLD);
        if (f->dst[i] != 0)
            MPI_Send(NULL, 0, MPI_BYTE, f->dst[i], TAG_STOP, MPI_COMM_WORLD);
    }
    return s;
}
