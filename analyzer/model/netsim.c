/* analyzer/model/netsim.c: the fluid simulation of messages crossing a platform (fc__net_*). The rate
 * every message moves at under each contention model is re-solved whenever the set of messages
 * moving data changes, by the solvers of model/speeds.c.
 *
 * A message's uncontended time is the profile's latency + bytes * per_byte (fc__profile_time).
 * It is simulated as a latency phase, which uses no bandwidth and is never slowed, followed by a
 * data phase of bytes * per_byte seconds of work when alone. Only messages in their data phase
 * take part in conflicts: the latency is the software and wire delay before the first byte
 * arrives, the time the report's flow cuts and Gropp's rates do not stretch. Work is measured in
 * uncontended seconds, so a model gives each message a speed, the fraction of its uncontended
 * rate it gets (1 alone), and a message with w seconds of work left at speed v ends w / v later.
 * This makes the models comparable for messages whose segments differ: the flowcut model cuts
 * the speed by 1 / (1 + alpha), the fairshare model shares a NIC direction's time between the
 * messages using it (capacity 1: one message alone saturates it, as the profile measured), and
 * maxrate converts Gropp's byte rates into speeds against its own one-message rate.
 *
 * Events are a message starting (fc__net_start), a latency phase ending and a message
 * completing. The last two happen inside the simulation, so fc__net_next looks ahead through the
 * latency ends to the first completion on a copy of the state and keeps that copy: fc__net_pop
 * then adopts it instead of simulating the same stretch twice. A caller that knows the time of its
 * own next event runs the state itself up to it instead (fc__net_advance, fc__net_settle): the
 * look-ahead would run past that event to a completion, and be thrown away if the event starts a
 * message. The state in flight is kept sorted by key, which gives the solvers their ascending key
 * order (the flowcut model's alpha index) and fc__net_pop the lowest key on a tie for free.
 *
 * Event times are computed once, as start + latency and then as t + work / speed at each
 * re-solve, and a message completes exactly at the time computed for it: no tolerance is applied,
 * so messages tie when their computed times are equal doubles (equal sizes and rates do), and a
 * test whose figures are exact in binary sees exact times.
 *
 * Cost per event, for m messages in flight: two passes over them, one moving the work and one
 * setting the completion times (which finds the next event on the way), plus the re-solve: O(m)
 * for linear and maxrate, O(m + r b) for fairshare (r NIC directions in use, b bottleneck rounds,
 * b <= r), and one fc__intervals_label_set_with for flowcut, which builds the intervals of the set
 * (O(m log m), the dominant cost when thousands are in flight at once). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "conflict/intervals.h"
#include "model/model.h"
#include "model/netsim-int.h"

/* ---- message parameters ------------------------------------------------------------------------ */

/* The segment fc__profile_time uses for bytes, including its fall-back to the nearest segment
 * below (or the first) when a hand-made profile leaves a gap. */
static const fc__segment *segment_of(const fc__profile *p, int intra, uint64_t bytes)
{
    const fc__segment *s = fc__profile_segment(p, intra, bytes);
    if (s)
        return s;
    const fc__segment *v = intra && p->nintra ? p->intra : p->inter;
    size_t n = intra && p->nintra ? p->nintra : p->ninter;
    if (n == 0)
        return NULL;
    s = &v[0];
    for (size_t i = 0; i < n; i++)
        if (v[i].lo <= bytes)
            s = &v[i];
    return s;
}

/* The latency phase and the data-phase work (uncontended seconds) of a message. A negative
 * latency (the intercept of a fit) is taken off the work, so that the uncontended total stays the
 * profile's time; neither phase is ever negative. */
static void msg_times(const fc__net *n, int intra, uint64_t bytes, double *lat, double *work)
{
    if (n->model == FC_MODEL_MAXRATE && !intra) {
        const fc__maxrate *m = &n->p->maxrate;
        *lat = m->s;
        *work = (double)bytes / maxrate_agg(m, 1);
    } else {
        const fc__segment *s = segment_of(n->p, intra, bytes);
        *lat = s ? s->latency : 0;
        *work = s ? (double)bytes * s->per_byte : 0;
    }
    if (!(*work > 0))
        *work = 0;
    if (*lat < 0) {
        *work += *lat;
        *lat = 0;
        if (*work < 0)
            *work = 0;
    }
}

