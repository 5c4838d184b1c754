/* analyzer/trace/rankfile.h: reading one rank file (reader.c) for the trace that gathers them
 * (open.c). Internal to libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_TRACE_RANKFILE_H
#define FLOWCUT_ANALYZER_TRACE_RANKFILE_H

#include "util/internal.h"

/* A world larger than this is taken for corruption: readers allocate by the world size (the
 * implied MPI_COMM_WORLD's member list, the missing ranks), and MPI runs are far smaller. */
#define FC__MAX_WORLD (1u << 24)

/* Checks the header and the blocks of rank file `file` in order and loads what they define into
 * r (a zeroed slot of t->ranks; strings go to t's arena, the lists are malloc'd and r owns them).
 * A file without END gets the events of its rescue file and is marked partial, as is one whose
 * END says so. in_dir: the file was found in a trace directory, where a symbolic link or anything
 * but a regular file is refused (the tracer never writes one, so such a file is planted or
 * foreign; a FIFO would block). Returns 0, or a negative FC_E* code with fc_errmsg() naming the
 * file and offset; what was loaded before the failure stays in r (r->header_ok says whether the
 * header was read). */
int fc__rank_scan(fc_trace *t, fc__rank *r, const char *file, int in_dir);

/* Adds the implied MPI_COMM_WORLD (id 0) to rank r's communicators when its COMMS block did not
 * define it. Returns 0, FC_ECORRUPT for a world size above FC__MAX_WORLD, or FC_ENOMEM. */
int fc__rank_imply_world(fc_trace *t, fc__rank *r);

#endif /* FLOWCUT_ANALYZER_TRACE_RANKFILE_H */
