/* nbrate.c: a non-blocking message-rate loop: pairs of ranks post a window of MPI_Irecv and
 * MPI_Isend and complete them with one MPI_Waitall, over and over; shows the cost of many small
 * non-blocking calls and serves the overhead benchmark.
 *
 * Usage: nbrate [-t] [-s] ITERS WINDOW [BYTES]   (an even number of ranks; rank r pairs with r ^ 1; a
 *   single rank pairs with itself, so that its MPI_Waitall finds every request complete: the cost
 *   of the call alone, which the benchmark counts under callgrind)
 *   Each iteration every rank posts WINDOW MPI_Irecv (tag = index in the window) and WINDOW
 *   MPI_Isend of BYTES bytes (default 0) to its partner, then one MPI_Waitall on the 2 x WINDOW
 *   requests. Rank 0 prints a checksum; with -t also the time per iteration, over the whole loop
 *   and in the fastest block of BLOCK iterations (the block least disturbed by other work).
 *   With -s the posts go through two helpers, post_recv and post_send, each called from SITES (4)
 *   lines of the loop in turn, as a halo exchange posts to its four neighbours: the calls and
 *   the messages are the same, but deeper call sites see SITES distinct call chains per helper.
 *   Every rank checks the source, tag and size of what it received and exits 1 on a mismatch. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 100
#define SITES 4

/* The helpers of -s. noinline: each must stay a frame of its own, whose return address into the
 * loop differs from line to line. */
static __attribute__((noinline)) void post_recv(unsigned char *rbuf, int bytes, int partner, int w, MPI_Request *req)
{
    MPI_Irecv(rbuf + (size_t)w * (size_t)bytes, bytes, MPI_BYTE, partner, w, MPI_COMM_WORLD, &req[w]);
}

static __attribute__((noinline)) void post_send(unsigned char *sbuf, int bytes, int partner, int w, int window,
                                                MPI_Request *req)
{
    MPI_Isend(sbuf + (size_t)w * (size_t)bytes, bytes, MPI_BYTE, partner, w, MPI_COMM_WORLD, &req[window + w]);
}

int main(int argc, char **argv)
{
    int rank, nranks, timing = 0, sites = 0, argi = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (; argi < argc && argv[argi][0] == '-'; argi++) {
        if (strcmp(argv[argi], "-t") == 0)
            timing = 1;
        else if (strcmp(argv[argi], "-s") == 0)
            sites = 1;
        else
            break;
    }
    if (argc - argi < 2 || argc - argi > 3 || (nranks % 2 != 0 && nranks != 1)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n EVEN|1 nbrate [-t] [-s] ITERS WINDOW [BYTES]\n");
        MPI_Finalize();
        return 2;
    }
    long iters = atol(argv[argi]);
    int window = atoi(argv[argi + 1]);
    int bytes = argc - argi == 3 ? atoi(argv[argi + 2]) : 0;
    int partner = nranks == 1 ? 0 : rank ^ 1;
    size_t room = (size_t)window * (size_t)(bytes > 0 ? bytes : 1);
    unsigned char *sbuf = malloc(room), *rbuf = malloc(room);
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)window);
    MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * (size_t)window);
    memset(sbuf, rank + 1, room);
    long long received = 0;
    int bad = 0;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), tb = t0, best = -1.0;
    for (long i = 0; i < iters; i++) {
        if (timing && i % BLOCK == 0 && i > 0) {
            double now = MPI_Wtime();
            if (best < 0 || now - tb < best)
                best = now - tb;
            tb = now;
        }
        if (sites) {
            /* One line per neighbour, as a halo exchange writes them. */
            for (int w = 0; w < window; w += SITES) {
                post_recv(rbuf, bytes, partner, w, req);
                if (w + 1 < window)
                    post_recv(rbuf, bytes, partner, w + 1, req);
                if (w + 2 < window)
                    post_recv(rbuf, bytes, partner, w + 2, req);
                if (w + 3 < window)
                    post_recv(rbuf, bytes, partner, w + 3, req);
            }
            for (int w = 0; w < window; w += SITES) {
                post_send(sbuf, bytes, partner, w, window, req);
                if (w + 1 < window)
                    post_send(sbuf, bytes, partner, w + 1, window, req);
                if (w + 2 < window)
                    post_send(sbuf, bytes, partner, w + 2, window, req);
                if (w + 3 < window)
                    post_send(sbuf, bytes, partner, w + 3, window, req);
            }
        } else {
            for (int w = 0; w < window; w++)
                MPI_Irecv(rbuf + (size_t)w * (size_t)bytes, bytes, MPI_BYTE, partner, w, MPI_COMM_WORLD, &req[w]);
            for (int w = 0; w < window; w++)
                MPI_Isend(sbuf + (size_t)w * (size_t)bytes, bytes, MPI_BYTE, partner, w, MPI_COMM_WORLD,
                          &req[window + w]);
        }
        MPI_Waitall(2 * window, req, st);
        for (int w = 0; w < window; w++) {
            int n;
            MPI_Get_count(&st[w], MPI_BYTE, &n);
            if (n != bytes || st[w].MPI_SOURCE != partner || st[w].MPI_TAG != w)
                bad = 1;
            received += n + 1;
        }
    }
    double t1 = MPI_Wtime();
    long long total = 0;
    int anybad = 0;
    MPI_Reduce(&received, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && anybad)
        fprintf(stderr, "nbrate: a receive completed with the wrong source, tag or size\n");
    if (rank == 0) {
        if (timing)
            printf("nbrate: usec_per_iter=%.4f best_block_usec=%.4f calls_per_iter=%d\n",
                   iters > 0 ? (t1 - t0) * 1e6 / (double)iters : 0.0,
                   best > 0 ? best * 1e6 / BLOCK : (iters > 0 ? (t1 - t0) * 1e6 / (double)iters : 0.0),
                   2 * window + 1);
        printf("nbrate: ranks=%d iters=%ld window=%d bytes=%d checksum=%lld\n", nranks, iters, window,
               bytes, total);
    }
    free(sbuf);
    free(rbuf);
    free(req);
    free(st);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