/* ---- the event loop ---------------------------------------------------------------------------- */

/* ---- connections whose messages end in order (fc__profile_conn_ordered) ------------------------
 * One pass over the messages in key order (the order they started) asks conn_open of each: it
 * says whether an earlier message of the connection is still open (not ended), and, when the
 * message itself is open, marks the connection so. aux.cset holds the marked connections; a
 * message that ends in the pass unmarks its connection (conn_close) when it was the marking one,
 * which is when no earlier one is open; conn_clear empties the set after the pass. */
static size_t conn_slot(const aux *a, uint64_t c)
{
    size_t mask = a->ccap - 1, h = (size_t)(c ^ (c >> 29)) * 0x9e3779b97f4a7c15ull & mask;
    while (a->cset[h] != 0 && a->cset[h] != c)
        h = (h + 1) & mask;
    return h;
}

static int conn_open(aux *a, uint64_t c, int open)
{
    size_t h = conn_slot(a, c);
    if (a->cset[h] == c)
        return 1;
    if (open)
        a->cset[h] = c;
    return 0;
}

/* Unmarks c when it is marked, leaving the probe chains of the other connections whole: the
 * entries after its slot, up to the next empty one, are placed again. */
static void conn_close(aux *a, uint64_t c)
{
    size_t mask = a->ccap - 1, h = conn_slot(a, c);
    if (a->cset[h] != c)
        return;
    a->cset[h] = 0;
    for (size_t j = (h + 1) & mask; a->cset[j] != 0; j = (j + 1) & mask) {
        uint64_t o = a->cset[j];
        a->cset[j] = 0;
        a->cset[conn_slot(a, o)] = o;
    }
}

/* Each by conn_close, which keeps the probe chains whole: a slot emptied in the middle of a chain
 * would hide the connections placed after it from the search. */
static void conn_clear(aux *a, const state *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].conn != 0)
            conn_close(a, s->v[i].conn);
}

/* Moves the state to time e, an event time no later than any pending event: messages whose
 * completion is e complete, latency phases ending by e give way to the data phase. The re-solve
 * that follows starts every message moving data at speed 1 and lists in a->idx those a model may
 * slow; that is done here, in the same pass over the messages. Returns how many it listed. */
static size_t step(const fc__net *n, aux *a, state *s, double e)
{
    double dt = e - s->now;
    int slowed = n->model != FC_MODEL_LINEAR;
    int ordered = slowed && fc__profile_conn_ordered(n->p);
    size_t d = 0;
    s->known = 0;
    for (size_t i = 0; i < s->n; i++) {
        msg *m = &s->v[i];
        /* The messages before this one have their phases at e already: an open one of its
         * connection holds it. */
        int behind = ordered && m->conn != 0 && conn_open(a, m->conn, m->phase != PH_DONE);
        if (m->phase == PH_HELD) {
            if (!behind) {
                m->phase = PH_DONE;
                m->fin = e;
                s->ndone++;
                conn_close(a, m->conn);
            }
            continue;
        }
        if (m->phase == PH_DATA) {
            if (m->fin <= e) {
                m->work = 0;
                m->speed = 0;
                if (behind) {
                    m->phase = PH_HELD;
                    m->fin = INFINITY;
                    continue;
                }
                if (ordered && m->conn != 0)
                    conn_close(a, m->conn);
                m->phase = PH_DONE;
                m->fin = e;
                m->work = 0;
                s->ndone++;
                continue;
            }
            m->work -= m->speed * dt;
            if (m->work < 0)
                m->work = 0;
        } else if (m->phase == PH_LAT && m->lat_end <= e) {
            m->phase = m->work > 0 ? PH_DATA : behind ? PH_HELD : PH_DONE;
            m->fresh = 1;
            m->data_start = m->lat_end;
            if (m->phase == PH_HELD) {
                m->speed = 0;
                m->fin = INFINITY;
                continue;
            }
            if (m->phase == PH_DONE) {
                if (ordered && m->conn != 0)
                    conn_close(a, m->conn);
                m->fin = e;
                s->ndone++;
                continue;
            }
        } else {
            continue;
        }
        m->speed = 1.0;
        if (slowed && !m->intra)
            a->idx[d++] = i;
    }
    if (ordered)
        conn_clear(a, s);
    s->now = e;
    return d;
}

