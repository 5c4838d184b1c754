/* flowcut/format.h: the on-disk layout of a flowcut trace, shared by the tracer and every reader.
 *
 * A trace is a directory holding one file per MPI rank, `rank-NNNNNN.fct`. Every multi-byte integer
 * on disk is little-endian and is written and read through the put/get helpers below, never by
 * copying a struct, so the layout does not depend on the compiler or the host.
 *
 *   +--------------------------------------------------------------+
 *   | file header, FC_FILE_HEADER_SIZE (64) bytes                  |
 *   |   magic "FLOWCUT\x1a" | byte-order mark | major | minor | ... |
 *   +--------------------------------------------------------------+
 *   | block: header (FC_BLOCK_HEADER_SIZE = 24 bytes) + payload     |
 *   |   kind | flags | stored_len | raw_len | crc32 | seq           |
 *   +--------------------------------------------------------------+
 *   | block ...  (RANK first; then MODULES, SITES, COMMS and        |
 *   |             CLOCK definitions, each written before the first  |
 *   |             EVENTS block that refers to them)                 |
 *   +--------------------------------------------------------------+
 *   | block END (the footer: totals, partial flag, reason)          |
 *   +--------------------------------------------------------------+
 *
 * Each block is independent: an EVENTS payload is its own zlib stream, so a file cut short is
 * readable up to its last complete block. A reader skips any block kind it does not know by its
 * stored length in a file of a newer minor version; in a file of its own version or an older one,
 * an unknown kind is a damaged header (the crc covers the payload only). A file with no END block
 * was not closed cleanly and is partial. Nothing follows END.
 *
 * Versioning: FC_FORMAT_MAJOR changes only when an old reader would misread a new file; readers
 * refuse a newer major and read every older one. History: 1.0 first; 2.0 EVENTS chunks in
 * columns (a 1.x reader cannot read them; rows remain valid and 2.x readers read 1.x files); 2.1
 * COMPLETE records that carry their request's own completion time (FC_EVF_OWN_TIME), which 2.0
 * readers read as the time of the completion, and the RANK field COLL_ENV; 2.2 the RANK field
 * SLOT; 2.3 the sub-record kinds POLLS (folded runs of polls that found nothing) and TRACER_WAIT
 * (the tracer's own waits); 2.4 COUNTS sub-records (the bytes per peer of the v and w
 * collectives); 2.5 the RESCUE file beside the rank file, which older readers never open; 2.6 the
 * neighbourhood collectives' event kinds and the topologies after a COMMS block's entries; older
 * readers skip the new fields and kinds. FC_FORMAT_MINOR grows with additive changes (new block
 * kinds, new event kinds, new fields appended to a record, new flags, new files beside the rank
 * file), which old readers skip or read compatibly. Block kinds, event kinds, field
 * keys and flags are append-only: a number, once given, keeps its meaning forever.
 *
 * Payload encodings (all described in detail at each kind below):
 *   - "uvarint": unsigned LEB128 (7 bits a byte, low first, high bit = more follows), at most 10 bytes.
 *   - "svarint": zigzag-mapped signed integer ((v << 1) ^ (v >> 63)) stored as uvarint.
 *   - "string":  uvarint length followed by that many bytes, no terminating NUL.
 */
#ifndef FLOWCUT_FORMAT_H
#define FLOWCUT_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- file header ---------------------------------------------------------------------------- */

#define FC_MAGIC "FLOWCUT\x1a" /* 8 bytes; the \x1a stops `type` on the terminals that honour it */
#define FC_MAGIC_LEN 8
#define FC_BOM 0x0A0B0C0Du /* written little-endian: 0D 0C 0B 0A; a reader seeing 0A 0B 0C 0D knows */
#define FC_FORMAT_MAJOR 2
#define FC_FORMAT_MINOR 6
#define FC_FILE_HEADER_SIZE 64
#define FC_TRACE_FILE_FMT "rank-%06d.fct" /* name of a rank's file inside the trace directory */

/* Offsets of the file header's fields. Bytes not named here are reserved and written as zero.
 *   0  magic[8]
 *   8  u32 bom
 *  12  u16 major, 14 u16 minor
 *  16  u32 header_size (64 in 1.x; a reader seeks past header_size, so it may grow)
 *  20  u32 flags (none defined yet)
 *  24  u32 rank (world rank), 28 u32 size (world size)
 *  32  u64 start_ns: wall clock (CLOCK_REALTIME, ns since the epoch) when the rank started tracing
 *  40  u32 pid, 44 u32 reserved
 *  48  16 reserved bytes */
enum {
    FC_FH_MAGIC = 0,
    FC_FH_BOM = 8,
    FC_FH_MAJOR = 12,
    FC_FH_MINOR = 14,
    FC_FH_HEADER_SIZE = 16,
    FC_FH_FLAGS = 20,
    FC_FH_RANK = 24,
    FC_FH_SIZE = 28,
    FC_FH_START_NS = 32,
    FC_FH_PID = 40,
};

/* ---- blocks ---------------------------------------------------------------------------------- */

