/* libtrace/comm-wrap.c: records the environment (init, finalize, abort) and
 * communicator-constructor events, and maps Fortran 2008 arguments for the f08 entry points the
 * wrappers define. */
#include "record.h"

uint64_t fc__status_bytes_mpi(const MPI_Status *st)
{
    MPI_Count n = 0;
    if (st == NULL || st == MPI_STATUS_IGNORE ||
        PMPI_Get_count_c(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
        return 0;
    return (uint64_t)n;
}

/* ---- environment -------------------------------------------------------------------------- */

/* MPI_Init, MPI_Init_thread and MPI_Finalize: times, call site and the error flag say it all. */
void fc__rec_env(fc__thread *t, const fc__call *c)
{
    fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, 0, 0, 0);
}

/* MPI_Abort: the communicator it aborts. The error code has no field of its own in format 1.0. */
void fc__rec_abort(fc__thread *t, const fc__call *c, MPI_Comm comm, int errorcode)
{
    (void)errorcode;
    fc__rec_put(t, c, FC_PEER_NONE, 0, fc__comm(comm), 0, 0, 0, 0);
}

/* ---- communicators ------------------------------------------------------------------------ */

/* A blocking constructor: comm = the parent, obj = the new comm_id + 1 (0 for MPI_COMM_NULL, and
 * when the call failed, since *newcomm is then not guaranteed to hold anything). */
void fc__rec_comm_new(fc__thread *t, const fc__call *c, MPI_Comm parent, const MPI_Comm *newcomm)
{
    uint64_t obj = 0;
    if (c->rc == MPI_SUCCESS && newcomm != NULL && *newcomm != MPI_COMM_NULL) {
        uint32_t id = fc__comm_created(*newcomm);
        obj = id == UINT32_MAX ? 0 : (uint64_t)id + 1;
    }
    fc__rec_put(t, c, FC_PEER_NONE, 0, fc__comm(parent), 0, obj, 0, 0);
}

/* MPI_Comm_idup: like any non-blocking post, obj = the request. The new communicator may not be
 * used (not even queried) before that request completes, so it is defined when first seen in use.
 */
void fc__rec_comm_idup(fc__thread *t, const fc__call *c, MPI_Comm parent, const MPI_Request *req)
{
    uint64_t obj = 0;
    if (c->rc == MPI_SUCCESS && req != NULL) {
        obj = FC__HANDLE(*req);
        fc__wrap_nbc_posted(*req);
    }
    fc__rec_put(t, c, FC_PEER_NONE, 0, fc__comm(parent), 0, obj, 0, 0);
}

uint32_t fc__wrap_freeing(const MPI_Comm *comm)
{
    if (comm == NULL || *comm == MPI_COMM_NULL)
        return 0;
    uint32_t id = fc__comm(*comm);
    fc__comm_freed(*comm);
    return id;
}

/* MPI_Comm_free: comm = the comm_id the communicator had (taken before PMPI freed it). */
void fc__rec_comm_free(fc__thread *t, const fc__call *c, uint32_t comm_id)
{
    fc__rec_put(t, c, FC_PEER_NONE, 0, comm_id, 0, 0, 0, 0);
}

/* ---- Fortran 2008 arguments ------------------------------------------------------------------
 * MPICH's mpi_f08 module passes MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE, MPI_UNWEIGHTED and
 * MPI_WEIGHTS_EMPTY as the addresses of these objects; its f08 entry points compare against them
 * and pass the C constants on. Ours do the same. The status objects are defined by libmpich, the
 * weight ones by libmpichfort only, which a C program does not load: weak references, then. */
extern int __mpi_f08_link_constants_MOD_mpi_unweighted __attribute__((weak));
extern int __mpi_f08_link_constants_MOD_mpi_weights_empty __attribute__((weak));

MPI_Status *fc__f08_status(MPI_F08_status *st)
{
    if (st == &MPIR_F08_MPI_STATUS_IGNORE_OBJ)
        return MPI_STATUS_IGNORE;
    return (MPI_Status *)(void *)st;
}

MPI_Status *fc__f08_statuses(MPI_F08_status *sts)
{
    if (sts != NULL && sts == MPIR_F08_MPI_STATUSES_IGNORE_OBJ)
        return MPI_STATUSES_IGNORE;
    return (MPI_Status *)(void *)sts;
}

const int *fc__f08_weights(const MPI_Fint *w)
{
    if (w != NULL && w == &__mpi_f08_link_constants_MOD_mpi_unweighted)
        return MPI_UNWEIGHTED;
    if (w != NULL && w == &__mpi_f08_link_constants_MOD_mpi_weights_empty)
        return MPI_WEIGHTS_EMPTY;
    return w;
}
