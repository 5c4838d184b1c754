/* libtrace/renumber-wrap.c: the MPI functions that take a communicator and that mpi.spec does not
 * trace, wrapped only to hand MPI the renumbered world (renumber.h) where the program passes
 * MPI_COMM_WORLD; they record nothing. Attributes are left on the real world, where MPI keeps the
 * predefined ones (MPI_TAG_UB, MPI_UNIVERSE_SIZE, ...) and where MPICH's Fortran bindings read and
 * write them without passing through MPI_. */
#include "runtime.h"
#include "renumber.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FC__EXPORT __attribute__((visibility("default")))

/* ---- the MPI functions with a communicator argument that mpi.spec does not trace ------------------ */

/* R(name, (parameters), (arguments)): MPI_name hands PMPI_name its arguments, with fc__wc applied
 * to the communicator where the arguments say so. */
#define R(name, params, args)                                                                      \
    FC__EXPORT int MPI_##name params;                                                              \
    FC__EXPORT int MPI_##name params                                                               \
    {                                                                                              \
        return PMPI_##name args;                                                                   \
    }
R(Comm_rank, (MPI_Comm comm, int *rank), (fc__wc(comm), rank))
R(Comm_size, (MPI_Comm comm, int *size), (fc__wc(comm), size))
R(Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result), (fc__wc(comm1), fc__wc(comm2), result))
R(Comm_group, (MPI_Comm comm, MPI_Group *group), (fc__wc(comm), group))
R(Comm_get_info, (MPI_Comm comm, MPI_Info *info_used), (fc__wc(comm), info_used))
R(Comm_set_info, (MPI_Comm comm, MPI_Info info), (fc__wc(comm), info))
R(Comm_get_name, (MPI_Comm comm, char *comm_name, int *resultlen), (fc__wc(comm), comm_name, resultlen))
R(Comm_set_name, (MPI_Comm comm, const char *comm_name), (fc__wc(comm), comm_name))
R(Comm_test_inter, (MPI_Comm comm, int *flag), (fc__wc(comm), flag))
R(Comm_remote_size, (MPI_Comm comm, int *size), (fc__wc(comm), size))
R(Comm_remote_group, (MPI_Comm comm, MPI_Group *group), (fc__wc(comm), group))
R(Comm_call_errhandler, (MPI_Comm comm, int errorcode), (fc__wc(comm), errorcode))
R(Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler), (fc__wc(comm), errhandler))
R(Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request),
  (fc__wc(comm), info, newcomm, request))
R(Topo_test, (MPI_Comm comm, int *status), (fc__wc(comm), status))
R(Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank),
  (fc__wc(comm), ndims, dims, periods, newrank))
R(Graph_map, (MPI_Comm comm, int nnodes, const int indx[], const int edges[], int *newrank),
  (fc__wc(comm), nnodes, indx, edges, newrank))

/* An error handler set on MPI_COMM_WORLD goes on both worlds: MPI raises errors of the program's
 * calls on the renumbered one, and of calls that reach MPI_COMM_WORLD unrenumbered (attributes,
 * MPICH's internal use) on the real one. */
FC__EXPORT int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
FC__EXPORT int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    if (comm == MPI_COMM_WORLD && fc__world != MPI_COMM_WORLD) {
        int rc = PMPI_Comm_set_errhandler(MPI_COMM_WORLD, errhandler);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return PMPI_Comm_set_errhandler(fc__wc(comm), errhandler);
}

/* Sessions (MPI-4) reach the processes through process sets, outside MPI_COMM_WORLD: a program
 * using them cannot be renumbered, and is told so rather than run in the launcher's order. */
FC__EXPORT int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session);
FC__EXPORT int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    const char *v = getenv("FLOWCUT_RANK_ORDER");
    if (v != NULL && *v != '\0') {
        fprintf(stderr, "flowcut: FLOWCUT_RANK_ORDER cannot renumber a program that uses MPI sessions "
                        "(MPI_Session_init); unset it\n");
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    return PMPI_Session_init(info, errhandler, session);
}