#define FC_BLOCK_HEADER_SIZE 24
/* Offsets inside a block header.
 *   0 u32 kind        FC_BLK_*
 *   4 u32 flags       FC_BLKF_*
 *   8 u32 stored_len  payload bytes that follow the header on disk
 *  12 u32 raw_len     payload bytes after decompression (== stored_len when not compressed)
 *  16 u32 crc32       zlib crc32 of the stored payload
 *  20 u32 seq         0, 1, 2 ... in file order; a gap or repeat means a damaged file */
enum {
    FC_BH_KIND = 0,
    FC_BH_FLAGS = 4,
    FC_BH_STORED_LEN = 8,
    FC_BH_RAW_LEN = 12,
    FC_BH_CRC32 = 16,
    FC_BH_SEQ = 20,
};
/* A block payload never exceeds this, compressed or not; a larger length means corruption. */
#define FC_BLOCK_MAX_PAYLOAD (64u << 20)

#define FC_BLKF_ZLIB 0x1u /* payload is a zlib (RFC 1950) stream of raw_len bytes */

/* Block kinds: X(name, number, description). Append only. */
#define FC_BLOCK_KINDS(X)                                                                          \
    X(RANK, 1, "rank description: fields keyed by FC_RK_*")                                       \
    X(EVENTS, 2, "a chunk of events of one thread")                                               \
    X(MODULES, 3, "loaded modules (executable and shared objects) for call-site resolution")      \
    X(SITES, 4, "call-site definitions")                                                          \
    X(COMMS, 5, "communicator definitions")                                                       \
    X(CLOCK, 6, "clock-synchronisation measurements against rank 0")                              \
    X(END, 7, "footer: totals and how the trace ended")                                           \
    X(WARN, 8, "a warning the tracer raised, as text")

enum fc_block_kind {
#define FC__X(name, num, desc) FC_BLK_##name = num,
    FC_BLOCK_KINDS(FC__X)
#undef FC__X
};

/* ---- RANK block ------------------------------------------------------------------------------
 * Payload: a sequence of fields, each `u16 key, u32 len, len bytes`. Unknown keys are skipped.
 * Integers are little-endian of the width given; text is UTF-8 without NUL; lists are documented. */
#define FC_RANK_FIELDS(X)                                                                          \
    X(RANK, 1, "u32 world rank")                                                                  \
    X(SIZE, 2, "u32 world size")                                                                  \
    X(HOST, 3, "text host name")                                                                  \
    X(NODE, 4, "text node name: FLOWCUT_NODE if set, else the host name")                         \
    X(CORE, 5, "i32 CPU core the rank ran on at init, -1 when unknown")                           \
    X(NUMA, 6, "i32 NUMA node of that core, -1 when unknown")                                     \
    X(MPI_VERSION, 7, "text MPI library version string")                                          \
    X(PROGRAM, 8, "text absolute path of the executable")                                         \
    X(ARGS, 9, "arguments argv[0..argc-1], each followed by one NUL byte")                        \
    X(START_NS, 10, "u64 wall clock (ns since the epoch) at the start of tracing")                \
    X(PID, 11, "u32 process id")                                                                  \
    X(THREAD_LEVEL, 12, "i32 MPI thread level provided, -1 when unknown")                         \
    X(CALLSITE_DEPTH, 13, "u32 call-site depth recorded (0: none)")                               \
    X(CLOCK_SOURCE, 14, "text name of the event clock, e.g. tsc or clock_gettime")                \
    X(AFFINITY, 15, "text list of CPUs the rank may run on, as in /proc/self/status")              \
    X(INIT_MODE, 16, "u32 how tracing started: FC_INIT_*")                                      \
    X(COLL_ENV, 17, "the MPIR_CVAR_* variables of the environment that choose MPICH's collective " \
                    "algorithms or the ranks it takes as sharing a node: NAME=VALUE, each followed by a NUL") \
    X(SLOT, 18, "u32 the slot the launcher started the rank in (its rank in the real MPI_COMM_WORLD) " \
                "when the tracer renumbered the ranks (FLOWCUT_RANK_ORDER); absent otherwise")

enum fc_rank_field {
#define FC__X(name, num, desc) FC_RK_##name = num,
    FC_RANK_FIELDS(FC__X)
#undef FC__X
};

enum fc_init_mode {
    FC_INIT_MPI_INIT = 1, /* through MPI_Init or MPI_Init_thread (C or Fortran) */
    FC_INIT_LAZY = 2,     /* at the first traced call, MPI having been initialised elsewhere */
};

