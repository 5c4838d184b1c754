/* scorep-like.c: writes, with the OTF2 writer API alone, a small MPI trace laid out as Score-P
 * writes one, whose flows and conflicts are known by hand; test-otf2-import.sh analyses it.
 *
 * Usage: scorep-like [--cc] OUTDIR   (writes OUTDIR/traces.otf2)
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
 * Labels: A none [1, 2) then outgoing@n0 [2, 3); B outgoing@n0 [2, 3) then none [3, 4).
 *
 * The calls are those of a program app.c where main (line 44) calls MPI_Init and MPI_Finalize,
 * main (line 40) calls exchange, exchange (line 12) makes the messages' calls (MPI_Send, MPI_Recv,
 * MPI_Isend, MPI_Irecv, MPI_Wait) except rank 1's MPI_Wait, which main makes at line 47. Without
 * --cc, as Score-P's compiler instrumentation writes them: the functions main and exchange are
 * entered and left around the MPI calls they make (main over the whole run). With --cc, as Score-P
 * writes them with unwinding on: every MPI region is entered and left through
 * CallingContextEnter/Leave, whose calling contexts say where each call was made from. */
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define US(s) ((uint64_t)((s) * 1e6 + 0.5))
#define SKEW US(0.5)

enum { STR_EMPTY, STR_MPI, STR_MACHINE, STR_NODE, STR_N0, STR_N1, STR_N2, STR_INIT, STR_FINALIZE, STR_SEND,
       STR_RECV, STR_ISEND, STR_IRECV, STR_WAIT, STR_WORLD, STR_RANK0, STR_THREAD = STR_RANK0 + 4, STR_MAIN,
       STR_EXCHANGE, STR_APP, STR_N };
enum { REG_INIT, REG_FINALIZE, REG_SEND, REG_RECV, REG_ISEND, REG_IRECV, REG_WAIT, REG_MAIN, REG_EXCHANGE, REG_N };

/* --cc: the source locations and the frames' calling contexts (region, line, parent). */
enum { SCL_40, SCL_12, SCL_44, SCL_47, SCL_N };
static const uint32_t scl_line[SCL_N] = {40, 12, 44, 47};
enum { CC_MAIN40, CC_EXCHANGE12, CC_MAIN44, CC_MAIN47, CC_FRAMES };
static const uint32_t frame_def[CC_FRAMES][3] = {{REG_MAIN, SCL_40, OTF2_UNDEFINED_CALLING_CONTEXT},
                                                  {REG_EXCHANGE, SCL_12, CC_MAIN40},
                                                  {REG_MAIN, SCL_44, OTF2_UNDEFINED_CALLING_CONTEXT},
                                                  {REG_MAIN, SCL_47, OTF2_UNDEFINED_CALLING_CONTEXT}};
/* The calling context of each MPI call: its region under the frame it was called from (its ids
 * follow the frames'). */
enum { CC_INIT = CC_FRAMES, CC_FINALIZE, CC_SEND, CC_ISEND, CC_WAIT_MAIN, CC_RECV, CC_IRECV, CC_WAIT, CC_N };
static const uint32_t call_def[CC_N - CC_FRAMES][2] = {{REG_INIT, CC_MAIN44},  {REG_FINALIZE, CC_MAIN44},
                                                       {REG_SEND, CC_EXCHANGE12}, {REG_ISEND, CC_EXCHANGE12},
                                                       {REG_WAIT, CC_MAIN47}, {REG_RECV, CC_EXCHANGE12},
                                                       {REG_IRECV, CC_EXCHANGE12}, {REG_WAIT, CC_EXCHANGE12}};
static int with_cc;
static uint32_t prev_cc; /* the location's calling context after its last calling-context event */
static uint32_t open_fn[4]; /* without --cc: the functions entered, outermost first */
static uint32_t nopen;

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

static uint32_t parent_of(uint32_t cc)
{
    return cc < CC_FRAMES ? frame_def[cc][2] : call_def[cc - CC_FRAMES][1];
}

/* Enters region r, made from calling context cc: with --cc as Score-P with unwinding, the unwind
 * distance counting the nodes of cc not on the previous context plus the one that made progress. */
/* Without --cc: leaves the functions entered that do not lead to the call of context cc and
 * enters those that do (cc UNDEFINED leaves them all). */
static void nest(OTF2_EvtWriter *w, uint64_t t, uint32_t cc)
{
    uint32_t chain[4], n = 0;
    for (uint32_t f = cc == OTF2_UNDEFINED_CALLING_CONTEXT ? cc : parent_of(cc); f != OTF2_UNDEFINED_CALLING_CONTEXT;
         f = parent_of(f))
        chain[n++] = frame_def[f][0]; /* innermost first */
    uint32_t keep = 0;
    while (keep < nopen && keep < n && open_fn[keep] == chain[n - 1 - keep])
        keep++;
    while (nopen > keep)
        check(OTF2_EvtWriter_Leave(w, NULL, t, open_fn[--nopen]), "Leave");
    for (; nopen < n; nopen++) {
        open_fn[nopen] = chain[n - 1 - nopen];
        check(OTF2_EvtWriter_Enter(w, NULL, t, open_fn[nopen]), "Enter");
    }
}

static void enter(OTF2_EvtWriter *w, uint64_t t, OTF2_RegionRef r, uint32_t cc)
{
    if (!with_cc) {
        nest(w, t, cc);
        check(OTF2_EvtWriter_Enter(w, NULL, t, r), "Enter");
        return;
    }
    uint32_t d = 1;
    for (uint32_t n = parent_of(cc); ; n = parent_of(n), d++) {
        int shared = n == OTF2_UNDEFINED_CALLING_CONTEXT;
        for (uint32_t p = prev_cc; !shared && p != OTF2_UNDEFINED_CALLING_CONTEXT; p = parent_of(p))
            shared = p == n;
        if (shared)
            break;
    }
    check(OTF2_EvtWriter_CallingContextEnter(w, NULL, t, cc, d + 1), "CallingContextEnter");
    prev_cc = cc;
}