/* A serial connection (the profile's connection record): of the d messages listed, in key order
 * (the order they started in), only the first of each connection moves data; the others keep
 * speed 0 and leave the list, so that the connection is one flow for the model, and a message
 * waits for the earlier ones of its connection. Returns the messages left listed. */
static size_t hold_connections(aux *a, state *s, size_t d)
{
    size_t w = 0, mask = a->ccap - 1;
    for (size_t j = 0; j < d; j++) {
        msg *m = &s->v[a->idx[j]];
        if (m->conn != 0) {
            size_t h = (size_t)(m->conn ^ (m->conn >> 29)) * 0x9e3779b97f4a7c15ull & mask;
            while (a->cset[h] != 0 && a->cset[h] != m->conn)
                h = (h + 1) & mask;
            if (a->cset[h] == m->conn) {
                m->speed = 0;
                continue;
            }
            a->cset[h] = m->conn;
        }
        a->idx[w++] = a->idx[j];
    }
    /* Empty the set again, slot by slot: the listed messages name every slot filled. */
    for (size_t j = 0; j < w; j++) {
        uint64_t c = s->v[a->idx[j]].conn;
        if (c == 0)
            continue;
        size_t h = (size_t)(c ^ (c >> 29)) * 0x9e3779b97f4a7c15ull & mask;
        while (a->cset[h] != c)
            h = (h + 1) & mask;
        a->cset[h] = 0;
    }
    return w;
}

/* Of the d messages listed, those the opposite direction delays (until stall_end, later than the
 * state's time) keep speed 0 and leave the list, the others keeping their order. Returns the
 * messages left listed. */
static size_t drop_stalled(aux *a, state *s, size_t d)
{
    size_t w = 0;
    for (size_t j = 0; j < d; j++) {
        msg *m = &s->v[a->idx[j]];
        if (m->stall_end > s->now) {
            m->speed = 0;
            continue;
        }
        a->idx[w++] = a->idx[j];
    }
    return w;
}

/* Sets the speed and completion time of every message in its data phase at the state's time,
 * the d messages step listed taking their speeds from the model, and the next event times. */
static int solve(const fc__net *n, aux *a, state *s, size_t d)
{
    if (d > 0 && fc__profile_conn_one_at_a_time(n->p))
        d = hold_connections(a, s, d);
    int opp = n->model == FC_MODEL_FLOWCUT && n->p->nopp > 0;
    if (d > 0 && opp)
        d = drop_stalled(a, s, d);
    if (d > 0) {
        if (n->model == FC_MODEL_FLOWCUT) {
            int rc = fc__speeds_flowcut(n, a, s, d);
            if (rc)
                return rc;
            /* Messages the opposite direction delays leave, and the rest is solved again: the
             * second pass delays none (every message listed is decided). */
            if ((n->p->has_latejoin || opp) && fc__speeds_share(n, a, s, d) > 0 &&
                (d = drop_stalled(a, s, d)) > 0) {
                if ((rc = fc__speeds_flowcut(n, a, s, d)) != 0)
                    return rc;
                fc__speeds_share(n, a, s, d);
            }
        } else if (n->model == FC_MODEL_FAIRSHARE) {
            fc__speeds_fairshare(a, s, d);
        } else if (n->model == FC_MODEL_MAXRATE) {
            fc__speeds_maxrate(n, a, s, d);
        }
    }
    double elat = INFINITY, efin = INFINITY;
    int ordered = n->model != FC_MODEL_LINEAR && fc__profile_conn_ordered(n->p);
    for (size_t i = 0; i < s->n; i++) {
        msg *m = &s->v[i];
        int behind = ordered && m->conn != 0 && conn_open(a, m->conn, m->phase != PH_DONE);
        if (m->phase == PH_DATA) {
            /* A message held behind its connection (speed 0) has no completion in sight. */
            m->fin = m->speed > 0 ? s->now + m->work / m->speed : INFINITY;
            /* The end of the data of a message behind an open one of its connection is not its
             * completion (it will be held), but an event, as a latency's end. */
            if (behind && m->fin < elat)
                elat = m->fin;
            else if (!behind && m->fin < efin)
                efin = m->fin;
            /* A delayed message's end of delay is an event, as a latency's end. */
            if (m->stall_end > s->now && m->stall_end < elat)
                elat = m->stall_end;
        } else if (m->phase == PH_LAT && m->lat_end < elat) {
            elat = m->lat_end;
        }
    }
    if (ordered)
        conn_clear(a, s);
    s->elat = elat;
    s->efin = efin;
    s->known = 1;
    return 0;
}

