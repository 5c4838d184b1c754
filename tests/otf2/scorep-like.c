/* scorep-like.c: writes, with the OTF2 writer API alone, a small MPI trace laid out as Score-P
 * writes one, whose flows and conflicts are known by hand; test-otf2-import.sh analyses it.
 *
 * Usage: scorep-like OUTDIR   (writes OUTDIR/traces.otf2)
 *
 * Four ranks on three nodes: n0 holds ranks 0 and 1, n1 rank 2, n2 rank 3. Timer: 1e6 ticks per
 * second (microseconds), so the reader must convert. Times below are seconds on rank 0's clock:
 *   rank 0: MPI_Init [0, 0.1); MPI_Send of 1000 bytes, tag 7, to rank 2 over [1.0, 1.1)
 *   rank 1: MPI_Init [0, 0.1); MPI_Isend of 2000 bytes, tag 8, to rank 3 at [2.0, 2.1) (request 1);
 *           MPI_Wait [2.1, 4.2) completes it (MpiIsendComplete)
 *   rank 2: MPI_Init [0, 0.1); MPI_Recv from rank 0, tag 7, over [0.5, 3.0)
 *   rank 3: MPI_Init [0, 0.1); MPI_Irecv at [0.5, 0.6) (request 5, MpiIrecvRequest);
 *           MPI_Wait [3.5, 4.0) completes it (MpiIrecv: source 1, tag 8, 2000 bytes).
 *           Rank 3's clock runs 0.5 s ahead: its events are written at local time t + 0.5 s with a
 *           ClockOffset of -0.5 s, which OTF2's reader applies.
 * Every rank ends with MPI_Finalize [5.0, 5.1).
 * Flows (eager: both far below 256 KiB, so a flow starts with its send): A = 0->2 over [1.0, 3.0),
 * B = 1->3 over [2.0, 4.0). Both leave n0 during [2.0, 3.0): an outgoing conflict of k = 2 at n0.
 * Labels: A none [1, 2) then outgoing@n0 [2, 3); B outgoing@n0 [2, 3) then none [3, 4). */
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>

#define US(s) ((uint64_t)((s) * 1e6 + 0.5))
#define SKEW US(0.5)

enum { STR_EMPTY, STR_MPI, STR_MACHINE, STR_NODE, STR_N0, STR_N1, STR_N2, STR_INIT, STR_FINALIZE, STR_SEND,
       STR_RECV, STR_ISEND, STR_IRECV, STR_WAIT, STR_WORLD, STR_RANK0, STR_THREAD = STR_RANK0 + 4, STR_N };
enum { REG_INIT, REG_FINALIZE, REG_SEND, REG_RECV, REG_ISEND, REG_IRECV, REG_WAIT };

static OTF2_FlushType pre_flush(void *d, OTF2_FileType t, OTF2_LocationRef l, void *cb, bool final)
{
    (void)d, (void)t, (void)l, (void)cb, (void)final;
    return OTF2_FLUSH;
}
static const OTF2_FlushCallbacks flush = {.otf2_pre_flush = pre_flush, .otf2_post_flush = NULL};

static void check(OTF2_ErrorCode e, const char *what)
{
    if (e != OTF2_SUCCESS) {
        fprintf(stderr, "scorep-like: %s: %s\n", what, OTF2_Error_GetDescription(e));
        exit(1);
    }
}

