/* halo.c: a Jacobi-style halo exchange on a periodic 2-D decomposition with MPI_Isend/MPI_Irecv
 * and one MPI_Waitall per step; shows non-blocking calls, a derived datatype for the columns, and
 * a communicator whose ranks differ from the world ranks.
 *
 * Usage: halo STEPS NX NY
 *   The ranks form a PX x PY periodic grid (MPI_Dims_create). The grid lives in a communicator made
 *   by MPI_Comm_split that numbers the ranks backwards (grid rank = size - 1 - world rank), so a
 *   trace reader must map communicator ranks back to world ranks. Each rank owns NX x NY doubles.
 *   Each step every rank posts four MPI_Irecv (north, south, west, east) and then four MPI_Isend,
 *   and completes all eight with MPI_Waitall. Rows (north/south) are NX contiguous doubles; columns
 *   (west/east) are NY doubles through an MPI_Type_vector. The tag is the direction the message
 *   travels (0 north, 1 south, 2 west, 3 east). Then each rank averages its cells with its halo and
 *   an MPI_Allreduce sums a checksum that rank 0 prints. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { NORTH, SOUTH, WEST, EAST };

int main(int argc, char **argv)
{
    int wrank, nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 4) {
        if (wrank == 0)
            fprintf(stderr, "usage: mpiexec -n N halo STEPS NX NY\n");
        MPI_Finalize();
        return 2;
    }
    int steps = atoi(argv[1]), nx = atoi(argv[2]), ny = atoi(argv[3]);

    MPI_Comm grid;
    MPI_Comm_split(MPI_COMM_WORLD, 0, nranks - 1 - wrank, &grid);
    int rank;
    MPI_Comm_rank(grid, &rank);
    int dims[2] = {0, 0};
    MPI_Dims_create(nranks, 2, dims);
    int px = dims[0], py = dims[1];
    int x = rank % px, y = rank / px;
    int nbr[4];
    nbr[NORTH] = x + ((y + py - 1) % py) * px;
    nbr[SOUTH] = x + ((y + 1) % py) * px;
    nbr[WEST] = (x + px - 1) % px + y * px;
    nbr[EAST] = (x + 1) % px + y * px;

    /* (ny + 2) rows of (nx + 2) doubles: the owned cells and a one-cell halo around them. */
    int ld = nx + 2;
    double *u = calloc((size_t)(ny + 2) * (size_t)ld, sizeof(double));
    double *v = calloc((size_t)(ny + 2) * (size_t)ld, sizeof(double));
#define AT(a, i, j) (a)[(size_t)(j) * (size_t)ld + (size_t)(i)]
    for (int j = 1; j <= ny; j++)
        for (int i = 1; i <= nx; i++)
            AT(u, i, j) = (double)(rank * 7 + i * 3 + j);
    MPI_Datatype column;
    MPI_Type_vector(ny, 1, ld, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);

    for (int s = 0; s < steps; s++) {
        MPI_Request req[8];
        MPI_Status st[8];
        /* A message travelling north arrives from the south neighbour into the south halo row. */
        MPI_Irecv(&AT(u, 1, ny + 1), nx, MPI_DOUBLE, nbr[SOUTH], NORTH, grid, &req[0]);
        MPI_Irecv(&AT(u, 1, 0), nx, MPI_DOUBLE, nbr[NORTH], SOUTH, grid, &req[1]);
        MPI_Irecv(&AT(u, nx + 1, 1), 1, column, nbr[EAST], WEST, grid, &req[2]);
        MPI_Irecv(&AT(u, 0, 1), 1, column, nbr[WEST], EAST, grid, &req[3]);
        MPI_Isend(&AT(u, 1, 1), nx, MPI_DOUBLE, nbr[NORTH], NORTH, grid, &req[4]);
        MPI_Isend(&AT(u, 1, ny), nx, MPI_DOUBLE, nbr[SOUTH], SOUTH, grid, &req[5]);
        MPI_Isend(&AT(u, 1, 1), 1, column, nbr[WEST], WEST, grid, &req[6]);
        MPI_Isend(&AT(u, nx, 1), 1, column, nbr[EAST], EAST, grid, &req[7]);
        MPI_Waitall(8, req, st);
        for (int j = 1; j <= ny; j++)
            for (int i = 1; i <= nx; i++)
                AT(v, i, j) = 0.25 * (AT(u, i - 1, j) + AT(u, i + 1, j) + AT(u, i, j - 1) + AT(u, i, j + 1));
        double *t = u;
        u = v;
        v = t;
    }

    double local = 0.0, total = 0.0;
    for (int j = 1; j <= ny; j++)
        for (int i = 1; i <= nx; i++)
            local += AT(u, i, j);
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, grid);
    if (wrank == 0)
        printf("halo: grid=%dx%d steps=%d cells=%dx%d checksum=%.6e\n", px, py, steps, nx, ny, total);
    MPI_Type_free(&column);
    MPI_Comm_free(&grid);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