/* The next event times by a scan of the messages, for a state that does not know them: a new
 * state, or one a start left with a tie it could not settle. */
static void scan_next(const fc__net *n, aux *a, state *s)
{
    double elat = INFINITY, efin = INFINITY;
    int ordered = n->model != FC_MODEL_LINEAR && fc__profile_conn_ordered(n->p);
    for (size_t i = 0; i < s->n; i++) {
        const msg *m = &s->v[i];
        int behind = ordered && m->conn != 0 && conn_open(a, m->conn, m->phase != PH_DONE);
        if (m->phase == PH_LAT && m->lat_end < elat)
            elat = m->lat_end;
        else if (m->phase == PH_DATA && behind && m->fin < elat)
            elat = m->fin; /* its data's end, not its completion (solve) */
        else if (m->phase == PH_DATA && m->fin < efin)
            efin = m->fin;
        if (m->phase == PH_DATA && m->stall_end > s->now && m->stall_end < elat)
            elat = m->stall_end;
    }
    if (ordered)
        conn_clear(a, s);
    s->elat = elat;
    s->efin = efin;
    s->known = 1;
}

/* run() stopped, with strict = 1, before a completion earlier than `until`. */
#define RUN_LATE 1
/* run()'s strict argument for a run that stops at the first completion no later than `until`,
 * the state at that completion (fc__net_advance). */
#define RUN_TO_DONE 2
/* As RUN_TO_DONE, but without the final move to `until` when no completion comes first: the
 * state stays at its last event (fc__net_settle). */
#define RUN_EVENTS 3

/* Runs the state through its internal events up to time `until` (then moves the work to until
 * without a re-solve: nothing changed), or, with until = INFINITY or strict = RUN_TO_DONE, up to
 * the first completion if it comes first. With strict = 1, a completion before until stops it
 * (RUN_LATE), the state part-way. */
static int run(const fc__net *n, aux *a, state *s, double until, int strict)
{
    for (;;) {
        if (s->ndone > 0 && (isinf(until) || strict >= RUN_TO_DONE))
            return 0;
        if (!s->known)
            scan_next(n, a, s);
        double e = s->elat, efin = s->efin;
        if (efin < e)
            e = efin;
        if (!(e <= until) || isinf(e))
            break;
        if (strict == 1 && efin == e && e < until)
            return RUN_LATE;
        int rc = solve(n, a, s, step(n, a, s, e));
        if (rc)
            return rc;
    }
    if (isfinite(until) && until > s->now && strict != RUN_EVENTS) {
        double dt = until - s->now;
        for (size_t i = 0; i < s->n; i++) {
            msg *m = &s->v[i];
            if (m->phase == PH_DATA) {
                m->work -= m->speed * dt;
                if (m->work < 0)
                    m->work = 0;
            }
        }
        s->now = until;
    }
    return 0;
}

/* ---- the handle -------------------------------------------------------------------------------- */


int fc__net_create(const fc__profile *p, unsigned model, fc__net **out)
{
    *out = NULL;
    if (!fc__model_usable(p, model)) {
        /* Copied first: fc__err must not read the buffer it writes. */
        char why[256];
        snprintf(why, sizeof why, "%s", fc_errmsg());
        return fc__err(FC_EINVAL, "model %s: %s", fc__model_name(model), why);
    }
    fc__net *n = calloc(1, sizeof *n);
    aux *a = calloc(1, sizeof *a);
    if (n == NULL || a == NULL) {
        free(n);
        free(a);
        return fc__err(FC_ENOMEM, "model: out of memory creating a simulation");
    }
    n->p = p;
    n->model = model;
    n->a = a;
    *out = n;
    return 0;
}