static void call(OTF2_EvtWriter *w, uint64_t t0, uint64_t t1, OTF2_RegionRef r)
{
    check(OTF2_EvtWriter_Enter(w, NULL, t0, r), "Enter");
    check(OTF2_EvtWriter_Leave(w, NULL, t1, r), "Leave");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: scorep-like OUTDIR\n");
        return 2;
    }
    OTF2_Archive *ar = OTF2_Archive_Open(argv[1], "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                         OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (ar == NULL)
        return 1;
    check(OTF2_Archive_SetFlushCallbacks(ar, &flush, NULL), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(ar), "collective callbacks");
    check(OTF2_Archive_OpenEvtFiles(ar), "OpenEvtFiles");
    uint64_t nev[4];
    for (uint32_t r = 0; r < 4; r++) {
        OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, r);
        uint64_t skew = r == 3 ? SKEW : 0;
        call(w, US(0.0) + skew, US(0.1) + skew, REG_INIT);
        switch (r) {
        case 0: /* Enter, MpiSend at the enter time, Leave: Score-P's order */
            check(OTF2_EvtWriter_Enter(w, NULL, US(1.0), REG_SEND), "Enter");
            check(OTF2_EvtWriter_MpiSend(w, NULL, US(1.0), 2, 0, 7, 1000), "MpiSend");
            check(OTF2_EvtWriter_Leave(w, NULL, US(1.1), REG_SEND), "Leave");
            break;
        case 1:
            check(OTF2_EvtWriter_Enter(w, NULL, US(2.0), REG_ISEND), "Enter");
            check(OTF2_EvtWriter_MpiIsend(w, NULL, US(2.0), 3, 0, 8, 2000, 1), "MpiIsend");
            check(OTF2_EvtWriter_Leave(w, NULL, US(2.1), REG_ISEND), "Leave");
            check(OTF2_EvtWriter_Enter(w, NULL, US(2.1), REG_WAIT), "Enter");
            check(OTF2_EvtWriter_MpiIsendComplete(w, NULL, US(4.2), 1), "MpiIsendComplete");
            check(OTF2_EvtWriter_Leave(w, NULL, US(4.2), REG_WAIT), "Leave");
            break;
        case 2: /* MpiRecv at the exit, with the status' source, tag and size */
            check(OTF2_EvtWriter_Enter(w, NULL, US(0.5), REG_RECV), "Enter");
            check(OTF2_EvtWriter_MpiRecv(w, NULL, US(3.0), 0, 0, 7, 1000), "MpiRecv");
            check(OTF2_EvtWriter_Leave(w, NULL, US(3.0), REG_RECV), "Leave");
            break;
        case 3:
            check(OTF2_EvtWriter_Enter(w, NULL, US(0.5) + skew, REG_IRECV), "Enter");
            check(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, US(0.6) + skew, 5), "MpiIrecvRequest");
            check(OTF2_EvtWriter_Leave(w, NULL, US(0.6) + skew, REG_IRECV), "Leave");
            check(OTF2_EvtWriter_Enter(w, NULL, US(3.5) + skew, REG_WAIT), "Enter");
            check(OTF2_EvtWriter_MpiIrecv(w, NULL, US(4.0) + skew, 1, 0, 8, 2000, 5), "MpiIrecv");
            check(OTF2_EvtWriter_Leave(w, NULL, US(4.0) + skew, REG_WAIT), "Leave");
            break;
        }
        call(w, US(5.0) + skew, US(5.1) + skew, REG_FINALIZE);
        check(OTF2_EvtWriter_GetNumberOfEvents(w, &nev[r]), "GetNumberOfEvents");
        check(OTF2_Archive_CloseEvtWriter(ar, w), "CloseEvtWriter");
    }
    check(OTF2_Archive_CloseEvtFiles(ar), "CloseEvtFiles");
    check(OTF2_Archive_OpenDefFiles(ar), "OpenDefFiles");
    for (uint32_t r = 0; r < 4; r++) {
        OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(ar, r);
        if (r == 3) {
            check(OTF2_DefWriter_WriteClockOffset(d, US(0.0) + SKEW, -(int64_t)SKEW, 0), "ClockOffset");
            check(OTF2_DefWriter_WriteClockOffset(d, US(5.1) + SKEW, -(int64_t)SKEW, 0), "ClockOffset");
        }
        check(OTF2_Archive_CloseDefWriter(ar, d), "CloseDefWriter");
    }
    check(OTF2_Archive_CloseDefFiles(ar), "CloseDefFiles");
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(ar);
    static const char *const strings[STR_N] = {"", "MPI", "machine", "node", "n0", "n1", "n2", "MPI_Init",
                                               "MPI_Finalize", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv",
                                               "MPI_Wait", "MPI_COMM_WORLD", "MPI Rank 0", "MPI Rank 1",
                                               "MPI Rank 2", "MPI Rank 3", "Master thread"};
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000, 0, US(5.1) + 1, OTF2_UNDEFINED_TIMESTAMP), "Clock");
    for (uint32_t i = 0; i < STR_N; i++)
        check(OTF2_GlobalDefWriter_WriteString(g, i, strings[i]), "String");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, STR_MACHINE, STR_MACHINE, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "STN");
    for (uint32_t i = 0; i < 3; i++)
        check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, i + 1, STR_N0 + i, STR_NODE, 0), "STN");
    static const uint32_t node_of_rank[4] = {1, 1, 2, 3};
    for (uint32_t r = 0; r < 4; r++)
        check(OTF2_GlobalDefWriter_WriteLocationGroup(g, r, STR_RANK0 + r, OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                      node_of_rank[r], OTF2_UNDEFINED_LOCATION_GROUP), "LG");
    for (uint32_t r = 0; r < 4; r++)
        check(OTF2_GlobalDefWriter_WriteLocation(g, r, STR_THREAD, OTF2_LOCATION_TYPE_CPU_THREAD, nev[r], r), "Loc");
    static const uint32_t names[] = {STR_INIT, STR_FINALIZE, STR_SEND, STR_RECV, STR_ISEND, STR_IRECV, STR_WAIT};
    for (uint32_t i = 0; i < 7; i++)
        check(OTF2_GlobalDefWriter_WriteRegion(g, i, names[i], names[i], STR_EMPTY,
                                               i >= REG_SEND ? OTF2_REGION_ROLE_POINT2POINT : OTF2_REGION_ROLE_FUNCTION,
                                               OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, STR_MPI, 0, 0), "Region");
    uint64_t locs[4] = {0, 1, 2, 3}, ranks[4] = {0, 1, 2, 3};
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, STR_EMPTY, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 4, locs), "Group");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 1, STR_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 4, ranks), "Group");
    check(OTF2_GlobalDefWriter_WriteComm(g, 0, STR_WORLD, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "Comm");
    check(OTF2_Archive_Close(ar), "Close");
    return 0;
}
