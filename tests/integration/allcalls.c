/* allcalls.c: calls every MPI function libflowcut intercepts (classic and _c forms) with known
 * arguments, so that the test script can check the trace's event counts and byte counts.
 *
 * Usage: mpiexec -n 2 allcalls [main|init|abort]
 *   main   (default) MPI_Init_thread, then everything but MPI_Init and MPI_Abort, then
 * MPI_Finalize. init   MPI_Init, one MPI_Barrier, MPI_Finalize. abort  MPI_Init, then rank 0 calls
 * MPI_Abort(MPI_COMM_WORLD, 3) while rank 1 waits for a message. Exactly two ranks: rank r talks to
 * partner 1 - r, and both ranks make the same calls, so that each kind's total is twice the
 * per-rank count written next to the calls ("+n"). Loops that poll (Test, Testany, Testsome,
 * Waitsome) make a number of calls that depends on timing, but the requests they complete do not.
 * Buffers hold ints (4 bytes). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, partner;
static int sbuf[64], rbuf[64];

/* Sends: Send, Bsend, Ssend, Rsend and their _c forms, each matched by a Recv or Irecv. */
static void blocking_p2p(void)
{
    MPI_Status st;
    MPI_Request r;
    /* Send +2, Recv +2 (one with wildcards and MPI_STATUS_IGNORE). */
    if (rank == 0) {
        MPI_Send(sbuf, 3, MPI_INT, partner, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, 3, MPI_INT, partner, 1, MPI_COMM_WORLD, &st);
        MPI_Send_c(sbuf, 5, MPI_INT, partner, 2, MPI_COMM_WORLD);
        MPI_Recv_c(rbuf, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(rbuf, 3, MPI_INT, partner, 1, MPI_COMM_WORLD, &st);
        MPI_Send(sbuf, 3, MPI_INT, partner, 1, MPI_COMM_WORLD);
        MPI_Recv_c(rbuf, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
        MPI_Send_c(sbuf, 5, MPI_INT, partner, 2, MPI_COMM_WORLD);
    }
    /* Bsend +2, Recv +2. */
    MPI_Bsend(sbuf, 2, MPI_INT, partner, 3, MPI_COMM_WORLD);
    MPI_Bsend_c(sbuf, 2, MPI_INT, partner, 4, MPI_COMM_WORLD);
    MPI_Recv(rbuf, 2, MPI_INT, partner, 3, MPI_COMM_WORLD, &st);
    MPI_Recv(rbuf, 2, MPI_INT, partner, 4, MPI_COMM_WORLD, &st);
    /* Ssend +2, Recv +2. */
    if (rank == 0) {
        MPI_Ssend(sbuf, 1, MPI_INT, partner, 5, MPI_COMM_WORLD);
        MPI_Recv(rbuf, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &st);
        MPI_Ssend_c(sbuf, 1, MPI_INT, partner, 6, MPI_COMM_WORLD);
        MPI_Recv(rbuf, 1, MPI_INT, partner, 6, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(rbuf, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &st);
        MPI_Ssend(sbuf, 1, MPI_INT, partner, 5, MPI_COMM_WORLD);
        MPI_Recv(rbuf, 1, MPI_INT, partner, 6, MPI_COMM_WORLD, &st);
        MPI_Ssend_c(sbuf, 1, MPI_INT, partner, 6, MPI_COMM_WORLD);
    }
    /* Rsend +2 after the matching Irecv +2 is posted (Barrier +2); Wait +2, COMPLETE +2. */
    MPI_Irecv(rbuf, 4, MPI_INT, partner, 7, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(sbuf, 4, MPI_INT, partner, 7, MPI_COMM_WORLD);
    MPI_Wait(&r, &st);
    MPI_Irecv_c(rbuf, 4, MPI_INT, partner, 8, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend_c(sbuf, 4, MPI_INT, partner, 8, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* Isend, Ibsend, Issend, Irsend and _c: Irecv +4, Irecv_c (kind Irecv) +4, Barrier +1, each send
 * kind +2, Waitall +1 with COMPLETE +16. */
static void nonblocking_p2p(void)
{
    MPI_Request r[16];
    for (int i = 0; i < 8; i++) {
        if (i % 2 == 0)
            MPI_Irecv(rbuf + i, 1, MPI_INT, partner, 20 + i, MPI_COMM_WORLD, &r[i]);
        else
            MPI_Irecv_c(rbuf + i, 1, MPI_INT, partner, 20 + i, MPI_COMM_WORLD, &r[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Isend(sbuf, 1, MPI_INT, partner, 20, MPI_COMM_WORLD, &r[8]);
    MPI_Isend_c(sbuf, 1, MPI_INT, partner, 21, MPI_COMM_WORLD, &r[9]);
    MPI_Ibsend(sbuf, 1, MPI_INT, partner, 22, MPI_COMM_WORLD, &r[10]);
    MPI_Ibsend_c(sbuf, 1, MPI_INT, partner, 23, MPI_COMM_WORLD, &r[11]);
    MPI_Issend(sbuf, 1, MPI_INT, partner, 24, MPI_COMM_WORLD, &r[12]);
    MPI_Issend_c(sbuf, 1, MPI_INT, partner, 25, MPI_COMM_WORLD, &r[13]);
    MPI_Irsend(sbuf, 1, MPI_INT, partner, 26, MPI_COMM_WORLD, &r[14]);
    MPI_Irsend_c(sbuf, 1, MPI_INT, partner, 27, MPI_COMM_WORLD, &r[15]);
    MPI_Waitall(16, r, MPI_STATUSES_IGNORE);
}

/* Probes and matched receives. Isend +6 (tags 100..105), then: Probe +4, Iprobe +2 (one finds the
 * message, one with tag 999 finds nothing), Mprobe +2, Improbe +2, Recv +2, Mrecv +2, Imrecv +2,
 * Wait +2 (COMPLETE +2), Waitall +1 (COMPLETE +6). A Probe first makes each Iprobe/Improbe find
 * its message on the first call. */
static void probes(void)
{
    MPI_Request s[6], r;
    MPI_Status st;
    MPI_Message m;
    int flag = 0;
    for (int i = 0; i < 6; i++)
        MPI_Isend(sbuf, i + 1, MPI_INT, partner, 100 + i, MPI_COMM_WORLD, &s[i]);
    MPI_Probe(partner, 100, MPI_COMM_WORLD, &st);
    MPI_Recv(rbuf, 1, MPI_INT, partner, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Probe(partner, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Iprobe(MPI_ANY_SOURCE, 101, MPI_COMM_WORLD, &flag, &st);
    MPI_Recv(rbuf, 2, MPI_INT, partner, 101, MPI_COMM_WORLD, &st);
    MPI_Iprobe(partner, 999, MPI_COMM_WORLD, &flag, &st);
    MPI_Mprobe(partner, 102, MPI_COMM_WORLD, &m, &st);
    MPI_Mrecv(rbuf, 3, MPI_INT, &m, &st);
    MPI_Mprobe(partner, MPI_ANY_TAG, MPI_COMM_WORLD, &m,
               MPI_STATUS_IGNORE); /* tag 103: the oldest */
    MPI_Mrecv_c(rbuf, 4, MPI_INT, &m, MPI_STATUS_IGNORE);
    MPI_Probe(partner, 104, MPI_COMM_WORLD, &st);
    MPI_Improbe(partner, 104, MPI_COMM_WORLD, &flag, &m, &st);
    MPI_Imrecv(rbuf, 5, MPI_INT, &m, &r);
    MPI_Wait(&r, &st);
    MPI_Probe(partner, 105, MPI_COMM_WORLD, &st);
    MPI_Improbe(partner, 105, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE);
    MPI_Imrecv_c(rbuf, 6, MPI_INT, &m, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Waitall(6, s, MPI_STATUSES_IGNORE);
}

/* Sendrecv +2 and Sendrecv_replace +2 (classic and _c), each with its COMPLETE (+4). */
static void sendrecvs(void)
{
    MPI_Status st;
    MPI_Sendrecv(sbuf, 2, MPI_INT, partner, 200, rbuf, 6, MPI_INT, partner, 200, MPI_COMM_WORLD,
                 &st);
    MPI_Sendrecv_c(sbuf, 3, MPI_INT, partner, 201, rbuf, 6, MPI_INT, MPI_ANY_SOURCE, 201,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    memcpy(rbuf, sbuf, sizeof sbuf);
    MPI_Sendrecv_replace(rbuf, 4, MPI_INT, partner, 202, partner, 202, MPI_COMM_WORLD, &st);
    MPI_Sendrecv_replace_c(rbuf, 4, MPI_INT, partner, 203, partner, 203, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE);
}

/* Persistent requests: Recv_init +8 (4 classic, 4 _c), one of each send init +2, Startall +1 on the
 * receives (START +8), Barrier +1, Start +8 on the sends, Waitall +1 (COMPLETE +16), then
 * Start +1 and Wait +1 (COMPLETE +1) on a send again with its receive, and Request_free +16. */
static void persistent(void)
{
    MPI_Request r[16];
    MPI_Status sts[16];
    for (int i = 0; i < 8; i++) {
        if (i < 4)
            MPI_Recv_init(rbuf + i, 1, MPI_INT, partner, 40 + i, MPI_COMM_WORLD, &r[i]);
        else
            MPI_Recv_init_c(rbuf + i, 1, MPI_INT, partner, 40 + i, MPI_COMM_WORLD, &r[i]);
    }
    MPI_Send_init(sbuf, 1, MPI_INT, partner, 40, MPI_COMM_WORLD, &r[8]);
    MPI_Send_init_c(sbuf, 1, MPI_INT, partner, 41, MPI_COMM_WORLD, &r[9]);
    MPI_Bsend_init(sbuf, 1, MPI_INT, partner, 42, MPI_COMM_WORLD, &r[10]);
    MPI_Bsend_init_c(sbuf, 1, MPI_INT, partner, 43, MPI_COMM_WORLD, &r[11]);
    MPI_Ssend_init(sbuf, 1, MPI_INT, partner, 44, MPI_COMM_WORLD, &r[12]);
    MPI_Ssend_init_c(sbuf, 1, MPI_INT, partner, 45, MPI_COMM_WORLD, &r[13]);
    MPI_Rsend_init(sbuf, 1, MPI_INT, partner, 46, MPI_COMM_WORLD, &r[14]);
    MPI_Rsend_init_c(sbuf, 1, MPI_INT, partner, 47, MPI_COMM_WORLD, &r[15]);
    MPI_Startall(8, r);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 8; i < 16; i++)
        MPI_Start(&r[i]);
    MPI_Waitall(16, r, sts);
    /* Round two for one pair, through the plain Start/Wait; Recv +1 stands for the partner's
     * receive being a blocking one here. */
    MPI_Start(&r[8]);
    MPI_Recv(rbuf, 1, MPI_INT, partner, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&r[8], MPI_STATUS_IGNORE);
    for (int i = 0; i < 16; i++)
        MPI_Request_free(&r[i]);
}

/* An Irecv + Isend pair with the partner on tag; *rr and *sr get the requests (Irecv +1, Isend +1).
 */
static void pair(int tag, MPI_Request *rr, MPI_Request *sr)
{
    MPI_Irecv(rbuf, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, rr);
    MPI_Isend(sbuf, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, sr);
}

/* The wait and test families, cancel and request_free. Per rank: Irecv +7, Isend +6, Recv +1,
 * Test >= 1, Testall >= 1, Testany >= 2, Testsome >= 1, Waitsome >= 1, Wait +3, Waitany +3,
 * Cancel +1, Request_free +1; COMPLETE +14 (of which one MPI_REQUEST_NULL and one cancelled). */
static void completion(void)
{
    MPI_Request r[3];
    MPI_Status st, sts[3];
    int flag = 0, idx, out, ind[3], done;
    pair(300, &r[0],
         &r[1]); /* Test until the receive completes (COMPLETE +1), Wait the send (+1) */
    do
        MPI_Test(&r[0], &flag, &st);
    while (!flag);
    MPI_Wait(&r[1], &st);
    pair(301, &r[0], &r[1]); /* Testall until both completed: COMPLETE +2 */
    do
        MPI_Testall(2, r, &flag, sts);
    while (!flag);
    pair(302, &r[0], &r[1]); /* Testany over {recv, send, null}: COMPLETE +2 */
    r[2] = MPI_REQUEST_NULL;
    for (done = 0; done < 2;) {
        MPI_Testany(3, r, &idx, &flag, &st);
        if (flag && idx != MPI_UNDEFINED)
            done++;
    }
    pair(303, &r[0], &r[1]); /* Testsome until both completed: COMPLETE +2 */
    for (done = 0; done < 2;) {
        MPI_Testsome(2, r, &out, ind, MPI_STATUSES_IGNORE);
        if (out != MPI_UNDEFINED)
            done += out;
    }
    pair(304, &r[0], &r[1]); /* Waitany twice (COMPLETE +2), then once over nulls only (+0) */
    MPI_Waitany(2, r, &idx, &st);
    MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
    MPI_Waitany(2, r, &idx, &st);
    pair(305, &r[0], &r[1]); /* Waitsome until both completed: COMPLETE +2 */
    for (done = 0; done < 2;) {
        MPI_Waitsome(2, r, &out, ind, sts);
        done += out;
    }
    r[0] = MPI_REQUEST_NULL; /* Wait on a null request: COMPLETE +1 with FC_EVF_NULL */
    MPI_Wait(&r[0], &st);
    MPI_Irecv(rbuf, 1, MPI_INT, partner, 999, MPI_COMM_WORLD, &r[0]); /* never sent: cancelled */
    MPI_Cancel(&r[0]);
    MPI_Wait(&r[0], &st); /* COMPLETE +1 with FC_EVF_CANCELLED */
    MPI_Isend(sbuf, 1, MPI_INT, partner, 306, MPI_COMM_WORLD, &r[0]);
    MPI_Request_free(&r[0]);
    MPI_Recv(rbuf, 1, MPI_INT, partner, 306, MPI_COMM_WORLD, &st);
}

/* Blocking collectives on MPI_COMM_WORLD, classic and _c: Barrier +1, each other kind +2. */
static void collectives(void)
{
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    int counts[2] = {1, 2}, displs[2] = {0, 1}, two[2] = {2, 2}, dsp2[2] = {0, 2};
    MPI_Count ccounts[2] = {1, 2}, ctwo[2] = {2, 2};
    MPI_Aint cdispls[2] = {0, 1}, cdsp2[2] = {0, 2};
    int wdispls[2] = {0, 8}; /* Alltoallw displacements are in bytes */
    MPI_Aint cwdispls[2] = {0, 8};
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(sbuf, 5, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast_c(sbuf, 5, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Reduce(sbuf, rbuf, 3, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD);
    MPI_Reduce_c(sbuf, rbuf, 3, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD);
    MPI_Allreduce(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce_c(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Gather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv(sbuf, rank + 1, MPI_INT, rbuf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv_c(sbuf, rank + 1, MPI_INT, rbuf, ccounts, cdispls, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatter(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatter_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv(sbuf, counts, displs, MPI_INT, rbuf, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv_c(sbuf, ccounts, cdispls, MPI_INT, rbuf, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgather_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgatherv(sbuf, rank + 1, MPI_INT, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgatherv_c(sbuf, rank + 1, MPI_INT, rbuf, ccounts, cdispls, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(sbuf, two, dsp2, MPI_INT, rbuf, two, dsp2, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv_c(sbuf, ctwo, cdsp2, MPI_INT, rbuf, ctwo, cdsp2, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallw(sbuf, two, wdispls, types, rbuf, two, wdispls, types, MPI_COMM_WORLD);
    MPI_Alltoallw_c(sbuf, ctwo, cwdispls, types, rbuf, ctwo, cwdispls, types, MPI_COMM_WORLD);
    MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_c(sbuf, rbuf, ccounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block_c(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Scan(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Scan_c(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan_c(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

/* Non-blocking collectives, each completed by its own Wait: Ibarrier +1, each other I-kind +2,
 * Wait +33, COMPLETE +33. */
static void icollectives(void)
{
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    int counts[2] = {1, 2}, displs[2] = {0, 1}, two[2] = {2, 2}, dsp2[2] = {0, 2},
        wdispls[2] = {0, 8};
    MPI_Count ccounts[2] = {1, 2}, ctwo[2] = {2, 2};
    MPI_Aint cdispls[2] = {0, 1}, cdsp2[2] = {0, 2}, cwdispls[2] = {0, 8};
    MPI_Request r;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Ibarrier(w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ibcast(sbuf, 5, MPI_INT, 0, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ibcast_c(sbuf, 5, MPI_INT, 0, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ireduce(sbuf, rbuf, 3, MPI_INT, MPI_SUM, 1, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ireduce_c(sbuf, rbuf, 3, MPI_INT, MPI_SUM, 1, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iallreduce(sbuf, rbuf, 2, MPI_INT, MPI_SUM, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iallreduce_c(sbuf, rbuf, 2, MPI_INT, MPI_SUM, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Igather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Igather_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Igatherv(sbuf, rank + 1, MPI_INT, rbuf, counts, displs, MPI_INT, 0, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Igatherv_c(sbuf, rank + 1, MPI_INT, rbuf, ccounts, cdispls, MPI_INT, 0, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iscatter(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iscatter_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iscatterv(sbuf, counts, displs, MPI_INT, rbuf, rank + 1, MPI_INT, 0, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iscatterv_c(sbuf, ccounts, cdispls, MPI_INT, rbuf, rank + 1, MPI_INT, 0, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iallgather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iallgather_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iallgatherv(sbuf, rank + 1, MPI_INT, rbuf, counts, displs, MPI_INT, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iallgatherv_c(sbuf, rank + 1, MPI_INT, rbuf, ccounts, cdispls, MPI_INT, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ialltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ialltoall_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ialltoallv(sbuf, two, dsp2, MPI_INT, rbuf, two, dsp2, MPI_INT, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ialltoallv_c(sbuf, ctwo, cdsp2, MPI_INT, rbuf, ctwo, cdsp2, MPI_INT, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ialltoallw(sbuf, two, wdispls, types, rbuf, two, wdispls, types, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ialltoallw_c(sbuf, ctwo, cwdispls, types, rbuf, ctwo, cwdispls, types, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ireduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ireduce_scatter_c(sbuf, rbuf, ccounts, MPI_INT, MPI_SUM, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ireduce_scatter_block(sbuf, rbuf, 2, MPI_INT, MPI_SUM, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ireduce_scatter_block_c(sbuf, rbuf, 2, MPI_INT, MPI_SUM, w, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iscan(sbuf, rbuf, 2, MPI_INT, MPI_SUM, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iscan_c(sbuf, rbuf, 2, MPI_INT, MPI_SUM, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iexscan(sbuf, rbuf, 2, MPI_INT, MPI_SUM, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iexscan_c(sbuf, rbuf, 2, MPI_INT, MPI_SUM, w, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* Every communicator constructor once (+1 each; Comm_idup also Wait +1, COMPLETE +1), a Barrier +1
 * on the duplicate, then Comm_free +14 of what they made. */
static void communicators(void)
{
    MPI_Comm c[14];
    MPI_Group g;
    MPI_Request r;
    int dims[1] = {2}, periods[1] = {0}, remain[1] = {1};
    int index[2] = {1, 2}, edges[2] = {1, 0};
    int src[1] = {rank}, deg[1] = {1}, dst[1] = {partner}, other[1] = {partner};
    MPI_Comm_dup(MPI_COMM_WORLD, &c[0]);
    MPI_Barrier(c[0]);
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &c[1]);
    MPI_Comm_idup(MPI_COMM_WORLD, &c[2], &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &c[3]); /* one rank per colour */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c[4]);
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Comm_create(MPI_COMM_WORLD, g, &c[5]);
    MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c[6]);
    MPI_Group_free(&g);
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c[7]);
    MPI_Cart_sub(c[7], remain, &c[8]);
    MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &c[9]);
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                          &c[10]);
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, other, MPI_UNWEIGHTED, 1, other,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c[11]);
    MPI_Intercomm_create(c[3], 0, MPI_COMM_WORLD, partner, 9, &c[12]);
    MPI_Intercomm_merge(c[12], rank, &c[13]);
    for (int i = 13; i >= 0; i--)
        MPI_Comm_free(&c[i]);
}

/* The neighbourhood collectives on a periodic ring of the 2 ranks, where each rank's two
 * neighbours (left and right) are its partner: each kind +2 in its blocking, non-blocking and
 * persistent forms (classic and _c); the non-blocking ones Wait +10, the persistent ones Start +10,
 * Wait +10 and Request_free +10; COMPLETE +20; Cart_create +1 and Comm_free +1. */
static void neighbours(void)
{
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    int dims[1] = {2}, periods[1] = {1}, two[2] = {2, 2}, dsp2[2] = {0, 2};
    MPI_Count ctwo[2] = {2, 2};
    MPI_Aint cdsp2[2] = {0, 2}, wdispls[2] = {0, 8};
    MPI_Comm ring;
    MPI_Request r;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Neighbor_allgather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring);
    MPI_Neighbor_allgather_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring);
    MPI_Neighbor_allgatherv(sbuf, 2, MPI_INT, rbuf, two, dsp2, MPI_INT, ring);
    MPI_Neighbor_allgatherv_c(sbuf, 2, MPI_INT, rbuf, ctwo, cdsp2, MPI_INT, ring);
    MPI_Neighbor_alltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring);
    MPI_Neighbor_alltoall_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring);
    MPI_Neighbor_alltoallv(sbuf, two, dsp2, MPI_INT, rbuf, two, dsp2, MPI_INT, ring);
    MPI_Neighbor_alltoallv_c(sbuf, ctwo, cdsp2, MPI_INT, rbuf, ctwo, cdsp2, MPI_INT, ring);
    MPI_Neighbor_alltoallw(sbuf, two, wdispls, types, rbuf, two, wdispls, types, ring);
    MPI_Neighbor_alltoallw_c(sbuf, ctwo, wdispls, types, rbuf, ctwo, wdispls, types, ring);
    MPI_Ineighbor_allgather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ineighbor_allgather_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ineighbor_allgatherv(sbuf, 2, MPI_INT, rbuf, two, dsp2, MPI_INT, ring, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ineighbor_allgatherv_c(sbuf, 2, MPI_INT, rbuf, ctwo, cdsp2, MPI_INT, ring, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ineighbor_alltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ineighbor_alltoall_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring, &r), MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ineighbor_alltoallv(sbuf, two, dsp2, MPI_INT, rbuf, two, dsp2, MPI_INT, ring, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ineighbor_alltoallv_c(sbuf, ctwo, cdsp2, MPI_INT, rbuf, ctwo, cdsp2, MPI_INT, ring, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ineighbor_alltoallw(sbuf, two, wdispls, types, rbuf, two, wdispls, types, ring, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ineighbor_alltoallw_c(sbuf, ctwo, wdispls, types, rbuf, ctwo, wdispls, types, ring, &r),
        MPI_Wait(&r, MPI_STATUS_IGNORE);
#define PERSISTENT(call) (call, MPI_Start(&r), MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_Request_free(&r))
    PERSISTENT(MPI_Neighbor_allgather_init(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring, MPI_INFO_NULL, &r));
    PERSISTENT(MPI_Neighbor_allgather_init_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring, MPI_INFO_NULL, &r));
    PERSISTENT(MPI_Neighbor_allgatherv_init(sbuf, 2, MPI_INT, rbuf, two, dsp2, MPI_INT, ring, MPI_INFO_NULL, &r));
    PERSISTENT(MPI_Neighbor_allgatherv_init_c(sbuf, 2, MPI_INT, rbuf, ctwo, cdsp2, MPI_INT, ring, MPI_INFO_NULL, &r));
    PERSISTENT(MPI_Neighbor_alltoall_init(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring, MPI_INFO_NULL, &r));
    PERSISTENT(MPI_Neighbor_alltoall_init_c(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring, MPI_INFO_NULL, &r));
    PERSISTENT(MPI_Neighbor_alltoallv_init(sbuf, two, dsp2, MPI_INT, rbuf, two, dsp2, MPI_INT, ring, MPI_INFO_NULL, &r));
    PERSISTENT(MPI_Neighbor_alltoallv_init_c(sbuf, ctwo, cdsp2, MPI_INT, rbuf, ctwo, cdsp2, MPI_INT, ring,
                                             MPI_INFO_NULL, &r));
    PERSISTENT(MPI_Neighbor_alltoallw_init(sbuf, two, wdispls, types, rbuf, two, wdispls, types, ring,
                                           MPI_INFO_NULL, &r));
    PERSISTENT(MPI_Neighbor_alltoallw_init_c(sbuf, ctwo, wdispls, types, rbuf, ctwo, wdispls, types, ring,
                                             MPI_INFO_NULL, &r));
#undef PERSISTENT
    MPI_Comm_free(&ring);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "main";
    int size, provided;
    static char bsend_buf[1 << 16];
    void *detached;
    int detached_size;

    if (strcmp(mode, "main") == 0)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "allcalls: run with exactly 2 ranks (got %d)\n", size);
        MPI_Finalize();
        return 2;
    }
    partner = 1 - rank;
    for (int i = 0; i < 64; i++)
        sbuf[i] = 100 * rank + i;
    if (strcmp(mode, "abort") == 0) {
        if (rank == 0)
            MPI_Abort(MPI_COMM_WORLD, 3);
        MPI_Recv(rbuf, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return 1; /* not reached: the abort ends both ranks */
    }
    if (strcmp(mode, "init") == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    MPI_Buffer_attach(bsend_buf, sizeof bsend_buf);
    blocking_p2p();
    nonblocking_p2p();
    probes();
    sendrecvs();
    persistent();
    completion();
    collectives();
    icollectives();
    communicators();
    neighbours();
    MPI_Buffer_detach(&detached, &detached_size);
    if (rank == 0)
        printf("allcalls: done\n");
    MPI_Finalize();
    return 0;
}
