/* libtrace/renumber.h: the renumbered world (FLOWCUT_RANK_ORDER, `flowcut run --rank-order`).
 *
 * When a rank order is given, MPI_Init builds a communicator of every process of MPI_COMM_WORLD in
 * which the process the launcher started in slot s has rank order[s] (PMPI_Comm_split with key
 * order[s]), and every wrapper hands MPI that communicator wherever the program passes
 * MPI_COMM_WORLD: the program's world rank r then runs in the slot the order gives it. Without a
 * rank order fc__world is MPI_COMM_WORLD and the substitution changes nothing. docs/tracing.md
 * lists what is covered. */
#ifndef FLOWCUT_LIBTRACE_RENUMBER_H
#define FLOWCUT_LIBTRACE_RENUMBER_H

#include <mpi.h>

/* The program's MPI_COMM_WORLD: the renumbered world after MPI_Init when a rank order is set, else
 * MPI_COMM_WORLD. Written once, by fc__renumber_init, before any other wrapper can run. */
__attribute__((visibility("hidden"))) extern MPI_Comm fc__world;
/* The launcher's slot of this process (its rank in the real MPI_COMM_WORLD), -1 when the ranks are
 * not renumbered. */
__attribute__((visibility("hidden"))) extern int fc__launch_slot;

/* The communicator MPI gets for the program's comm. */
static inline MPI_Comm fc__wc(MPI_Comm comm)
{
    return comm == MPI_COMM_WORLD ? fc__world : comm;
}

/* Called by the MPI_Init and MPI_Init_thread wrappers once MPI is up, before tracing starts, with
 * tracing on or off. Without FLOWCUT_RANK_ORDER it does nothing. With it, it reads the order,
 * checks it (a permutation of 0..size-1 of MPI_COMM_WORLD's size) and builds fc__world; on a bad
 * order world rank 0 prints one line naming the problem and the run aborts, so that no program
 * runs under a placement it was not given. */
__attribute__((visibility("hidden"))) void fc__renumber_init(void);

/* Called when tracing starts without MPI_Init having been seen: with a rank order set, the ranks
 * cannot be renumbered any more, and the run aborts with one line. */
__attribute__((visibility("hidden"))) void fc__renumber_missed(void);

/* The entry points renumber.c defines besides mpi.spec's (for tests/unit/test-wrappers-symbols.sh). */
#define FC_RENUMBER_SYMBOLS \
    "MPI_Comm_rank", \
    "MPI_Comm_size", \
    "MPI_Comm_compare", \
    "MPI_Comm_group", \
    "MPI_Comm_get_info", \
    "MPI_Comm_set_info", \
    "MPI_Comm_get_name", \
    "MPI_Comm_set_name", \
    "MPI_Comm_test_inter", \
    "MPI_Comm_remote_size", \
    "MPI_Comm_remote_group", \
    "MPI_Comm_call_errhandler", \
    "MPI_Comm_get_errhandler", \
    "MPI_Comm_set_errhandler", \
    "MPI_Comm_idup_with_info", \
    "MPI_Topo_test", \
    "MPI_Cart_map", \
    "MPI_Graph_map", \
    "MPI_Pack", \
    "MPI_Pack_c", \
    "MPI_Pack_size", \
    "MPI_Pack_size_c", \
    "MPI_Unpack", \
    "MPI_Unpack_c", \
    "MPI_Win_create", \
    "MPI_Win_create_c", \
    "MPI_Win_allocate", \
    "MPI_Win_allocate_c", \
    "MPI_Win_allocate_shared", \
    "MPI_Win_allocate_shared_c", \
    "MPI_Win_create_dynamic", \
    "MPI_File_open", \
    "MPI_Comm_accept", \
    "MPI_Comm_connect", \
    "MPI_Comm_spawn", \
    "MPI_Comm_spawn_multiple", \
    "MPI_Isendrecv", \
    "MPI_Isendrecv_c", \
    "MPI_Isendrecv_replace", \
    "MPI_Isendrecv_replace_c", \
    "MPI_Psend_init", \
    "MPI_Precv_init", \
    "MPI_Session_init", \
    "mpi_comm_rank_f08_", \
    "mpi_comm_size_f08_", \
    "mpi_comm_compare_f08_", \
    "mpi_comm_group_f08_", \
    "mpi_comm_get_info_f08_", \
    "mpi_comm_set_info_f08_", \
    "mpi_comm_test_inter_f08_", \
    "mpi_comm_remote_size_f08_", \
    "mpi_comm_remote_group_f08_", \
    "mpi_comm_call_errhandler_f08_", \
    "mpi_comm_get_errhandler_f08_", \
    "mpi_comm_set_errhandler_f08_", \
    "mpi_comm_idup_with_info_f08_", \
    "mpi_topo_test_f08_", \
    "mpi_pack_size_f08_", \
    "mpi_win_create_dynamic_f08_", \
    "mpi_barrier_init_f08_", \
    "mpi_cart_map_f08_", \
    "mpi_graph_map_f08_", \
    "mpi_comm_get_name_f08_", \
    "mpi_comm_set_name_f08_", \
    "mpi_win_allocate_f08_", \
    "mpi_win_allocate_shared_f08_", \
    "mpi_file_open_f08_", \
    "mpi_comm_accept_f08_", \
    "mpi_comm_connect_f08_", \
    "mpi_session_init_f08_", \
    "mpi_win_allocate_f08_large_", \
    "mpi_win_allocate_shared_f08_large_", \
    "mpi_pack_size_f08_large_",

/* The f08 entry points of MPICH that call PMPI_ directly for a function above and that
 * renumber-wrap.c does not interpose: none. */
#define FC_RENUMBER_F08_GAPS

#endif
