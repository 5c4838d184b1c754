! f08.f90: a Fortran 2008 program (`use mpi_f08`) that exchanges arrays with its ring neighbours by
! MPI_Isend/MPI_Irecv, completes them with MPI_Wait and MPI_Waitall, and meets in MPI_Barrier and
! MPI_Allreduce; shows that Fortran 2008 bindings are traced like C ones.
!
! Usage: f08 ITERS
!   Each iteration every rank posts one MPI_Irecv from its left neighbour and one MPI_Isend of four
!   integers to its right neighbour (tag 3), waits for the receive with MPI_Wait and for the send
!   with MPI_Waitall (on a one-element array). Then one MPI_Barrier and one MPI_Allreduce (one
!   integer, sum); rank 0 prints the checksum.
program f08
    use mpi_f08
    implicit none
    integer :: rank, nranks, left, right, iters, it, i, total, local
    integer :: sendbuf(4), recvbuf(4)
    type(MPI_Request) :: rreq, sreq(1)
    type(MPI_Status) :: st
    character(len=32) :: arg

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks)
    iters = 3
    if (command_argument_count() >= 1) then
        call get_command_argument(1, arg)
        read (arg, *) iters
    end if
    right = mod(rank + 1, nranks)
    left = mod(rank + nranks - 1, nranks)
    local = 0
    do it = 1, iters
        do i = 1, 4
            sendbuf(i) = rank * 100 + it * 10 + i
        end do
        call MPI_Irecv(recvbuf, 4, MPI_INTEGER, left, 3, MPI_COMM_WORLD, rreq)
        call MPI_Isend(sendbuf, 4, MPI_INTEGER, right, 3, MPI_COMM_WORLD, sreq(1))
        call MPI_Wait(rreq, st)
        call MPI_Waitall(1, sreq, MPI_STATUSES_IGNORE)
        local = local + sum(recvbuf) + st%MPI_SOURCE
    end do
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Allreduce(local, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (rank == 0) then
        print '(a,i0,a,i0,a,i0)', 'f08: ranks=', nranks, ' iters=', iters, ' checksum=', total
    end if
    call MPI_Finalize()
end program f08