/* ---- MODULES block ---------------------------------------------------------------------------
 * Payload: uvarint count, then per module:
 *   uvarint module_id (per rank, from 0), uvarint base (load address: subtract it from an address
 *   to get the ELF virtual address inside the file), uvarint size (bytes of the mapped range),
 *   string path, string build_id (hex, may be empty).
 * ---- SITES block ------------------------------------------------------------------------------
 * Payload: uvarint count, then per call site:
 *   uvarint site_id (per rank, from 1; 0 means "no call site"), uvarint depth (frames, 1..),
 *   then depth times: uvarint module_id, uvarint offset (ELF virtual address inside that module of
 *   the return address minus one, i.e. inside the call instruction). Frame 0 is the innermost
 *   application frame (the code that called MPI).
 * ---- COMMS block ------------------------------------------------------------------------------
 * Payload: uvarint count, then per communicator:
 *   uvarint comm_id (per rank: 0 is MPI_COMM_WORLD, 1 is MPI_COMM_SELF, others from 2 in the order
 *   this rank first saw them), uvarint flags (FC_COMMF_*), uvarint local_size, local_size uvarints
 *   (world rank of each member, in comm rank order), uvarint remote_size (0 for intra-communicators),
 *   remote_size uvarints (world ranks of the remote group), svarint ordinal.
 *   The ordinal numbers, on this rank, the communicators with the same local member list in the
 *   order they were created, so that readers can tell the same communicator on different ranks
 *   apart from another one with the same members: (member list, ordinal) names it globally.
 *   A comm_id is never reused within a file, even when MPI reuses the handle after MPI_Comm_free.
 *   MPI_COMM_WORLD need not be defined, and the tracer does not define it: a file without comm_id
 *   0 has the world of its header's size, members 0 .. size-1 in order, ordinal 0, which readers
 *   supply. Every rank file would otherwise hold the whole world's list, a trace the square of
 *   its ranks (512 MiB of lists for 16384 ranks).
 *   (2.6) After the count entries, the payload may go on with the virtual topologies of the
 *   communicators it defined: uvarint count, then per topology uvarint comm_id (defined in this
 *   block), uvarint kind (FC_TOPO_*), uvarint indegree, indegree svarints (the sources), uvarint
 *   outdegree, outdegree svarints (the destinations): this rank's neighbours in the order the
 *   neighbourhood collectives use them (MPI_Dist_graph_neighbors; MPI_Graph_neighbors for both
 *   lists; for a cartesian topology, per dimension the source then the destination of
 *   MPI_Cart_shift by 1, for both lists), each the neighbour's world rank or FC_PEER_NULL
 *   (MPI_PROC_NULL). A communicator without a topology has none; older readers stop after the
 *   count entries and never see them. */
#define FC_COMMF_INTER 0x1u /* inter-communicator */
#define FC_COMMF_LAZY 0x2u  /* first seen in use rather than at its creation: ordinal may be unknown (-1) */
enum fc_topo_kind { FC_TOPO_CART = 1, FC_TOPO_GRAPH = 2, FC_TOPO_DIST_GRAPH = 3 };

/* ---- CLOCK block ------------------------------------------------------------------------------
 * Payload: uvarint count, then per measurement:
 *   uvarint phase (FC_CLOCK_INIT or FC_CLOCK_FINALIZE), uvarint local_ns (this rank's event clock
 *   when measured), svarint offset_ns (add to a local time to get rank 0's clock), uvarint
 *   uncertainty_ns (half the best round trip), uvarint samples, uvarint min_rtt_ns.
 *   Rank 0 records offset 0. Readers interpolate linearly between the INIT and FINALIZE
 *   measurements and use the INIT one alone when FINALIZE is missing. */
enum fc_clock_phase { FC_CLOCK_INIT = 0, FC_CLOCK_FINALIZE = 1 };

/* ---- END block -------------------------------------------------------------------------------
 * Payload: uvarint events (records in all EVENTS blocks before it: writers count a chunk once its
 * block is written, and readers refuse a file whose blocks hold fewer, or more unless the trace is
 * partial), uvarint flags (FC_ENDF_*), uvarint
 * reason (FC_END_*), uvarint end_ns (event clock at the end), uvarint dropped (events not recorded),
 * uvarint warnings (WARN blocks written). */
#define FC_ENDF_PARTIAL 0x1u /* the trace stops early or misses events */
#define FC_END_REASONS(X)                                                                          \
    X(FINALIZE, 0, "MPI_Finalize")                                                                \
    X(EXIT, 1, "process exit without MPI_Finalize")                                               \
    X(SIGNAL, 2, "fatal signal")                                                                  \
    X(ABORT, 3, "MPI_Abort")                                                                      \
    X(ERROR, 4, "tracer error (see warnings)")

enum fc_end_reason {
#define FC__X(name, num, desc) FC_END_##name = num,
    FC_END_REASONS(FC__X)
#undef FC__X
};

/* ---- WARN block: payload is UTF-8 text, one line, no NUL. ---- */

