! fwaitall.f90: MPI_Waitall from Fortran, through the older `use mpi` bindings (the same calls as
! mpif.h, which MPICH routes to the C MPI_Waitall) and through `use mpi_f08` (which MPICH routes to
! PMPI_Waitall directly): three receives whose messages arrive GAP_MS apart and a null request,
! completed by one MPI_Waitall each; shows that both Fortran bindings get each request's own
! completion time and MPI_Waitall's results.
!
! Usage: mpiexec -n 2 fwaitall GAP_MS
!   For each binding, rank 0 posts three MPI_Irecv (tags 1, 2, 3; 1, 2 and 3 integers) and meets
!   rank 1 in a barrier; rank 1 then sends message k at k x GAP_MS after leaving it. Rank 0 prints
!   each status (source, tag, count, error) and whether each request is now null.

subroutine legacy(rank, gap)
    use mpi
    implicit none
    integer, intent(in) :: rank
    double precision, intent(in) :: gap
    integer :: req(4), st(MPI_STATUS_SIZE, 4), buf(3, 3), k, n, ierr
    double precision :: t
    if (rank == 1) then
        buf = 7
        call MPI_Barrier(MPI_COMM_WORLD, ierr)
        t = MPI_Wtime()
        do k = 1, 3
            do while (MPI_Wtime() < t + k * gap)
            end do
            call MPI_Send(buf(1, k), k, MPI_INTEGER, 0, k, MPI_COMM_WORLD, ierr)
        end do
        return
    end if
    do k = 1, 3
        call MPI_Irecv(buf(1, k), 3, MPI_INTEGER, 1, k, MPI_COMM_WORLD, req(k), ierr)
    end do
    req(4) = MPI_REQUEST_NULL
    st = -1 ! what MPI leaves alone stays -1
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Waitall(4, req, st, ierr)
    print '(a,i0)', 'use mpi: ierr=', ierr
    do k = 1, 4
        call MPI_Get_count(st(:, k), MPI_INTEGER, n, ierr)
        print '(a,i0,a,i0,a,i0,a,i0,a,l1)', '  source=', st(MPI_SOURCE, k), ' tag=', st(MPI_TAG, k), &
            ' count=', n, ' error=', st(MPI_ERROR, k), ' null=', req(k) == MPI_REQUEST_NULL
    end do
end subroutine legacy

subroutine modern(rank, gap)
    use mpi_f08
    implicit none
    integer, intent(in) :: rank
    double precision, intent(in) :: gap
    type(MPI_Request) :: req(4)
    type(MPI_Status) :: st(4)
    integer :: buf(3, 3), k, n, ierr
    double precision :: t
    if (rank == 1) then
        buf = 8
        call MPI_Barrier(MPI_COMM_WORLD)
        t = MPI_Wtime()
        do k = 1, 3
            do while (MPI_Wtime() < t + k * gap)
            end do
            call MPI_Send(buf(1, k), k, MPI_INTEGER, 0, 10 + k, MPI_COMM_WORLD)
        end do
        return
    end if
    do k = 1, 3
        call MPI_Irecv(buf(1, k), 3, MPI_INTEGER, 1, 10 + k, MPI_COMM_WORLD, req(k))
    end do
    req(4) = MPI_REQUEST_NULL
    st(:)%MPI_SOURCE = -1 ! what MPI leaves alone stays -1
    st(:)%MPI_TAG = -1
    st(:)%MPI_ERROR = -1
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Waitall(4, req, st, ierr)
    print '(a,i0)', 'use mpi_f08: ierr=', ierr
    do k = 1, 4
        call MPI_Get_count(st(k), MPI_INTEGER, n)
        print '(a,i0,a,i0,a,i0,a,i0,a,l1)', '  source=', st(k)%MPI_SOURCE, ' tag=', st(k)%MPI_TAG, &
            ' count=', n, ' error=', st(k)%MPI_ERROR, ' null=', req(k) == MPI_REQUEST_NULL
    end do
end subroutine modern

program fwaitall
    use mpi_f08
    implicit none
    integer :: rank, ms
    character(len=32) :: arg
    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    ms = 100
    if (command_argument_count() >= 1) then
        call get_command_argument(1, arg)
        read (arg, *) ms
    end if
    call legacy(rank, ms / 1000d0)
    call modern(rank, ms / 1000d0)
    call MPI_Finalize()
end program fwaitall