#define PACK_ARGS(C)                                                                            \
    (const void *inbuf, C incount, MPI_Datatype datatype, void *outbuf, C outsize, C *position, MPI_Comm comm)
R(Pack, PACK_ARGS(int), (inbuf, incount, datatype, outbuf, outsize, position, fc__wc(comm)))
R(Pack_c, PACK_ARGS(MPI_Count), (inbuf, incount, datatype, outbuf, outsize, position, fc__wc(comm)))
R(Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int *size), (incount, datatype, fc__wc(comm), size))
R(Pack_size_c, (MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size),
  (incount, datatype, fc__wc(comm), size))
#define UNPACK_ARGS(C)                                                                             \
    (const void *inbuf, C insize, C *position, void *outbuf, C outcount, MPI_Datatype datatype, MPI_Comm comm)
R(Unpack, UNPACK_ARGS(int), (inbuf, insize, position, outbuf, outcount, datatype, fc__wc(comm)))
R(Unpack_c, UNPACK_ARGS(MPI_Count), (inbuf, insize, position, outbuf, outcount, datatype, fc__wc(comm)))

R(Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win),
  (base, size, disp_unit, info, fc__wc(comm), win))
R(Win_create_c, (void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win),
  (base, size, disp_unit, info, fc__wc(comm), win))
R(Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
  (size, disp_unit, info, fc__wc(comm), baseptr, win))
R(Win_allocate_c, (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
  (size, disp_unit, info, fc__wc(comm), baseptr, win))
R(Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
  (size, disp_unit, info, fc__wc(comm), baseptr, win))
R(Win_allocate_shared_c,
  (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
  (size, disp_unit, info, fc__wc(comm), baseptr, win))
R(Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win), (info, fc__wc(comm), win))
R(File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh),
  (fc__wc(comm), filename, amode, info, fh))

R(Comm_accept, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm),
  (port_name, info, root, fc__wc(comm), newcomm))
R(Comm_connect, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm),
  (port_name, info, root, fc__wc(comm), newcomm))
R(Comm_spawn,
  (const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm,
   int array_of_errcodes[]),
  (command, argv, maxprocs, info, root, fc__wc(comm), intercomm, array_of_errcodes))
R(Comm_spawn_multiple,
  (int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[],
   const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]),
  (count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info, root, fc__wc(comm), intercomm,
   array_of_errcodes))

#define ISR_ARGS(C)                                                                                \
    (const void *sendbuf, C sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, C recvcount,   \
     MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request)
#define ISR_CALL                                                                                   \
    (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, fc__wc(comm),     \
     request)
R(Isendrecv, ISR_ARGS(int), ISR_CALL)
R(Isendrecv_c, ISR_ARGS(MPI_Count), ISR_CALL)
#define ISRR_ARGS(C)                                                                               \
    (void *buf, C count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm,     \
     MPI_Request *request)
#define ISRR_CALL (buf, count, datatype, dest, sendtag, source, recvtag, fc__wc(comm), request)
R(Isendrecv_replace, ISRR_ARGS(int), ISRR_CALL)
R(Isendrecv_replace_c, ISRR_ARGS(MPI_Count), ISRR_CALL)
#define PART_ARGS(B)                                                                               \
    (B void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,        \
     MPI_Info info, MPI_Request *request)
#define PART_CALL (buf, partitions, count, datatype, dest, tag, fc__wc(comm), info, request)
R(Psend_init, PART_ARGS(const), PART_CALL)
R(Precv_init, PART_ARGS(), PART_CALL)

/* ---- Fortran 2008: MPICH's mpi_X_f08_ that call PMPI_X directly ------------------------------------ */

