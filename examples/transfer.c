/* transfer.c: the transfer-matrix method on a chain split among the ranks, whose reductions use
 * operations of MPI_Op_create, one of them not commutative; with built-in verification.
 *
 * Usage: transfer [-k CHANNELS] [-r REPETITIONS]
 *   Each rank owns a segment of a 1-D chain and, for each of CHANNELS channels (default 256), the
 *   2 x 2 transfer matrix of its segment (integers modulo the prime 2^31 - 1, so that every
 *   product is exact). The chain's matrix is the product of the segments' in rank order: a
 *   non-commutative reduction. Each repetition (default 2):
 *   - MPI_Reduce of the products to the last rank, which writes the result;
 *   - MPI_Reduce_scatter_block of the same products: each rank gets the chain's matrices of
 *     CHANNELS / size channels (CHANNELS is rounded up to a multiple of the size);
 *   - MPI_Allreduce of a checksum vector (8 per channel, summed modulo the prime: a commutative
 *     operation of the program's own).
 *   Every rank can compute every segment's matrices, so each result is checked against the
 *   product taken in order on one rank. Rank 0 prints one line:
 *       transfer: ranks P channels K repetitions R reduce ok scatter ok allreduce ok */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PRIME 2147483647LL

/* The segment's matrix of rank r for channel c: [a b; c d], entries below the prime. */
static void segment(int r, long c, long long *m)
{
    m[0] = (r * 7919LL + c * 104729LL + 1) % PRIME;
    m[1] = (r * 31LL + c * 17LL + 2) % PRIME;
    m[2] = (r * 13LL + c * 3LL + 5) % PRIME;
    m[3] = (r * 101LL + c * 7LL + 11) % PRIME;
}

/* a = a * b modulo the prime (2 x 2). */
static void mul(long long *a, const long long *b)
{
    long long r0 = (a[0] * b[0] % PRIME + a[1] * b[2] % PRIME) % PRIME;
    long long r1 = (a[0] * b[1] % PRIME + a[1] * b[3] % PRIME) % PRIME;
    long long r2 = (a[2] * b[0] % PRIME + a[3] * b[2] % PRIME) % PRIME;
    long long r3 = (a[2] * b[1] % PRIME + a[3] * b[3] % PRIME) % PRIME;
    a[0] = r0;
    a[1] = r1;
    a[2] = r2;
    a[3] = r3;
}

/* MPI's user function: inout = in * inout, in being the lower ranks' product (MPI applies the
 * operation as in op inout with in before inout in rank order). */
static void chain(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    long long *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        long long t[4] = {a[4 * i], a[4 * i + 1], a[4 * i + 2], a[4 * i + 3]};
        mul(t, b + 4 * i);
        for (int q = 0; q < 4; q++)
            b[4 * i + q] = t[q];
    }
}

static void sum_mod(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    long long *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (b[i] + a[i]) % PRIME;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, opt;
    long k = 256, reps = 2;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "k:r:")) != -1) {
        long v = atol(optarg);
        if (v <= 0 || v > (1L << 20) || (opt != 'k' && opt != 'r')) {
            if (rank == 0)
                fprintf(stderr, "usage: transfer [-k CHANNELS] [-r REPETITIONS] (positive, <= 2^20)\n");
            MPI_Finalize();
            return 2;
        }
        if (opt == 'k')
            k = v;
        else
            reps = v;
    }
    k = (k + size - 1) / size * size;
    long block = k / size;

    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_LONG_LONG, &mat);
    MPI_Type_commit(&mat);
    MPI_Op chain_op, sum_op;
    MPI_Op_create(chain, 0, &chain_op);
    MPI_Op_create(sum_mod, 1, &sum_op);

    long long *mine = malloc((size_t)k * 4 * sizeof *mine), *prod = malloc((size_t)k * 4 * sizeof *prod);
    long long *part = malloc((size_t)block * 4 * sizeof *part), *want = malloc((size_t)k * 4 * sizeof *want);
    long long *sums = malloc((size_t)k * 8 * sizeof *sums), *total = malloc((size_t)k * 8 * sizeof *total);
    if (!mine || !prod || !part || !want || !sums || !total) {
        fprintf(stderr, "transfer: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long c = 0; c < k; c++) {
        segment(rank, c, mine + 4 * c);
        segment(0, c, want + 4 * c);
        for (int r = 1; r < size; r++) {
            long long m[4];
            segment(r, c, m);
            mul(want + 4 * c, m);
        }
        for (int q = 0; q < 8; q++)
            sums[8 * c + q] = (mine[4 * c + q % 4] * (q + 1)) % PRIME;
    }
    int ok[3] = {1, 1, 1}, root = size - 1;
    for (long it = 0; it < reps; it++) {
        MPI_Reduce(mine, prod, (int)k, mat, chain_op, root, MPI_COMM_WORLD);
        for (long i = 0; rank == root && i < 4 * k; i++)
            ok[0] &= prod[i] == want[i];
        MPI_Reduce_scatter_block(mine, part, (int)block, mat, chain_op, MPI_COMM_WORLD);
        for (long i = 0; i < 4 * block; i++)
            ok[1] &= part[i] == want[4 * block * rank + i];
        MPI_Allreduce(sums, total, (int)(8 * k), MPI_LONG_LONG, sum_op, MPI_COMM_WORLD);
        for (long c = 0; c < k; c++)
            for (int q = 0; q < 8; q++) {
                long long s = 0;
                for (int r = 0; r < size; r++) {
                    long long m[4];
                    segment(r, c, m);
                    s = (s + m[q % 4] * (q + 1)) % PRIME;
                }
                ok[2] &= total[8 * c + q] == s;
            }
    }
    MPI_Allreduce(MPI_IN_PLACE, ok, 3, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf("transfer: ranks %d channels %ld repetitions %ld reduce %s scatter %s allreduce %s\n", size, k, reps,
               ok[0] ? "ok" : "WRONG", ok[1] ? "ok" : "WRONG", ok[2] ? "ok" : "WRONG");
    MPI_Op_free(&chain_op);
    MPI_Op_free(&sum_op);
    MPI_Type_free(&mat);
    free(mine);
    free(prod);
    free(part);
    free(want);
    free(sums);
    free(total);
    MPI_Finalize();
    return ok[0] && ok[1] && ok[2] ? 0 : 1;
}
