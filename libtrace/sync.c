/* libtrace/sync.c: measures each rank's event-clock offset to rank 0 by ping-pong over the
 * tracer's private communicator (PMPI only, never recorded).
 *
 * Rank 0 serves each other rank in turn. The other rank sends a ping, rank 0 answers with its
 * clock t, the rank brackets the exchange with its own clock a and b; at the smallest round trip
 * the offset is t - (a + b) / 2 with uncertainty (b - a) / 2. The first exchanges after MPI_Init
 * take milliseconds while connections are set up, so some are thrown away first. */
#include "runtime.h"

#include <stdlib.h>
#include <time.h>

#define WARMUP 10
#define MIN_SAMPLES 15
#define MAX_SAMPLES 40
#define STABLE 10 /* stop when the minimum has not improved for this many samples */
#define TAG 7411

/* Waits for a request without busy-polling: ranks that wait for their turn must leave the CPU to
 * the two ranks measuring, or on an oversubscribed node (more ranks than cores) every round trip
 * includes a scheduler time slice and the offsets get milliseconds of uncertainty. */
static void wait_politely(MPI_Request *req)
{
    int done = 0;
    struct timespec pause = {0, 50000};
    for (;;) {
        PMPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        nanosleep(&pause, NULL);
    }
}

static void serve(MPI_Comm c, int peer)
{
    int go = 1;
    PMPI_Send(&go, 1, MPI_INT, peer, TAG + 1, c);
    for (;;) {
        int more = 0;
        PMPI_Recv(&more, 1, MPI_INT, peer, TAG, c, MPI_STATUS_IGNORE);
        if (!more)
            return;
        uint64_t t = fc__now_ns();
        PMPI_Send(&t, 1, MPI_UINT64_T, peer, TAG, c);
    }
}

static void measure(MPI_Comm c, fc__clock_meas *m)
{
    uint64_t best = UINT64_MAX;
    int since = 0, go = 0;
    MPI_Request turn;
    PMPI_Irecv(&go, 1, MPI_INT, 0, TAG + 1, c, &turn);
    wait_politely(&turn);
    m->samples = 0;
    for (int i = 0; i < WARMUP + MAX_SAMPLES; i++) {
        int more = 1;
        uint64_t t = 0;
        uint64_t a = fc__now_ns();
        PMPI_Send(&more, 1, MPI_INT, 0, TAG, c);
        PMPI_Recv(&t, 1, MPI_UINT64_T, 0, TAG, c, MPI_STATUS_IGNORE);
        uint64_t b = fc__now_ns();
        if (i < WARMUP)
            continue;
        m->samples++;
        since++;
        if (b - a < best) {
            best = b - a;
            since = 0;
            m->local_ns = a + (b - a) / 2;
            m->offset_ns = (int64_t)(t - m->local_ns);
            m->min_rtt_ns = best;
            m->uncertainty_ns = (best + 1) / 2;
        }
        if (m->samples >= MIN_SAMPLES && since >= STABLE)
            break;
    }
    int more = 0;
    PMPI_Send(&more, 1, MPI_INT, 0, TAG, c);
}

void fc__clock_sync(fc__clock_meas *m)
{
    MPI_Comm c = fc__rt.sync_comm;
    int rank = 0, size = 1;
    PMPI_Comm_rank(c, &rank);
    PMPI_Comm_size(c, &size);
    *m = (fc__clock_meas){0};
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            serve(c, r);
        m->local_ns = fc__now_ns();
    } else {
        measure(c, m);
    }
    /* Nobody leaves before rank 0 has served everyone, so that the measurement of a rank is not
     * disturbed by another rank's traffic arriving at rank 0 late. */
    MPI_Request all;
    PMPI_Ibarrier(c, &all);
    wait_politely(&all);
}

void fc__clock_write(unsigned phase, const fc__clock_meas *m)
{
    unsigned char p[80];
    size_t n = 0;
    n += fc_put_uvarint(p + n, 1);
    n += fc_put_uvarint(p + n, phase);
    n += fc_put_uvarint(p + n, m->local_ns);
    n += fc_put_uvarint(p + n, fc_zigzag(m->offset_ns));
    n += fc_put_uvarint(p + n, m->uncertainty_ns);
    n += fc_put_uvarint(p + n, m->samples);
    n += fc_put_uvarint(p + n, m->min_rtt_ns);
    fc__block_write(FC_BLK_CLOCK, p, n, 0);
}