void fc__net_free(fc__net *n)
{
    if (n == NULL)
        return;
    aux *a = n->a;
    free(a->look.buf);
    free(a->idx);
    free(a->src);
    free(a->dst);
    free(a->lab);
    free(a->frozen);
    free(a->cout);
    free(a->cin);
    free(a->res);
    free(a->rlist);
    free(a->bucket);
    fc__label_scratch_free(&a->lsc);
    free(a->cset);
    free(a);
    free(n->s.buf);
    free(n->dir);
    free(n->hkey);
    free(n->hval);
    free(n);
}

double fc__net_now(const fc__net *n)
{
    return n->s.now;
}

/* realloc of *p to cap elements of size sz, leaving *p alone on failure. */
static int resize(void *pp, size_t cap, size_t sz)
{
    void **p = pp;
    void *nv = realloc(*p, cap * sz);
    if (nv == NULL)
        return FC_ENOMEM;
    *p = nv;
    return 0;
}

/* resize for a state's buf, which keeps its messages where they are: v follows it. */
static int resize_buf(state *s, size_t cap)
{
    if (resize(&s->buf, cap, sizeof(msg)))
        return FC_ENOMEM;
    s->v = s->buf + s->head;
    return 0;
}

/* Room for one more message in the per-message scratch, and in the state's buf after its last
 * message (so that both states have that room: a copy into look starts at its buf's start).
 * With no room there, the messages go back to the start of buf when the room the ones that left
 * the front freed is a quarter of it or more, which costs one move of them for that many
 * removals; else buf doubles. */
static int reserve_msgs(fc__net *n)
{
    aux *a = n->a;
    state *s = &n->s;
    if (s->n >= a->mcap) {
        size_t cap = a->mcap ? 2 * a->mcap : 16;
        if (resize(&a->idx, cap, sizeof(size_t)) || resize(&a->src, cap, sizeof(uint32_t)) ||
            resize(&a->dst, cap, sizeof(uint32_t)) || resize(&a->lab, cap, sizeof(fc__label)) ||
            resize(&a->frozen, cap, 1) || resize(&a->rlist, 2 * cap, sizeof(size_t)) ||
            resize(&a->bucket, 2 * cap, sizeof(size_t)))
            return FC_ENOMEM;
        a->mcap = cap;
    }
    if (2 * a->mcap > a->ccap) {
        size_t cap = a->ccap ? a->ccap : 32;
        while (cap < 2 * a->mcap)
            cap *= 2;
        uint64_t *c = calloc(cap, sizeof *c); /* empty between re-solves: nothing to carry over */
        if (c == NULL)
            return FC_ENOMEM;
        free(a->cset);
        a->cset = c;
        a->ccap = cap;
    }
    if (s->head + s->n < a->vcap)
        return 0;
    if (s->head > 0 && s->head >= a->vcap / 4) {
        memmove(s->buf, s->v, s->n * sizeof *s->v);
        s->head = 0;
        s->v = s->buf;
        return 0;
    }
    size_t cap = a->vcap ? 2 * a->vcap : 16;
    if (resize_buf(s, cap) || resize_buf(&a->look, cap))
        return FC_ENOMEM;
    a->vcap = cap;
    return 0;
}

static size_t hash_u32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* Node numbers below this index fc__net.dir directly (16 bits: a table of 256 KiB at most). */
#define NODE_DIRECT 65536u

/* Room in the per-node scratch for one more node. */
static int reserve_nodes(fc__net *n)
{
    aux *a = n->a;
    if (n->nnodes < a->ncap)
        return 0;
    size_t cap = a->ncap ? 2 * a->ncap : 16;
    if (resize(&a->cout, cap, sizeof(uint32_t)) || resize(&a->cin, cap, sizeof(uint32_t)) ||
        resize(&a->res, 2 * cap, sizeof(nicdir)))
        return FC_ENOMEM;
    a->ncap = cap;
    return 0;
}