/* ---- RESCUE file (format 2.5) -----------------------------------------------------------------
 * Beside each rank file, `rank-NNNNNN.fcr` holds the rank's event buffer itself: the tracer maps it
 * shared and records into it, so that the kernel keeps every recorded event when the process dies,
 * even by SIGKILL. The tracer removes it once the rank file's END block is written; a reader uses
 * it only for a rank file without END, and then only the chunks not already in the rank file.
 * Old readers never open it. Records are in the tracer's memory layout, which on the
 * little-endian hosts that write rescue files is the little-endian layout below.
 *   header, FC_RESCUE_HEADER_SIZE (4096) bytes:
 *     0 magic "FCRESCUE" | 8 u32 bom | 12 u16 major, 14 u16 minor (of the rank file) |
 *    16 u32 rank | 20 u32 record_size (64) | 24 u32 chunk_records | 28 u32 nchunks |
 *    32 u64 tick0, 40 u64 ns0, 48 u64 mult: the event clock's ticks map to ns as
 *       ns = ns0 + (tick - tick0) * mult / 2^32 (rounded to nearest) |
 *    56 u64 records_off: where chunk 0's records start | 64 .. 4095 reserved
 *   chunk table at FC_RESCUE_HEADER_SIZE, nchunks entries of FC_RESCUE_CHUNK_SIZE (32) bytes:
 *     0 u32 state (FC_RSC_*) | 4 u32 thread | 8 u32 count (records, once queued) |
 *    12 u32 block_seq + 1 of the EVENTS block the chunk is being written as (0: none) |
 *    16 u64 take_seq (order in which chunks were taken for filling) |
 *    24 u64 taken_at (event clock ticks when taken: a filling chunk's records start no earlier)
 *   records at records_off, chunk i at records_off + i * chunk_records * record_size; a record:
 *     0 u64 t0, 8 u64 t1 (ticks) | 16 u64 bytes | 24 u64 bytes2 | 32 u64 obj | 40 i32 peer |
 *    44 i32 tag | 48 u32 comm | 52 u32 site | 56 u16 kind | 58 u16 flags | 60 u32 reserved
 * A FILLING chunk's valid records are the prefix whose kinds are known and, after the first
 * (whose kind the tracer clears when it takes the chunk), whose t0 never falls before taken_at or
 * behind the previous record's; the record being written at the instant of death may be
 * incomplete. */
#define FC_RESCUE_MAGIC "FCRESCUE"
#define FC_RESCUE_FILE_FMT "rank-%06d.fcr"
#define FC_RESCUE_HEADER_SIZE 4096
#define FC_RESCUE_CHUNK_SIZE 32
#define FC_RESCUE_RECORD_SIZE 64
enum { FC_RSC_FREE = 0, FC_RSC_FILLING = 1, FC_RSC_QUEUED = 2, FC_RSC_WRITING = 3, FC_RSC_WRITTEN = 4 };

/* ---- EVENTS block ----------------------------------------------------------------------------
 * Raw payload: uvarint thread (0 for the thread that initialised MPI, then 1, 2 ... in order of
 * their first MPI call), uvarint count (records in this chunk), uvarint base_ns (event clock from
 * which the first record's times count), then the `count` records, in rows or (from format 2) in
 * columns; the first byte after base_ns tells which: FC_EVENT_COLS_MARK (0xff, never a kind)
 * for columns, a kind for rows. Readers of format 2 read both; files of format 1 hold rows only.
 *
 * Rows (format 1 and 2): `count` records, each
 *   u8 kind        FC_EV_*
 *   uvarint len    bytes of the record's body that follow (readers skip unknown kinds by it,
 *                  and ignore body bytes past the fields they know)
 *   body:
 *     u8 mask      which of the fields below follow; a field absent from the mask takes the value
 *                  it had in the previous record of the same kind in this chunk (0 at chunk start)
 *     uvarint dt   t0 minus the previous record's t0 in this chunk (base_ns for the first); t0 of
 *                  the records of one chunk never decreases
 *     uvarint dur  t1 - t0
 *     then, in this order, those present: peer (svarint), tag (svarint), comm (uvarint), bytes
 *     (uvarint), obj (uvarint), site (uvarint), flags (uvarint), bytes2 (uvarint).
 *
 * Columns (format 2): u8 0xff, u32 rec_len, u32 gap_len, then three columns:
 *   rec_len bytes: `count` records laid out as rows without dt and dur (u8 kind, uvarint len,
 *                  body: u8 mask, fields), where peer, tag, bytes, obj and bytes2 are svarint
 *                  differences to the field's value in the previous record of the same kind
 *                  (which is 0 at chunk start); comm, site and flags are values as in rows;
 *   gap_len bytes: `count` svarints, t0 minus the previous record's t1 (base_ns for the first);
 *   the rest:      `count` uvarints, t1 - t0.
 *   The i-th gap and duration belong to the i-th record. t0 never decreases within a chunk.
 *   Apart, the irregular times no longer break zlib's matches over the regular records, and
 *   counting the gap from the previous exit stores the time spent in MPI once instead of twice.
 *
 * Times are nanoseconds of the rank's event clock (monotonic; the CLOCK blocks map it to rank 0's).
 * Field meanings:
 *   peer   comm-local rank of the partner (destination, requested or actual source), or the root of
 *          a rooted collective, or an FC_PEER_* value. Readers map it to a world rank through the
 *          communicator's definition.
 *   tag    message tag, or FC_TAG_ANY.
 *   comm   comm_id from a COMMS block.
 *   bytes  bytes sent (count x type size, derived datatypes included); for a completed receive the
 *          bytes actually received; for collectives the bytes this rank sends.
 *   obj    the object the call creates, starts or completes: an MPI request handle as an unsigned
 *          value, or for communicator constructors the new comm_id + 1 (0: MPI_COMM_NULL).
 *          MPI reuses handles, and MPICH even gives one handle to several live requests that
 *          completed at once, so readers join posts to completions per handle first in, first
 *          out: each completion (COMPLETE, START, Request_free, Cancel) of a handle belongs to the
 *          oldest post of that handle not yet completed; a persistent request stays posted from
 *          its *_init to its Request_free. A COMPLETE's comm and peer are those of its post.
 *   site   call-site id from a SITES block (0: none recorded).
 *   flags  FC_EVF_*.
 *   bytes2 for collectives, the bytes this rank receives; for MPI_Sendrecv, the receive buffer's
 *          capacity; for Waitall/Testall/Startall/... the request count.
 */
