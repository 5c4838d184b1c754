! allcalls-f08.f90: calls, through `use mpi_f08`, every intercepted MPI function whose Fortran 2008
! entry point in MPICH's libmpichfort calls PMPI_ directly (and which libflowcut therefore defines
! itself), plus the buffer functions around them, so that test-tracer-allcalls.sh can check that
! each one is recorded. Two ranks; rank r talks to 1 - r; both make the same calls. Per rank:
! Init_thread 1, Finalize 1, Isend 8, Irecv 7, Wait 5, Waitall 4, Waitany 2, Waitsome 1, Test >= 1,
! Testall >= 1, Testany >= 2, Testsome >= 1, Recv_init 1, Send_init 1, Startall 1, Start 2,
! Request_free 2, Probe 2, Iprobe 1, Mprobe 1, Mrecv 1, Improbe 1, Imrecv 1, Cancel 1, Barrier 1,
! Ibarrier 1, Allreduce 1, Comm_split 2, Comm_free 15, each other communicator constructor 1;
! COMPLETE 22, START 2. With the argument "init": MPI_Init, MPI_Barrier, MPI_Finalize only; with
! "abort": MPI_Init, then rank 0 calls MPI_Abort while rank 1 waits in MPI_Recv.
program allcalls_f08
    use mpi_f08
    implicit none
    integer :: rank, partner, i, idx, outc, provided, ind(2), sbuf(4), rbuf(4)
    logical :: flag
    type(MPI_Request) :: r(2), r1
    type(MPI_Status) :: st, sts(2)
    type(MPI_Message) :: m
    type(MPI_Comm) :: c(12)
    type(MPI_Group) :: g
    integer :: dims(1), index2(2), edges(2), src(1), deg(1), dst(1)
    logical :: periods(1), remain(1)
    character(len=16) :: mode

    mode = 'main'
    if (command_argument_count() >= 1) call get_command_argument(1, mode)
    if (mode == 'main') then
        call MPI_Init_thread(MPI_THREAD_SINGLE, provided)
    else
        call MPI_Init()
    end if
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    partner = 1 - rank
    if (mode == 'init') then
        call MPI_Barrier(MPI_COMM_WORLD)
        call MPI_Finalize()
        stop
    else if (mode == 'abort') then
        if (rank == 0) call MPI_Abort(MPI_COMM_WORLD, 3)
        call MPI_Recv(rbuf, 1, MPI_INTEGER, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    end if
    sbuf = rank
    ! Wait, Test, Waitall, Testall, Waitany, Testany, Waitsome, Testsome
    call MPI_Irecv(rbuf, 1, MPI_INTEGER, partner, 1, MPI_COMM_WORLD, r(1))
    call MPI_Isend(sbuf, 1, MPI_INTEGER, partner, 1, MPI_COMM_WORLD, r(2))
    call MPI_Wait(r(1), st)
    flag = .false.
    do while (.not. flag)
        call MPI_Test(r(2), flag, MPI_STATUS_IGNORE)
    end do
    call MPI_Irecv(rbuf, 1, MPI_INTEGER, partner, 2, MPI_COMM_WORLD, r(1))
    call MPI_Isend(sbuf, 1, MPI_INTEGER, partner, 2, MPI_COMM_WORLD, r(2))
    call MPI_Waitall(2, r, MPI_STATUSES_IGNORE)
    call MPI_Irecv(rbuf, 1, MPI_INTEGER, partner, 3, MPI_COMM_WORLD, r(1))
    call MPI_Isend(sbuf, 1, MPI_INTEGER, partner, 3, MPI_COMM_WORLD, r(2))
    flag = .false.
    do while (.not. flag)
        call MPI_Testall(2, r, flag, sts)
    end do
    call MPI_Irecv(rbuf, 1, MPI_INTEGER, partner, 4, MPI_COMM_WORLD, r(1))
    call MPI_Isend(sbuf, 1, MPI_INTEGER, partner, 4, MPI_COMM_WORLD, r(2))
    call MPI_Waitany(2, r, idx, st)
    call MPI_Waitany(2, r, idx, st)
    call MPI_Irecv(rbuf, 1, MPI_INTEGER, partner, 5, MPI_COMM_WORLD, r(1))
    call MPI_Isend(sbuf, 1, MPI_INTEGER, partner, 5, MPI_COMM_WORLD, r(2))
    i = 0
    do while (i < 2)
        call MPI_Testany(2, r, idx, flag, st)
        if (flag .and. idx /= MPI_UNDEFINED) i = i + 1
    end do
    call MPI_Irecv(rbuf, 1, MPI_INTEGER, partner, 6, MPI_COMM_WORLD, r(1))
    call MPI_Isend(sbuf, 1, MPI_INTEGER, partner, 6, MPI_COMM_WORLD, r(2))
    call MPI_Waitsome(2, r, outc, ind, sts)
    if (outc < 2) then
        i = outc
        do while (i < 2)
            call MPI_Testsome(2, r, outc, ind, MPI_STATUSES_IGNORE)
            if (outc /= MPI_UNDEFINED) i = i + outc
        end do
    else
        call MPI_Testsome(2, r, outc, ind, MPI_STATUSES_IGNORE)
    end if
    ! persistent: Start, Startall, Request_free
    call MPI_Recv_init(rbuf, 1, MPI_INTEGER, partner, 7, MPI_COMM_WORLD, r(1))
    call MPI_Send_init(sbuf, 1, MPI_INTEGER, partner, 7, MPI_COMM_WORLD, r(2))
    call MPI_Startall(2, r)
    call MPI_Waitall(2, r, sts)
    call MPI_Start(r(1))
    call MPI_Start(r(2))
    call MPI_Waitall(2, r, sts)
    call MPI_Request_free(r(1))
    call MPI_Request_free(r(2))
    ! probes
    call MPI_Isend(sbuf, 2, MPI_INTEGER, partner, 8, MPI_COMM_WORLD, r(1))
    call MPI_Probe(partner, 8, MPI_COMM_WORLD, st)
    call MPI_Iprobe(partner, 8, MPI_COMM_WORLD, flag, st)
    call MPI_Mprobe(partner, 8, MPI_COMM_WORLD, m, st)
    call MPI_Mrecv(rbuf, 2, MPI_INTEGER, m, st)
    call MPI_Isend(sbuf, 3, MPI_INTEGER, partner, 9, MPI_COMM_WORLD, r(2))
    call MPI_Probe(partner, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Improbe(partner, 9, MPI_COMM_WORLD, flag, m, st)
    call MPI_Imrecv(rbuf, 3, MPI_INTEGER, m, r1)
    call MPI_Wait(r1, MPI_STATUS_IGNORE)
    call MPI_Waitall(2, r, MPI_STATUSES_IGNORE)
    call MPI_Irecv(rbuf, 1, MPI_INTEGER, partner, 99, MPI_COMM_WORLD, r1)
    call MPI_Cancel(r1)
    call MPI_Wait(r1, st)
    ! collectives
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Ibarrier(MPI_COMM_WORLD, r1)
    call MPI_Wait(r1, MPI_STATUS_IGNORE)
    call MPI_Allreduce(sbuf, rbuf, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    ! communicators
    call MPI_Comm_dup(MPI_COMM_WORLD, c(1))
    call MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, c(2))
    call MPI_Comm_idup(MPI_COMM_WORLD, c(3), r1)
    call MPI_Wait(r1, MPI_STATUS_IGNORE)
    call MPI_Comm_split(MPI_COMM_WORLD, rank, 0, c(4))
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, c(5))
    call MPI_Comm_group(MPI_COMM_WORLD, g)
    call MPI_Comm_create(MPI_COMM_WORLD, g, c(6))
    call MPI_Comm_create_group(MPI_COMM_WORLD, g, 5, c(7))
    dims(1) = 2
    periods(1) = .false.
    call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., c(8))
    remain(1) = .true.
    call MPI_Cart_sub(c(8), remain, c(9))
    index2 = (/1, 2/)
    edges = (/1, 0/)
    call MPI_Graph_create(MPI_COMM_WORLD, 2, index2, edges, .false., c(10))
    src(1) = rank
    deg(1) = 1
    dst(1) = partner
    call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, .false., c(11))
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, dst, MPI_UNWEIGHTED, 1, dst, MPI_UNWEIGHTED, &
                                        MPI_INFO_NULL, .false., c(12))
    do i = 12, 1, -1
        call MPI_Comm_free(c(i))
    end do
    call MPI_Comm_split(MPI_COMM_WORLD, rank, 0, c(1))
    call MPI_Intercomm_create(c(1), 0, MPI_COMM_WORLD, partner, 3, c(2))
    call MPI_Intercomm_merge(c(2), rank == 1, c(3))
    call MPI_Comm_free(c(3))
    call MPI_Comm_free(c(2))
    call MPI_Comm_free(c(1))
    call MPI_Group_free(g)
    if (rank == 0) print '(a,i0)', 'allcalls-f08: done ', rbuf(1)
    call MPI_Finalize()
end program allcalls_f08