/* F(lower, Name, (Fortran parameters), (C arguments)): every argument by reference, handles as
 * MPI_Fint (the C handle, as the prelude of wrappers.c checks), then ierror; calls MPI_Name
 * above, so that the substitution is made in one place. */
#define F(lower, name, params, args)                                                               \
    FC__EXPORT void mpi_##lower##_f08_ params;                                                     \
    FC__EXPORT void mpi_##lower##_f08_ params                                                      \
    {                                                                                              \
        int rc = MPI_##name args;                                                                  \
        if (ierror)                                                                                \
            *ierror = rc;                                                                          \
    }

F(comm_rank, Comm_rank, (const MPI_Fint *comm, MPI_Fint *rank, MPI_Fint *ierror), ((MPI_Comm)*comm, rank))
F(comm_size, Comm_size, (const MPI_Fint *comm, MPI_Fint *size, MPI_Fint *ierror), ((MPI_Comm)*comm, size))
F(comm_compare, Comm_compare, (const MPI_Fint *comm1, const MPI_Fint *comm2, MPI_Fint *result, MPI_Fint *ierror),
  ((MPI_Comm)*comm1, (MPI_Comm)*comm2, result))
F(comm_group, Comm_group, (const MPI_Fint *comm, MPI_Fint *group, MPI_Fint *ierror),
  ((MPI_Comm)*comm, (MPI_Group *)group))
F(comm_get_info, Comm_get_info, (const MPI_Fint *comm, MPI_Fint *info, MPI_Fint *ierror),
  ((MPI_Comm)*comm, (MPI_Info *)info))
F(comm_set_info, Comm_set_info, (const MPI_Fint *comm, const MPI_Fint *info, MPI_Fint *ierror),
  ((MPI_Comm)*comm, (MPI_Info)*info))
F(comm_test_inter, Comm_test_inter, (const MPI_Fint *comm, MPI_Fint *flag, MPI_Fint *ierror),
  ((MPI_Comm)*comm, flag))
F(comm_remote_size, Comm_remote_size, (const MPI_Fint *comm, MPI_Fint *size, MPI_Fint *ierror),
  ((MPI_Comm)*comm, size))
F(comm_remote_group, Comm_remote_group, (const MPI_Fint *comm, MPI_Fint *group, MPI_Fint *ierror),
  ((MPI_Comm)*comm, (MPI_Group *)group))
F(comm_call_errhandler, Comm_call_errhandler, (const MPI_Fint *comm, const MPI_Fint *errorcode, MPI_Fint *ierror),
  ((MPI_Comm)*comm, *errorcode))
F(comm_get_errhandler, Comm_get_errhandler, (const MPI_Fint *comm, MPI_Fint *errhandler, MPI_Fint *ierror),
  ((MPI_Comm)*comm, (MPI_Errhandler *)errhandler))
F(comm_set_errhandler, Comm_set_errhandler, (const MPI_Fint *comm, const MPI_Fint *errhandler, MPI_Fint *ierror),
  ((MPI_Comm)*comm, (MPI_Errhandler)*errhandler))
F(comm_idup_with_info, Comm_idup_with_info,
  (const MPI_Fint *comm, const MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *request, MPI_Fint *ierror),
  ((MPI_Comm)*comm, (MPI_Info)*info, (MPI_Comm *)newcomm, (MPI_Request *)request))
F(topo_test, Topo_test, (const MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierror), ((MPI_Comm)*comm, status))
F(pack_size, Pack_size,
  (const MPI_Fint *incount, const MPI_Fint *datatype, const MPI_Fint *comm, MPI_Fint *size, MPI_Fint *ierror),
  (*incount, (MPI_Datatype)*datatype, (MPI_Comm)*comm, size))
F(win_create_dynamic, Win_create_dynamic, (const MPI_Fint *info, const MPI_Fint *comm, MPI_Fint *win, MPI_Fint *ierror),
  ((MPI_Info)*info, (MPI_Comm)*comm, (MPI_Win *)win))
