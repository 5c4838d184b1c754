/* flowcut/writer.h: a simple writer of valid flowcut rank files (format.h), for tests, generators
 * and converters. The tracer has its own fast writer; both produce the same format.
 *
 * Conventions as in reader.h: 0 or a negative FC_E* code, fc_errmsg() for the message. Blocks are
 * written in the order of the calls, each with the next sequence number, so a caller can build any
 * valid (or, with fc_writer_block, deliberately odd) file. Nothing is written implicitly: a file
 * closed without fc_writer_end has no END block and reads as partial. */
#ifndef FLOWCUT_WRITER_H
#define FLOWCUT_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <flowcut/reader.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fc_writer fc_writer;

#define FC_WRITER_STORED 0x1u /* write EVENTS payloads uncompressed (FC_BLKF_ZLIB clear) */

/* Creates (or truncates) the rank file at path and writes its file header. flags: FC_WRITER_*
 * (unknown bits give FC_EINVAL). On success *out owns the open file (fc_writer_close). */
int fc_writer_open(const char *path, uint32_t rank, uint32_t size, uint64_t start_ns, uint32_t pid,
                   unsigned flags, fc_writer **out);
/* Writes a RANK block with the fields whose bit (1 << FC_RK_*) is set in info->present; strings
 * NULL are written as empty. argv holds info->argc strings. */
int fc_writer_rank(fc_writer *w, const fc_rank_info *info);
/* Sets the FC_RK_COLL_ENV field (len bytes of NAME=VALUE entries, each ended by a NUL) that the
 * next fc_writer_rank writes; the writer keeps a copy. Returns 0 or FC_ENOMEM. */
int fc_writer_rank_coll_env(fc_writer *w, const char *env, size_t len);
int fc_writer_modules(fc_writer *w, const fc_module *m, size_t n);
int fc_writer_sites(fc_writer *w, const fc_site *s, size_t n);
int fc_writer_comms(fc_writer *w, const fc_comm *c, size_t n);
int fc_writer_clock(fc_writer *w, const fc_clock *c, size_t n);
/* Writes one EVENTS block of thread with n events (n >= 1), encoded in columns as the tracer
 * writes them (fc_event_encode_cols, format 2) from base_ns = ev[0].t0. Events must be in non-decreasing t0 and have kinds below FC_EV_MAX_
 * (FC_EINVAL otherwise); ev[].thread is ignored. */
int fc_writer_events(fc_writer *w, uint32_t thread, const fc_event *ev, size_t n);
/* Writes a WARN block with text (one line). */
int fc_writer_warn(fc_writer *w, const char *text);
/* Writes the END block: events and warnings are the counts this writer wrote. */
int fc_writer_end(fc_writer *w, uint64_t flags, uint64_t reason, uint64_t end_ns, uint64_t dropped);
/* Writes a block of any kind with the given payload; FC_BLKF_ZLIB in flags compresses it. The
 * records of an EVENTS block (the count in its chunk header) count toward fc_writer_end's total. */
int fc_writer_block(fc_writer *w, uint32_t kind, uint32_t flags, const void *payload, size_t len);
/* Byte offset where the next block will start (the size of the file so far). */
uint64_t fc_writer_offset(const fc_writer *w);
/* Flushes and closes the file and frees w; returns 0 or FC_EIO. w NULL is a no-op returning 0. */
int fc_writer_close(fc_writer *w);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCUT_WRITER_H */
