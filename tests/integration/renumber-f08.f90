! renumber-f08.f90: with a rank order, a `use mpi_f08` program sees the renumbered world in the
! calls whose MPICH bindings convert strings, handles or LOGICAL arrays before calling PMPI_ (and so
! pass through the tracer only by its own f08 entry points). Its expected rank is order(slot),
! with the slot from Hydra's PMI_RANK and the order as the first argument (a comma-separated list).
! Checked against that rank: MPI_Cart_map and MPI_Graph_map of MPI_COMM_WORLD (MPICH's default
! maps give each process its own rank), the group of a window of MPI_Win_allocate (identical to
! the world's), a shared window of MPI_Win_allocate_shared (the segment
! of rank r + 1 holds r + 1), the group of a file of MPI_File_open (identical to the world's), and a
! name set on MPI_COMM_WORLD with blanks around it, read back trimmed and blank-padded, and
! MPI_Session_init refused when the order renumbers any rank. Prints
! "ok: N ranks renumbered (f08)" from rank 0, or one line per failed check and exits 1.
program renumber_f08
    use mpi_f08
    use, intrinsic :: iso_c_binding
    implicit none
    integer :: me, n, slot, want, i, newrank, res, bad, nbad, ln
    integer, allocatable :: order(:), idx(:), edges(:)
    character(len=256) :: arg, env
    character(len=MPI_MAX_OBJECT_NAME) :: name
    type(MPI_Win) :: win
    type(MPI_File) :: fh
    type(MPI_Group) :: fg, wg
    type(c_ptr) :: base
    integer, pointer :: cell(:)
    integer(kind=MPI_ADDRESS_KIND) :: sz
    integer :: du
    integer :: mine, ierr
    logical :: renumbered
    type(MPI_Session) :: session

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, me)
    call MPI_Comm_size(MPI_COMM_WORLD, n)
    call get_command_argument(1, arg)
    call get_environment_variable("PMI_RANK", env)
    read (env, *) slot
    allocate (order(n))
    read (arg, *) order
    want = order(slot + 1)
    bad = 0
    if (me /= want) call fail("MPI_Comm_rank", me)

    call MPI_Cart_map(MPI_COMM_WORLD, 1, [n], [.false.], newrank)
    if (newrank /= want) call fail("MPI_Cart_map", newrank)

    allocate (idx(n), edges(2 * n))
    do i = 1, n
        idx(i) = 2 * i
        edges(2 * i - 1) = modulo(i - 2, n)
        edges(2 * i) = modulo(i, n)
    end do
    call MPI_Graph_map(MPI_COMM_WORLD, n, idx, edges, newrank)
    if (newrank /= want) call fail("MPI_Graph_map", newrank)

    ! The window's group, whose ranks are its target ranks, must be the world's in the same order.
    sz = 4
    call MPI_Win_allocate(sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
    call MPI_Win_get_group(win, fg)
    call MPI_Comm_group(MPI_COMM_WORLD, wg)
    call MPI_Group_compare(fg, wg, res)
    if (res /= MPI_IDENT) call fail("MPI_Win_allocate (its group compared with the world's, MPI_IDENT expected)", res)
    call MPI_Group_free(fg)
    call MPI_Group_free(wg)
    call MPI_Win_free(win)

    ! Every segment holds its owner's rank; rank me + 1's, found by MPI_Win_shared_query.
    call MPI_Win_allocate_shared(sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
    call c_f_pointer(base, cell, [1])
    call MPI_Win_fence(0, win)
    cell(1) = me
    call MPI_Win_fence(0, win)
    call MPI_Win_shared_query(win, modulo(me + 1, n), sz, du, base)
    call c_f_pointer(base, cell, [1])
    call MPI_F_sync_reg(cell)
    mine = cell(1)
    if (mine /= modulo(want + 1, n)) call fail("MPI_Win_allocate_shared (segment of my rank + 1)", mine)
    call MPI_Win_fence(0, win)
    call MPI_Win_free(win)

    call get_command_argument(2, arg)
    call MPI_File_open(MPI_COMM_WORLD, trim(arg), MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                       MPI_INFO_NULL, fh)
    call MPI_File_get_group(fh, fg)
    call MPI_Comm_group(MPI_COMM_WORLD, wg)
    call MPI_Group_compare(fg, wg, res)
    if (res /= MPI_IDENT) call fail("MPI_File_open (its group compared with the world's, MPI_IDENT expected)", res)
    call MPI_Group_free(fg)
    call MPI_Group_free(wg)
    call MPI_File_close(fh)

    call MPI_Comm_set_name(MPI_COMM_WORLD, "  the renumbered world  ")
    call MPI_Comm_get_name(MPI_COMM_WORLD, name, ln)
    if (name /= "the renumbered world" .or. ln /= 20) call fail("MPI_Comm_get_name after MPI_Comm_set_name", ln)

    ! Sessions reach processes outside the world: refused when the order renumbers anything.
    renumbered = .false.
    do i = 1, n
        if (order(i) /= i - 1) renumbered = .true.
    end do
    call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
    if (ierr == MPI_SUCCESS) call MPI_Session_finalize(session)
    if (renumbered .and. ierr == MPI_SUCCESS) call fail("MPI_Session_init (refusal expected)", ierr)

    call MPI_Allreduce(bad, nbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (me == 0 .and. nbad == 0) print '(a, i0, a)', "ok: ", n, " ranks renumbered (f08)"
    call MPI_Finalize()
    if (nbad /= 0) stop 1

contains

    subroutine fail(what, got)
        character(len=*), intent(in) :: what
        integer, intent(in) :: got
        print '(a, i0, a, i0, a, a, a, i0)', "slot ", slot, " (rank ", want, "): ", what, " gives ", got
        bad = bad + 1
    end subroutine fail
end program renumber_f08