F(barrier_init, Barrier_init, (const MPI_Fint *comm, const MPI_Fint *info, MPI_Fint *request, MPI_Fint *ierror),
  ((MPI_Comm)*comm, (MPI_Info)*info, (MPI_Request *)request))

/* The f08 entry points that convert between Fortran and C strings, handles or LOGICAL arrays before
 * calling PMPI_X, as MPICH's do (the disassembly of libmpichfort's mpi_X_f08_ gives the argument
 * order): Fortran strings come with their length as a hidden size_t argument after the others; a
 * string going to MPI loses its leading and trailing blanks, one coming back is padded with blanks
 * to its declared length (MPI_MAX_OBJECT_NAME for a communicator's name). gfortran's LOGICAL is an
 * int of 1 or 0, which MPI reads as C's truth values, so LOGICAL arrays pass as they are. */

/* A C copy of the Fortran string s of length n without its leading and trailing blanks (the
 * caller frees it), or NULL when out of memory. */
static char *f2c_string(const char *s, size_t n)
{
    while (n > 0 && s[n - 1] == ' ')
        n--;
    while (n > 0 && *s == ' ') {
        s++;
        n--;
    }
    char *c = malloc(n + 1);
    if (c != NULL) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/* Sessions are refused by MPI_Session_init above, from Fortran as from C. */
F(session_init, Session_init, (const MPI_Fint *info, const MPI_Fint *errhandler, MPI_Fint *session, MPI_Fint *ierror),
  ((MPI_Info)*info, (MPI_Errhandler)*errhandler, (MPI_Session *)session))
F(cart_map, Cart_map,
  (const MPI_Fint *comm, const MPI_Fint *ndims, const MPI_Fint *dims, const MPI_Fint *periods, MPI_Fint *newrank,
   MPI_Fint *ierror),
  ((MPI_Comm)*comm, *ndims, dims, periods, newrank))
F(graph_map, Graph_map,
  (const MPI_Fint *comm, const MPI_Fint *nnodes, const MPI_Fint *indx, const MPI_Fint *edges, MPI_Fint *newrank,
   MPI_Fint *ierror),
  ((MPI_Comm)*comm, *nnodes, indx, edges, newrank))
F(win_allocate, Win_allocate,
  (const MPI_Aint *size, const MPI_Fint *disp_unit, const MPI_Fint *info, const MPI_Fint *comm, void *baseptr,
   MPI_Fint *win, MPI_Fint *ierror),
  (*size, *disp_unit, (MPI_Info)*info, (MPI_Comm)*comm, baseptr, (MPI_Win *)win))
F(win_allocate_shared, Win_allocate_shared,
  (const MPI_Aint *size, const MPI_Fint *disp_unit, const MPI_Fint *info, const MPI_Fint *comm, void *baseptr,
   MPI_Fint *win, MPI_Fint *ierror),
  (*size, *disp_unit, (MPI_Info)*info, (MPI_Comm)*comm, baseptr, (MPI_Win *)win))

/* The MPI_Count and MPI_Aint variants (mpi_X_f08_large_) that call PMPI_X_c with a communicator. */
#define FL(lower, name, params, args)                                                              \
    FC__EXPORT void mpi_##lower##_f08_large_ params;                                               \
    FC__EXPORT void mpi_##lower##_f08_large_ params                                                \
    {                                                                                              \
        int rc = MPI_##name args;                                                                  \
        if (ierror)                                                                                \
            *ierror = rc;                                                                          \
    }
FL(win_allocate, Win_allocate_c,
   (const MPI_Aint *size, const MPI_Aint *disp_unit, const MPI_Fint *info, const MPI_Fint *comm, void *baseptr,
    MPI_Fint *win, MPI_Fint *ierror),
   (*size, *disp_unit, (MPI_Info)*info, (MPI_Comm)*comm, baseptr, (MPI_Win *)win))
FL(win_allocate_shared, Win_allocate_shared_c,
   (const MPI_Aint *size, const MPI_Aint *disp_unit, const MPI_Fint *info, const MPI_Fint *comm, void *baseptr,
    MPI_Fint *win, MPI_Fint *ierror),
   (*size, *disp_unit, (MPI_Info)*info, (MPI_Comm)*comm, baseptr, (MPI_Win *)win))
FL(pack_size, Pack_size_c,
   (const MPI_Count *incount, const MPI_Fint *datatype, const MPI_Fint *comm, MPI_Count *size, MPI_Fint *ierror),
   (*incount, (MPI_Datatype)*datatype, (MPI_Comm)*comm, size))

FC__EXPORT void mpi_comm_get_name_f08_(const MPI_Fint *comm, char *name, MPI_Fint *resultlen, MPI_Fint *ierror);
FC__EXPORT void mpi_comm_get_name_f08_(const MPI_Fint *comm, char *name, MPI_Fint *resultlen, MPI_Fint *ierror)
{
    char c[MPI_MAX_OBJECT_NAME + 1] = "";
    int rc = MPI_Comm_get_name((MPI_Comm)*comm, c, resultlen);
    size_t n = strnlen(c, MPI_MAX_OBJECT_NAME);
    memcpy(name, c, n);
    memset(name + n, ' ', MPI_MAX_OBJECT_NAME - n);
    if (ierror)
        *ierror = rc;
}

/* S(lower, Name, (Fortran parameters), (C arguments)): as F, with the Fortran string str (its
 * length str_len) handed to MPI as the C string cstr. */
#define S(lower, name, params, args)                                                               \
    FC__EXPORT void mpi_##lower##_f08_ params;                                                     \
    FC__EXPORT void mpi_##lower##_f08_ params                                                      \
    {                                                                                              \
        char *cstr = f2c_string(str, str_len);                                                     \
        int rc = cstr == NULL ? MPI_ERR_NO_MEM : MPI_##name args;                                  \
        free(cstr);                                                                                \
        if (ierror)                                                                                \
            *ierror = rc;                                                                          \
    }
S(comm_set_name, Comm_set_name, (const MPI_Fint *comm, const char *str, MPI_Fint *ierror, size_t str_len),
  ((MPI_Comm)*comm, cstr))
S(comm_accept, Comm_accept,
  (const char *str, const MPI_Fint *info, const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *newcomm,
   MPI_Fint *ierror, size_t str_len),
  (cstr, (MPI_Info)*info, *root, (MPI_Comm)*comm, (MPI_Comm *)newcomm))
S(comm_connect, Comm_connect,
  (const char *str, const MPI_Fint *info, const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *newcomm,
   MPI_Fint *ierror, size_t str_len),
  (cstr, (MPI_Info)*info, *root, (MPI_Comm)*comm, (MPI_Comm *)newcomm))

/* A file handle goes back to Fortran through MPI_File_c2f, as MPICH's binding does. */
FC__EXPORT void mpi_file_open_f08_(const MPI_Fint *comm, const char *str, const MPI_Fint *amode, const MPI_Fint *info,
                                   MPI_Fint *fh, MPI_Fint *ierror, size_t str_len);
FC__EXPORT void mpi_file_open_f08_(const MPI_Fint *comm, const char *str, const MPI_Fint *amode, const MPI_Fint *info,
                                   MPI_Fint *fh, MPI_Fint *ierror, size_t str_len)
{
    MPI_File file = MPI_FILE_NULL;
    char *cstr = f2c_string(str, str_len);
    int rc = cstr == NULL ? MPI_ERR_NO_MEM : MPI_File_open((MPI_Comm)*comm, cstr, *amode, (MPI_Info)*info, &file);
    free(cstr);
    *fh = MPI_File_c2f(file);
    if (ierror)
        *ierror = rc;
}
