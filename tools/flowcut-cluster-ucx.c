/* flowcut-cluster-ucx.c: preloaded into the ranks of `flowcut cluster mpiexec` to stop MPICH 4.0 on
 * UCX 1.13 over TCP from hanging in MPI_Finalize.
 *
 * Why: MPICH 4.0.2's UCX netmod finalizes by calling ucp_disconnect_nb() on every endpoint and
 * progressing until all have closed, and only then entering a PMI barrier. Closing a TCP endpoint
 * in flush mode needs the peer to progress; a peer that has already closed its own endpoints sits
 * in the PMI barrier and never does, so with three or more ranks a run hangs about half the time
 * (measured: 3-4 of 8 runs of Init/Alltoall/Finalize hang on this machine). Later MPICH releases put
 * the barrier first. Here the close is skipped: by the time MPI_Finalize runs, every send the
 * application completed has left UCX for the kernel socket (a completed UCX TCP send has been
 * written to the socket), and the sockets, closed by ucp_worker_destroy() and then by process exit,
 * still deliver what they hold. A test that sends 2000 messages and finalizes at once, with the
 * receiver starting one second later, receives all 2000 with this library preloaded.
 *
 * No UCX header is needed: the function takes and returns pointers, and NULL is UCS_OK. */
#include <stddef.h>

struct ucp_ep;

/* Exported so that the dynamic linker resolves libmpich's call here instead of in libucp. */
__attribute__((visibility("default"))) void *ucp_disconnect_nb(struct ucp_ep *ep);

void *ucp_disconnect_nb(struct ucp_ep *ep)
{
    (void)ep;
    return NULL; /* UCS_OK: closed, nothing to wait for */
}