static void leave(OTF2_EvtWriter *w, uint64_t t, OTF2_RegionRef r, uint32_t cc)
{
    if (!with_cc) {
        check(OTF2_EvtWriter_Leave(w, NULL, t, r), "Leave");
        return;
    }
    check(OTF2_EvtWriter_CallingContextLeave(w, NULL, t, cc), "CallingContextLeave");
    prev_cc = parent_of(cc);
}

static void call(OTF2_EvtWriter *w, uint64_t t0, uint64_t t1, OTF2_RegionRef r, uint32_t cc)
{
    enter(w, t0, r, cc);
    leave(w, t1, r, cc);
}

int main(int argc, char **argv)
{
    with_cc = argc == 3 && strcmp(argv[1], "--cc") == 0;
    if (argc != 2 + with_cc) {
        fprintf(stderr, "usage: scorep-like [--cc] OUTDIR\n");
        return 2;
    }
    argv += with_cc;
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
        prev_cc = OTF2_UNDEFINED_CALLING_CONTEXT;
        nopen = 0;
        call(w, US(0.0) + skew, US(0.1) + skew, REG_INIT, CC_INIT);
        switch (r) {
        case 0: /* Enter, MpiSend at the enter time, Leave: Score-P's order */
            enter(w, US(1.0), REG_SEND, CC_SEND);
            check(OTF2_EvtWriter_MpiSend(w, NULL, US(1.0), 2, 0, 7, 1000), "MpiSend");
            leave(w, US(1.1), REG_SEND, CC_SEND);
            break;
        case 1:
            enter(w, US(2.0), REG_ISEND, CC_ISEND);
            check(OTF2_EvtWriter_MpiIsend(w, NULL, US(2.0), 3, 0, 8, 2000, 1), "MpiIsend");
            leave(w, US(2.1), REG_ISEND, CC_ISEND);
            enter(w, US(2.1), REG_WAIT, CC_WAIT_MAIN);
            check(OTF2_EvtWriter_MpiIsendComplete(w, NULL, US(4.2), 1), "MpiIsendComplete");
            leave(w, US(4.2), REG_WAIT, CC_WAIT_MAIN);
            break;
        case 2: /* MpiRecv at the exit, with the status' source, tag and size */
            enter(w, US(0.5), REG_RECV, CC_RECV);
            check(OTF2_EvtWriter_MpiRecv(w, NULL, US(3.0), 0, 0, 7, 1000), "MpiRecv");
            leave(w, US(3.0), REG_RECV, CC_RECV);
            break;
        case 3:
            enter(w, US(0.5) + skew, REG_IRECV, CC_IRECV);
            check(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, US(0.6) + skew, 5), "MpiIrecvRequest");
            leave(w, US(0.6) + skew, REG_IRECV, CC_IRECV);
            enter(w, US(3.5) + skew, REG_WAIT, CC_WAIT);
            check(OTF2_EvtWriter_MpiIrecv(w, NULL, US(4.0) + skew, 1, 0, 8, 2000, 5), "MpiIrecv");
            leave(w, US(4.0) + skew, REG_WAIT, CC_WAIT);
            break;
        }
        call(w, US(5.0) + skew, US(5.1) + skew, REG_FINALIZE, CC_FINALIZE);
        if (!with_cc)
            nest(w, US(5.1) + skew, OTF2_UNDEFINED_CALLING_CONTEXT);
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
                                               "MPI Rank 2", "MPI Rank 3", "Master thread", "main", "exchange",
                                               "/home/user/app/app.c"};
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
    /* The program's functions: entered by compiler instrumentation, or named by the calling
     * contexts of Score-P's unwinding (paradigm sampling). */
    for (uint32_t i = REG_MAIN; i < REG_N; i++)
        check(OTF2_GlobalDefWriter_WriteRegion(g, i, STR_MAIN + i - REG_MAIN, STR_MAIN + i - REG_MAIN, STR_EMPTY,
                                               OTF2_REGION_ROLE_FUNCTION,
                                               with_cc ? OTF2_PARADIGM_SAMPLING : OTF2_PARADIGM_COMPILER,
                                               OTF2_REGION_FLAG_NONE,
                                               STR_APP, 0, 0), "Region");
    for (uint32_t i = 0; i < SCL_N; i++)
        check(OTF2_GlobalDefWriter_WriteSourceCodeLocation(g, i, STR_APP, scl_line[i]), "SourceCodeLocation");
    for (uint32_t i = 0; i < CC_FRAMES; i++)
        check(OTF2_GlobalDefWriter_WriteCallingContext(g, i, frame_def[i][0], frame_def[i][1], frame_def[i][2]), "CC");
    for (uint32_t i = CC_FRAMES; i < CC_N; i++)
        check(OTF2_GlobalDefWriter_WriteCallingContext(g, i, call_def[i - CC_FRAMES][0],
                                                       OTF2_UNDEFINED_SOURCE_CODE_LOCATION, call_def[i - CC_FRAMES][1]),
              "CC");
    uint64_t locs[4] = {0, 1, 2, 3}, ranks[4] = {0, 1, 2, 3};
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, STR_EMPTY, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 4, locs), "Group");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 1, STR_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 4, ranks), "Group");
    check(OTF2_GlobalDefWriter_WriteComm(g, 0, STR_WORLD, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "Comm");
    check(OTF2_Archive_Close(ar), "Close");
    return 0;
}
