/* analyzer/conflict/feed.h: from matched messages, delivered in the order their pairs complete
 * (fc__match_stream), to a sweep (sweep.h) in the order of start, with the ids fc__match_trace
 * gives: inter-node flows numbered 0, 1, 2 ... by start, then source rank, destination rank, end
 * and send start. A flow waits here only until the match's watermark passes its start, so memory
 * is the flows between the watermark and the messages in flight. Intra-node messages are counted by
 * the match and passed on only when asked for (fc__feed_intra). Internal to libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_FEED_H
#define FLOWCUT_ANALYZER_FEED_H

#include "match/match.h"
#include "conflict/sweep.h"

typedef struct fc__feed fc__feed;

/* A new feed into a new sweep with ops, in *out (fc__feed_free). Returns 0 or FC_ENOMEM. */
int fc__feed_new(const fc__sweep_ops *ops, fc__feed **out);
void fc__feed_free(fc__feed *f);

/* Also hands every intra-node message to fn, in the same order among themselves, numbered 0, 1,
 * 2 ... (their ids in fc__match_trace are the number of inter-node flows plus these). Before the
 * match starts; fn may be NULL (the default: they are dropped). */
void fc__feed_intra(fc__feed *f, int (*fn)(void *arg, const fc__flow *fl), void *arg);

/* The sink to give fc__match_stream; f is its argument. */
fc__match_sink fc__feed_sink(fc__feed *f);

/* After the match: sweeps what is left, and turns m->worst_flow from the order of delivery into
 * the flow's id (UINT64_MAX when the worst violation is an intra-node message, which has no id
 * here). Returns 0 or what the sweep returned. */
int fc__feed_finish(fc__feed *f, fc__match *m);

#endif /* FLOWCUT_ANALYZER_FEED_H */