/* node_index for a node number not in fc__net.dir: a new small one, or any large one. */
static int node_index_slow(fc__net *n, uint32_t node, uint32_t *out)
{
    if (node < NODE_DIRECT) {
        if (node >= n->dcap) {
            size_t cap = n->dcap ? n->dcap : 64;
            while (cap <= node)
                cap *= 2;
            if (resize(&n->dir, cap, sizeof(uint32_t)))
                return FC_ENOMEM;
            memset(n->dir + n->dcap, 0, (cap - n->dcap) * sizeof(uint32_t));
            n->dcap = cap;
        }
        if (reserve_nodes(n))
            return FC_ENOMEM;
        n->dir[node] = (uint32_t)++n->nnodes;
        *out = n->dir[node] - 1;
        return 0;
    }
    if (2 * (n->nhash + 1) > n->hcap) {
        size_t cap = n->hcap ? 2 * n->hcap : 16;
        uint32_t *k = calloc(cap, sizeof *k), *v = calloc(cap, sizeof *v);
        if (k == NULL || v == NULL) {
            free(k);
            free(v);
            return FC_ENOMEM;
        }
        for (size_t i = 0; i < n->hcap; i++) {
            if (n->hval[i] == 0)
                continue;
            size_t h = hash_u32(n->hkey[i]) & (cap - 1);
            while (v[h])
                h = (h + 1) & (cap - 1);
            k[h] = n->hkey[i];
            v[h] = n->hval[i];
        }
        free(n->hkey);
        free(n->hval);
        n->hkey = k;
        n->hval = v;
        n->hcap = cap;
    }
    size_t h = hash_u32(node) & (n->hcap - 1);
    while (n->hval[h] && n->hkey[h] != node)
        h = (h + 1) & (n->hcap - 1);
    if (n->hval[h]) {
        *out = n->hval[h] - 1;
        return 0;
    }
    if (reserve_nodes(n))
        return FC_ENOMEM;
    n->hkey[h] = node;
    n->hval[h] = (uint32_t)++n->nnodes;
    n->nhash++;
    *out = n->hval[h] - 1;
    return 0;
}

/* The dense index of the caller's node number, adding it (and growing the per-node scratch)
 * when it is new. Every start asks for two, nearly always small numbers seen before: that case
 * is the table look-up alone, inline. */
static inline int node_index(fc__net *n, uint32_t node, uint32_t *out)
{
    if (node < n->dcap && n->dir[node]) {
        *out = n->dir[node] - 1;
        return 0;
    }
    return node_index_slow(n, node, out);
}

/* Copies the state, which has no completed message, into look for a run ahead of it; its next
 * event times stay good for the copy. */
static void copy_to_look(const fc__net *n)
{
    state *l = &n->a->look;
    l->now = n->s.now;
    l->n = n->s.n;
    l->ndone = 0;
    l->known = n->s.known;
    l->elat = n->s.elat;
    l->efin = n->s.efin;
    l->head = 0;
    l->v = l->buf;
    if (n->s.n)
        memcpy(l->v, n->s.v, n->s.n * sizeof *n->s.v);
}

double fc__net_next(const fc__net *n)
{
    aux *a = n->a;
    if (a->err)
        return NAN;
    if (n->s.ndone > 0)
        return n->s.now; /* completed messages wait for fc__net_pop at the time they ended */
    if (a->valid)
        return a->next;
    copy_to_look(n);
    int rc = run(n, a, &a->look, INFINITY, 0);
    if (rc) {
        a->err = rc;
        return NAN;
    }
    a->next = a->look.ndone ? a->look.now : INFINITY;
    a->valid = 1;
    return a->next;
}

/* Makes the copy in look, run ahead from the state (a look-ahead or fc__net_start's trial run),
 * the state; the old state's array becomes the next copy's. */
static void adopt_look(fc__net *n)
{
    state tmp = n->s;
    n->s = n->a->look;
    n->a->look = tmp;
}