enum {
    FC_EVM_PEER = 0x01,
    FC_EVM_TAG = 0x02,
    FC_EVM_COMM = 0x04,
    FC_EVM_BYTES = 0x08,
    FC_EVM_OBJ = 0x10,
    FC_EVM_SITE = 0x20,
    FC_EVM_FLAGS = 0x40,
    FC_EVM_BYTES2 = 0x80,
};

/* Special peer values (MPI's own constants differ between libraries, so the tracer maps them). */
#define FC_PEER_NONE (-1)       /* the call has no peer */
#define FC_PEER_ANY (-2)        /* MPI_ANY_SOURCE */
#define FC_PEER_NULL (-3)       /* MPI_PROC_NULL */
#define FC_PEER_ROOT (-4)       /* MPI_ROOT (inter-communicator collectives) */
#define FC_TAG_ANY (-1)         /* MPI_ANY_TAG */

/* Event flags (FC_EVF_*). */
#define FC_EVF_ANY_SOURCE 0x01u /* a receive or probe asked for MPI_ANY_SOURCE; peer is the actual one */
#define FC_EVF_ANY_TAG 0x02u    /* a receive or probe asked for MPI_ANY_TAG; tag is the actual one */
#define FC_EVF_FOUND 0x04u      /* Iprobe/Improbe found a message; Test* completed something */
#define FC_EVF_CANCELLED 0x08u  /* a completed request had been cancelled */
#define FC_EVF_ERROR 0x10u      /* the MPI call returned an error code */
#define FC_EVF_STATUS 0x20u     /* peer, tag and bytes of this COMPLETE record come from a status */
#define FC_EVF_NULL 0x40u       /* the request completed was MPI_REQUEST_NULL or inactive */
#define FC_EVF_OWN_TIME 0x80u   /* (2.1) this COMPLETE's time is its request's own completion time */
/* (2.6) A reduction (Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan and their
 * non-blocking forms) with an operation of MPI_Op_create, and one whose operation is not
 * commutative: MPICH chooses other algorithms for them. */
#define FC_EVF_USER_OP 0x100u
#define FC_EVF_NONCOMMUTATIVE 0x200u

/* Event kinds: X(name, number, class). Append only. The numbers of MPI functions start at 1;
 * FC_EV_COMPLETE and FC_EV_START are sub-records that follow the call they belong to:
 *   COMPLETE: one request completed by the preceding Wait or Test call (or the receive half of a
 *     Sendrecv/Sendrecv_replace, with obj 0): obj = request handle; when FC_EVF_STATUS is set, peer
 *     is the status' source, tag its tag and bytes the byte count it reports. t0 = t1 = the time
 *     the request was seen complete: the exit time of the call; or, when FC_EVF_OWN_TIME is set
 *     (format 2.1), the request's own completion time inside the call, which lies between the
 *     call's t0 and t1. The tracer sets it for MPI_Waitall, which it completes in steps (as
 *     MPI_Waitsome does) and which then takes each request's time as the step that completed it
 *     returned (FLOWCUT_REQUEST_TIMES). The COMPLETE records of one call follow it in the order of
 *     their times, so that t0 still never decreases within a chunk; those without a time of their
 *     own (null and inactive requests) come last, at the call's exit. A 2.0 reader reads these
 *     times as it reads the exit time: as when the request completed.
 *   START: one request started by the preceding MPI_Startall: obj = request handle.
 *   POLLS (2.3): the preceding record, an MPI_Test, MPI_Testany, MPI_Testsome, MPI_Testall,
 *     MPI_Iprobe or MPI_Improbe that found nothing, is the first of a run of such calls that this
 *     thread made one after the other with the same arguments (the same record but for its times)
 *     and nothing in between: t0 and t1 = entry and exit of the run's last call, bytes = calls in
 *     the run (the first included, at least 2), bytes2 = nanoseconds spent inside those calls, all
 *     of them. The run spans from the first call's t0 to this t1. A reader that skips POLLS sees
 *     the run's first call alone. The tracer folds runs unless FLOWCUT_FOLD_POLLS=0.
 *   TRACER_WAIT (2.3): t0 to t1, the thread waited inside the tracer for a free buffer chunk (the
 *     writer thread had not yet written the full ones): time the application lost to the tracer,
 *     outside any MPI call. Its place among the thread's records is by its t0.
 *   COUNTS (format 2.4): the bytes per peer of the preceding v or w collective (Alltoallv and
 *     Alltoallw on every rank, Allgatherv on every rank, Gatherv and Scatterv at the root, their
 *     non-blocking and _c forms), for a run of consecutive ranks of the group its count arrays
 *     index (the remote group on an inter-communicator) that all get the same: peer = the first
 *     rank of the run in that group, obj = how many ranks the run covers, bytes = the bytes this
 *     rank sends to each of them, bytes2 = the bytes it receives from each (Allgatherv: each one's
 *     block). The runs follow the call in rank order and cover the group; comm is 0 and the
 *     time is the call's exit. A call whose ranks all get the same in both directions has none:
 *     its totals divided by the group's size give them.
 * Classes: P2P (point-to-point), COLL (collective), COMM (communicator), REQ (requests, waits,
 * tests), PROBE, ENV (init, finalize), SUB (sub-record, or a record of the tracer's own). */
