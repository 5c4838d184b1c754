// cxx.cxx: a C++ program (std::vector, a small RAII class, lambdas) calling MPI's C interface:
// neighbours swap vectors with MPI_Sendrecv and rank 0 collects sums with MPI_Gather; shows that
// C++ applications are traced like C ones.
//
// Usage: cxx ITERS COUNT
//   ITERS times every rank sends COUNT doubles to its right neighbour and receives COUNT doubles
//   from its left neighbour with one MPI_Sendrecv (tag 9). Then one MPI_Gather of one double per
//   rank to rank 0, which prints the checksum.
#include <mpi.h>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace {

// Initialises MPI for the lifetime of the object so every exit path finalizes.
class Session {
  public:
    Session(int *argc, char ***argv) { MPI_Init(argc, argv); }
    ~Session() { MPI_Finalize(); }
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;
    int rank() const
    {
        int r;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        return r;
    }
    int size() const
    {
        int s;
        MPI_Comm_size(MPI_COMM_WORLD, &s);
        return s;
    }
};

} // namespace

int main(int argc, char **argv)
{
    Session mpi(&argc, &argv);
    const int rank = mpi.rank(), nranks = mpi.size();
    if (argc != 3) {
        if (rank == 0)
            std::fprintf(stderr, "usage: mpiexec -n N cxx ITERS COUNT\n");
        return 2;
    }
    const int iters = std::atoi(argv[1]), count = std::atoi(argv[2]);
    const int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    std::vector<double> out(count), in(count);
    double acc = 0.0;
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < count; i++)
            out[i] = rank + it * 0.5 + i;
        MPI_Sendrecv(out.data(), count, MPI_DOUBLE, right, 9, in.data(), count, MPI_DOUBLE, left, 9,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        acc += std::accumulate(in.begin(), in.end(), 0.0);
    }
    std::vector<double> all(rank == 0 ? nranks : 0);
    MPI_Gather(&acc, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        auto total = std::accumulate(all.begin(), all.end(), 0.0);
        std::printf("cxx: ranks=%d iters=%d count=%d checksum=%.3f\n", nranks, iters, count, total);
    }
    return 0;
}
