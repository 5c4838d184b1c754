/* analyzer/trace/cursor.h: a rank's records a batch at a time, for readers that take them by the
 * hundred million (matching): fc_cursor_next's records without its call per record. Internal to
 * libflowcut-analyzer. A cursor is read through one of the two interfaces or both, in any mix:
 * they take from the same position. */
#ifndef FLOWCUT_ANALYZER_CURSOR_H
#define FLOWCUT_ANALYZER_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <flowcut/reader.h>

/* Reads into recs[0..max) c's next records whose aligned entry time (fc_record.t0) is at most
 * last, in the order fc_cursor_next gives them, and stores how many in *n: as that many calls of
 * fc_cursor_next, without a call per record. Returns 1 when c may have more records (the next one
 * is later than last, or max were read), 0 when it has none left (the *n read are its last), or
 * an error code as fc_cursor_next (with the *n records before the failing one read). */
int fc__cursor_fill(fc_cursor *c, int64_t last, fc_record *recs, size_t max, size_t *n);

/* Stores in *t0 the aligned entry time of the record fc_cursor_next would give next, without
 * taking it. Returns 1, 0 when c has no record left, or the error code c failed with. */
int fc__cursor_peek(fc_cursor *c, int64_t *t0);

#endif /* FLOWCUT_ANALYZER_CURSOR_H */