#define FC_EVENT_KINDS(X)                                                                          \
    X(MPI_Init, 1, ENV)                                                                           \
    X(MPI_Init_thread, 2, ENV)                                                                    \
    X(MPI_Finalize, 3, ENV)                                                                       \
    X(MPI_Send, 4, P2P)                                                                           \
    X(MPI_Bsend, 5, P2P)                                                                          \
    X(MPI_Ssend, 6, P2P)                                                                          \
    X(MPI_Rsend, 7, P2P)                                                                          \
    X(MPI_Isend, 8, P2P)                                                                          \
    X(MPI_Ibsend, 9, P2P)                                                                         \
    X(MPI_Issend, 10, P2P)                                                                        \
    X(MPI_Irsend, 11, P2P)                                                                        \
    X(MPI_Recv, 12, P2P)                                                                          \
    X(MPI_Irecv, 13, P2P)                                                                         \
    X(MPI_Mrecv, 14, P2P)                                                                         \
    X(MPI_Imrecv, 15, P2P)                                                                        \
    X(MPI_Sendrecv, 16, P2P)                                                                      \
    X(MPI_Sendrecv_replace, 17, P2P)                                                              \
    X(MPI_Send_init, 18, P2P)                                                                     \
    X(MPI_Bsend_init, 19, P2P)                                                                    \
    X(MPI_Ssend_init, 20, P2P)                                                                    \
    X(MPI_Rsend_init, 21, P2P)                                                                    \
    X(MPI_Recv_init, 22, P2P)                                                                     \
    X(MPI_Start, 23, REQ)                                                                         \
    X(MPI_Startall, 24, REQ)                                                                      \
    X(MPI_Request_free, 25, REQ)                                                                  \
    X(MPI_Wait, 26, REQ)                                                                          \
    X(MPI_Waitall, 27, REQ)                                                                       \
    X(MPI_Waitany, 28, REQ)                                                                       \
    X(MPI_Waitsome, 29, REQ)                                                                      \
    X(MPI_Test, 30, REQ)                                                                          \
    X(MPI_Testall, 31, REQ)                                                                       \
    X(MPI_Testany, 32, REQ)                                                                       \
    X(MPI_Testsome, 33, REQ)                                                                      \
    X(MPI_Probe, 34, PROBE)                                                                       \
    X(MPI_Iprobe, 35, PROBE)                                                                      \
    X(MPI_Mprobe, 36, PROBE)                                                                      \
    X(MPI_Improbe, 37, PROBE)                                                                     \
    X(MPI_Cancel, 38, REQ)                                                                        \
    X(MPI_Barrier, 39, COLL)                                                                      \
    X(MPI_Bcast, 40, COLL)                                                                        \
    X(MPI_Reduce, 41, COLL)                                                                       \
    X(MPI_Allreduce, 42, COLL)                                                                    \
    X(MPI_Gather, 43, COLL)                                                                       \
    X(MPI_Gatherv, 44, COLL)                                                                      \
    X(MPI_Scatter, 45, COLL)                                                                      \
    X(MPI_Scatterv, 46, COLL)                                                                     \
    X(MPI_Allgather, 47, COLL)                                                                    \
    X(MPI_Allgatherv, 48, COLL)                                                                   \
    X(MPI_Alltoall, 49, COLL)                                                                     \
    X(MPI_Alltoallv, 50, COLL)                                                                    \
    X(MPI_Alltoallw, 51, COLL)                                                                    \
    X(MPI_Reduce_scatter, 52, COLL)                                                               \
    X(MPI_Reduce_scatter_block, 53, COLL)                                                         \
    X(MPI_Scan, 54, COLL)                                                                         \
    X(MPI_Exscan, 55, COLL)                                                                       \
    X(MPI_Ibarrier, 56, COLL)                                                                     \
    X(MPI_Ibcast, 57, COLL)                                                                       \
    X(MPI_Ireduce, 58, COLL)                                                                      \
    X(MPI_Iallreduce, 59, COLL)                                                                   \
    X(MPI_Igather, 60, COLL)                                                                      \
    X(MPI_Igatherv, 61, COLL)                                                                     \
    X(MPI_Iscatter, 62, COLL)                                                                     \
    X(MPI_Iscatterv, 63, COLL)                                                                    \
    X(MPI_Iallgather, 64, COLL)                                                                   \
    X(MPI_Iallgatherv, 65, COLL)                                                                  \
    X(MPI_Ialltoall, 66, COLL)                                                                    \
    X(MPI_Ialltoallv, 67, COLL)                                                                   \
    X(MPI_Ialltoallw, 68, COLL)                                                                   \
    X(MPI_Ireduce_scatter, 69, COLL)                                                              \
    X(MPI_Ireduce_scatter_block, 70, COLL)                                                        \
    X(MPI_Iscan, 71, COLL)                                                                        \
    X(MPI_Iexscan, 72, COLL)                                                                      \
    X(MPI_Comm_dup, 73, COMM)                                                                     \
    X(MPI_Comm_split, 74, COMM)                                                                   \
    X(MPI_Comm_create, 75, COMM)                                                                  \
    X(MPI_Cart_create, 76, COMM)                                                                  \
    X(MPI_Graph_create, 77, COMM)                                                                 \
    X(MPI_Dist_graph_create, 78, COMM)                                                            \
    X(MPI_Dist_graph_create_adjacent, 79, COMM)                                                   \
    X(MPI_Intercomm_create, 80, COMM)                                                             \
    X(MPI_Comm_free, 81, COMM)                                                                    \
    X(MPI_Comm_split_type, 82, COMM)                                                              \
    X(MPI_Comm_create_group, 83, COMM)                                                            \
    X(MPI_Intercomm_merge, 84, COMM)                                                              \
    X(MPI_Comm_dup_with_info, 85, COMM)                                                           \
    X(MPI_Comm_idup, 86, COMM)                                                                    \
    X(MPI_Cart_sub, 87, COMM)                                                                     \
    X(MPI_Abort, 88, ENV)                                                                         \
    X(MPI_Neighbor_allgather, 89, COLL)                                                           \
    X(MPI_Neighbor_allgatherv, 90, COLL)                                                          \
    X(MPI_Neighbor_alltoall, 91, COLL)                                                            \
    X(MPI_Neighbor_alltoallv, 92, COLL)                                                           \
    X(MPI_Neighbor_alltoallw, 93, COLL)                                                           \
    X(MPI_Ineighbor_allgather, 94, COLL)                                                          \
    X(MPI_Ineighbor_allgatherv, 95, COLL)                                                         \
    X(MPI_Ineighbor_alltoall, 96, COLL)                                                           \
    X(MPI_Ineighbor_alltoallv, 97, COLL)                                                          \
    X(MPI_Ineighbor_alltoallw, 98, COLL)                                                          \
    X(MPI_Neighbor_allgather_init, 99, COLL)                                                      \
    X(MPI_Neighbor_allgatherv_init, 100, COLL)                                                    \
    X(MPI_Neighbor_alltoall_init, 101, COLL)                                                      \
    X(MPI_Neighbor_alltoallv_init, 102, COLL)                                                     \
    X(MPI_Neighbor_alltoallw_init, 103, COLL)                                                     \
    X(COMPLETE, 120, SUB)                                                                         \
    X(START, 121, SUB)                                                                            \
    X(POLLS, 122, SUB)                                                                            \
    X(TRACER_WAIT, 123, SUB)                                                                      \
    X(COUNTS, 124, SUB)