int fc__net_start(fc__net *n, double t, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t key)
{
    return fc__net_start_conn(n, t, src, dst, 0, bytes, key);
}

int fc__net_start_conn(fc__net *n, double t, uint32_t src, uint32_t dst, uint64_t conn, uint64_t bytes,
                       uint64_t key)
{
    aux *a = n->a;
    if (a->err)
        return a->err;
    if (!(t >= n->s.now) || !isfinite(t))
        return fc__err(FC_EINVAL, "model: message %" PRIu64 " starts at %.9g s, before the "
                                  "simulation's time %.9g s", key, t, n->s.now);
    msg m = {.key = key, .conn = conn, .src = src, .dst = dst, .intra = src == dst, .phase = PH_LAT};
    int rc = reserve_msgs(n);
    if (rc == 0)
        rc = node_index(n, src, &m.isrc);
    if (rc == 0 && dst == src)
        m.idst = m.isrc;
    else if (rc == 0)
        rc = node_index(n, dst, &m.idst);
    if (rc)
        return fc__err(rc, "model: out of memory starting message %" PRIu64, key);
    /* Up to t first: latency phases ending before t change the rates before the message joins.
     * Nothing is pending at the current time, so t == now needs no run. A valid look-ahead says
     * whether t is too late; without one, the run goes on a copy that is kept only if no
     * completion comes before t, which costs no more than the run itself and leaves the state
     * untouched when the start is refused. */
    if (t > n->s.now) {
        if (a->valid || n->s.ndone > 0) {
            if (!(t <= fc__net_next(n)))
                goto late;
            rc = run(n, a, &n->s, t, 0);
        } else {
            copy_to_look(n);
            rc = run(n, a, &a->look, t, 1);
            if (rc == RUN_LATE)
                goto late;
            adopt_look(n);
        }
        if (rc)
            goto out;
    }
    a->valid = 0;
    double lat;
    msg_times(n, m.intra, bytes, &lat, &m.work);
    m.lat_end = t + lat;
    m.fin = INFINITY;
    /* After every message with a key <= key: equal keys leave in the order they started. Keys
     * mostly arrive in increasing order, so the place is looked for from the end: the last
     * message first, then steps back of 1, 2, 4... and a binary search in the last step. */
    state *s = &n->s;
    size_t lo = s->n;
    if (lo > 0 && s->v[lo - 1].key > key) {
        size_t hi = lo - 1, step = 1; /* v[hi].key > key */
        while (step <= hi && s->v[hi - step].key > key) {
            hi -= step;
            step *= 2;
        }
        lo = step <= hi ? hi - step + 1 : 0; /* every key before lo is <= key */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s->v[mid].key <= key)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    /* The messages before it move one place towards the front of buf when there are fewer of
     * them and room there, else those after it one towards the end (reserve_msgs left room
     * there, and adopt_look's copy has it too). */
    if (s->head > 0 && (lo < s->n - lo || s->head + s->n == n->a->vcap)) {
        memmove(s->v - 1, s->v, lo * sizeof m);
        s->v--;
        s->head--;
    } else if (lo < s->n) {
        memmove(&s->v[lo + 1], &s->v[lo], (s->n - lo) * sizeof m);
    }
    s->v[lo] = m;
    s->n++;
    /* The new latency end joins the next event times. Equal zeros may differ in sign, and a scan
     * keeps the first in key order, so such a tie is left to one. */
    if (m.lat_end < n->s.elat)
        n->s.elat = m.lat_end;
    else if (m.lat_end == n->s.elat && m.lat_end == 0)
        n->s.known = 0;
    /* A message without latency starts moving data, and may change the rates, at once. */
    rc = run(n, a, &n->s, t, 0);
out:
    if (rc)
        a->err = rc;
    return rc;
late:
    return fc__err(FC_EINVAL, "model: message %" PRIu64 " starts at %.9g s, after the next "
                              "completion at %.9g s (pop it first)", key, t, fc__net_next(n));
}

