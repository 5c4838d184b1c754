! fmpi.f90: a Fortran program with the older `use mpi` bindings (the same calls as mpif.h): a
! token ring with MPI_Send/MPI_Recv, an MPI_Bcast and an MPI_Reduce; shows that programs on the
! pre-2008 Fortran bindings are traced.
!
! Usage: fmpi ROUNDS
!   Rank 0 broadcasts ROUNDS with MPI_Bcast (its own argument wins). Then ROUNDS times a token (one
!   integer, tag 4) goes round the ring as in ring.c. Finally MPI_Reduce sums the ranks' last token
!   values on rank 0, which prints the checksum.
program fmpi
    use mpi
    implicit none
    integer :: rank, nranks, left, right, rounds, r, token, total, ierr
    integer :: st(MPI_STATUS_SIZE)
    character(len=32) :: arg

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
    rounds = 2
    if (rank == 0 .and. command_argument_count() >= 1) then
        call get_command_argument(1, arg)
        read (arg, *) rounds
    end if
    call MPI_Bcast(rounds, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    right = mod(rank + 1, nranks)
    left = mod(rank + nranks - 1, nranks)
    token = 0
    do r = 1, rounds
        if (rank == 0) then
            token = token + 1
            call MPI_Send(token, 1, MPI_INTEGER, right, 4, MPI_COMM_WORLD, ierr)
            call MPI_Recv(token, 1, MPI_INTEGER, left, 4, MPI_COMM_WORLD, st, ierr)
        else
            call MPI_Recv(token, 1, MPI_INTEGER, left, 4, MPI_COMM_WORLD, st, ierr)
            token = token + rank
            call MPI_Send(token, 1, MPI_INTEGER, right, 4, MPI_COMM_WORLD, ierr)
        end if
    end do
    call MPI_Reduce(token, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        print '(a,i0,a,i0,a,i0)', 'fmpi: ranks=', nranks, ' rounds=', rounds, ' checksum=', total
    end if
    call MPI_Finalize(ierr)
end program fmpi