enum fc_event_kind {
#define FC__X(name, num, cls) FC_EV_##name = num,
    FC_EVENT_KINDS(FC__X)
#undef FC__X
    FC_EV_MAX_ = 128 /* kinds are below this; a u8 on disk */
};

/* ---- explicit little-endian helpers ----------------------------------------------------------
 * Byte-by-byte so they are correct on any host; compilers turn them into single moves on x86. */
static inline void fc_put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static inline void fc_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline void fc_put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint16_t fc_get_u16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
/* Spelled out rather than looped: compilers recognise the whole expression as one load (a loop
 * they do not always unroll), and the varint reader below relies on fc_get_u64 being cheap. */
static inline uint32_t fc_get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t fc_get_u64(const unsigned char *p)
{
    return (uint64_t)fc_get_u32(p) | (uint64_t)fc_get_u32(p + 4) << 32;
}

/* Writes v as a uvarint at p (room for 10 bytes needed); returns the bytes written. */
static inline size_t fc_put_uvarint(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}
static inline uint64_t fc_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t fc_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
/* The general case of fc_get_uvarint, below: a value of several bytes, or input that ends. The
 * loop is unrolled: values of two to four bytes (times, sizes) are common. */
static inline int fc__get_uvarint_slow(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    const unsigned char *q = *p;
    ptrdiff_t n = end - q < 10 ? end - q : 10; /* at most ten bytes, none past end */
    uint64_t r = 0;
#pragma GCC unroll 10
    for (ptrdiff_t i = 0; i < n; i++) {
        uint64_t b = q[i];
        r |= (b & 0x7f) << (7 * i);
        if (b < 0x80) {
            *v = r;
            *p = q + i + 1;
            return 0;
        }
    }
    *v = 0;
    return -1;
}
/* Reads a uvarint from [*p, end); on success stores it in *v, advances *p and returns 0; returns -1
 * (leaving *p, and *v set to 0) when the input ends first or the value has more than 10 bytes. */