/* Removes the first completed message of the state (there is one), storing its time and key. */
static void take_done(fc__net *n, double *t, uint64_t *key)
{
    state *s = &n->s;
    size_t i = 0;
    n->a->valid = 0; /* the state changes */
    while (s->v[i].phase != PH_DONE)
        i++;
    *t = s->v[i].fin;
    *key = s->v[i].key;
    /* The first completed message is usually near the front: the messages before it move up
     * one place when they are fewer than those after it. */
    if (i < s->n - 1 - i) {
        if (i > 0)
            memmove(s->v + 1, s->v, i * sizeof *s->v);
        s->v++;
        s->head++;
    } else if (i + 1 < s->n) {
        memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof *s->v);
    }
    s->n--;
    s->ndone--;
}

int fc__net_pop(fc__net *n, double *t, uint64_t *key)
{
    aux *a = n->a;
    if (n->s.ndone == 0) {
        double next = fc__net_next(n);
        if (isnan(next))
            return a->err;
        if (isinf(next))
            return 0;
        adopt_look(n);
    }
    take_done(n, t, key);
    return 1;
}

int fc__net_cancel(fc__net *n, uint64_t key)
{
    aux *a = n->a;
    state *s = &n->s;
    if (a->err)
        return a->err;
    if (s->ndone > 0)
        return fc__err(FC_EINVAL, "model: cannot cancel message %" PRIu64 " before the completions "
                                  "waiting at %.9g s are taken", key, s->now);
    size_t i = 0;
    while (i < s->n && s->v[i].key != key)
        i++;
    if (i == s->n)
        return 0;
    memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof *s->v);
    s->n--;
    a->valid = 0;
    /* The others' rates change now: a step of no length lists them, and the re-solve sets them. */
    int rc = solve(n, a, s, step(n, a, s, s->now));
    if (rc)
        a->err = rc;
    return rc ? rc : 1;
}

/* Runs the state to until in run()'s mode (RUN_TO_DONE or RUN_EVENTS), unless a completion is
 * waiting already; a look-ahead that reaches a completion by until is adopted instead, since it
 * is this very run. Returns 0 or the failure, which stops the simulation. */
static int run_state(fc__net *n, double until, int mode)
{
    aux *a = n->a;
    if (n->s.ndone > 0)
        return 0;
    if (a->valid && a->next <= until)
        adopt_look(n);
    else if ((a->err = run(n, a, &n->s, until, mode)) != 0)
        return a->err;
    a->valid = 0;
    return 0;
}

/* The state goes through the same events, in the same order, with the same re-solves, as
 * fc__net_next's look-ahead followed by fc__net_pop or by fc__net_start's run to its time, so the
 * figures are the same; but on the state itself, once: the look-ahead runs to the first
 * completion, usually well after the next start, and is thrown away at that start, after which
 * the state runs again through the latency ends the look-ahead had already solved. */
int fc__net_advance(fc__net *n, double until, double *t, uint64_t *key)
{
    aux *a = n->a;
    if (a->err)
        return a->err;
    if (isnan(until) || until < n->s.now)
        return fc__err(FC_EINVAL, "model: cannot advance to %.9g s, before the simulation's time %.9g s", until,
                       n->s.now);
    int rc = run_state(n, until, RUN_TO_DONE);
    if (rc || n->s.ndone == 0)
        return rc;
    take_done(n, t, key);
    return 1;
}

/* The state runs through the events a look-ahead would, in the same order (fc__net_advance), but
 * its clock is left at the last of them: fc__net_next and fc__net_pop move it only to a
 * completion, and fc__net_start to its own time, and moving it anywhere else would round the work
 * left differently (two subtractions instead of one). */
int fc__net_settle(fc__net *n, double until, double *t, uint64_t *key)
{
    aux *a = n->a;
    if (a->err)
        return a->err;
    if (isnan(until))
        return fc__err(FC_EINVAL, "model: cannot settle the simulation up to NAN");
    /* An until before the clock runs nothing and returns 0: a replayed rank released from a wait
     * that never ended may run at a time the simulation has passed, with nothing in flight. */
    int rc = run_state(n, until, RUN_EVENTS);
    if (rc || n->s.ndone == 0 || !(n->s.now < until || until == INFINITY))
        return rc;
    take_done(n, t, key);
    return 1;
}