static inline int fc_get_uvarint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    /* Most values in a trace (masks, kinds, lengths, small differences) take one byte: one test
     * settles them, and the loop is left for the rest. */
    const unsigned char *q = *p;
    if (q < end && *q < 0x80) {
        *v = *q;
        *p = q + 1;
        return 0;
    }
    return fc__get_uvarint_slow(p, end, v);
}
/* fc_get_uvarint for a caller that knows ten bytes at *p to be readable (same results). A value
 * of several bytes is taken from one load of eight: each further byte costs a test of its
 * continuation bit and a shift of its seven bits into place, not a load and a mask of its own. */
static inline int fc__get_uvarint_unchecked(const unsigned char **p, uint64_t *v)
{
    const unsigned char *q = *p;
    if (q[0] < 0x80) {
        *v = q[0];
        *p = q + 1;
        return 0;
    }
    uint64_t w = fc_get_u64(q), r = w & 0x7f;
#pragma GCC unroll 8
    for (int i = 1; i < 8; i++) {
        r |= (w >> i) & (UINT64_C(0x7f) << (7 * i));
        if (!(w & (UINT64_C(0x80) << (8 * i)))) {
            *v = r;
            *p = q + i + 1;
            return 0;
        }
    }
    for (int i = 8; i < 10; i++) {
        uint64_t b = q[i];
        r |= (b & 0x7f) << (7 * i);
        if (b < 0x80) {
            *v = r;
            *p = q + i + 1;
            return 0;
        }
    }
    *v = 0;
    return -1;
}
/* fc_unzigzag of the one-byte svarints, the most common: a load instead of four operations. */
static const signed char fc__unzigzag7[128] = {
    0, -1, 1, -2, 2, -3, 3, -4, 4, -5, 5, -6, 6, -7, 7, -8, 8, -9, 9, -10, 10, -11, 11, -12, 12,
    -13, 13, -14, 14, -15, 15, -16, 16, -17, 17, -18, 18, -19, 19, -20, 20, -21, 21, -22, 22,
    -23, 23, -24, 24, -25, 25, -26, 26, -27, 27, -28, 28, -29, 29, -30, 30, -31, 31, -32, 32,
    -33, 33, -34, 34, -35, 35, -36, 36, -37, 37, -38, 38, -39, 39, -40, 40, -41, 41, -42, 42,
    -43, 43, -44, 44, -45, 45, -46, 46, -47, 47, -48, 48, -49, 49, -50, 50, -51, 51, -52, 52,
    -53, 53, -54, 54, -55, 55, -56, 56, -57, 57, -58, 58, -59, 59, -60, 60, -61, 61, -62, 62,
    -63, 63, -64
};
/* fc_get_uvarint and fc_unzigzag together, for a caller that knows ten bytes at *p to be
 * readable. */
static inline int fc__get_svarint_unchecked(const unsigned char **p, int64_t *v)
{
    const unsigned char *q = *p;
    if (q[0] < 0x80) {
        *v = fc__unzigzag7[q[0]];
        *p = q + 1;
        return 0;
    }
    uint64_t u;
    int rc = fc__get_uvarint_unchecked(p, &u);
    *v = fc_unzigzag(u);
    return rc;
}

/* Fills a FC_FILE_HEADER_SIZE-byte file header at h. Tracer and writers share it so they agree. */
static inline void fc_file_header_put(unsigned char *h, uint32_t rank, uint32_t size, uint64_t start_ns,
                                      uint32_t pid)
{
    memset(h, 0, FC_FILE_HEADER_SIZE);
    memcpy(h + FC_FH_MAGIC, FC_MAGIC, FC_MAGIC_LEN);
    fc_put_u32(h + FC_FH_BOM, FC_BOM);
    fc_put_u16(h + FC_FH_MAJOR, FC_FORMAT_MAJOR);
    fc_put_u16(h + FC_FH_MINOR, FC_FORMAT_MINOR);
    fc_put_u32(h + FC_FH_HEADER_SIZE, FC_FILE_HEADER_SIZE);
    fc_put_u32(h + FC_FH_RANK, rank);
    fc_put_u32(h + FC_FH_SIZE, size);
    fc_put_u64(h + FC_FH_START_NS, start_ns);
    fc_put_u32(h + FC_FH_PID, pid);
}

/* Fills a FC_BLOCK_HEADER_SIZE-byte block header at h. crc is zlib's crc32 of the stored payload. */
static inline void fc_block_header_put(unsigned char *h, uint32_t kind, uint32_t flags, uint32_t stored_len,
                                       uint32_t raw_len, uint32_t crc, uint32_t seq)
{
    fc_put_u32(h + FC_BH_KIND, kind);
    fc_put_u32(h + FC_BH_FLAGS, flags);
    fc_put_u32(h + FC_BH_STORED_LEN, stored_len);
    fc_put_u32(h + FC_BH_RAW_LEN, raw_len);
    fc_put_u32(h + FC_BH_CRC32, crc);
    fc_put_u32(h + FC_BH_SEQ, seq);
}

#ifdef __cplusplus
}
#endif
#endif /* FLOWCUT_FORMAT_H */
