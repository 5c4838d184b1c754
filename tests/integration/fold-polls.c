/* fold-polls.c: fold-polls TRACE OUTDIR: rewrites a trace recorded with FLOWCUT_FOLD_POLLS=0 as
 * the tracer would have written it with polls folded, by format.h's definition of POLLS alone: in
 * each thread, a run of MPI_Test, MPI_Testany, MPI_Testsome, MPI_Testall, MPI_Iprobe or MPI_Improbe
 * records that found nothing (no FC_EVF_FOUND, no error), alike but for their times and with no
 * other record of the thread between, becomes its first record and a POLLS record with the last
 * one's times, the run's length and the sum of its durations. Everything else is copied. Not a
 * test: test-tracer-polling.sh compares the analysis of the two traces of one run with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/format.h>
#include <flowcut/reader.h>
#include <flowcut/writer.h>

typedef struct stream {
    fc_event *ev;
    size_t n, cap;
    size_t first; /* index of the current run's first record, SIZE_MAX when none */
} stream;

static int is_poll(const fc_event *e)
{
    switch (e->kind) {
    case FC_EV_MPI_Test: case FC_EV_MPI_Testany: case FC_EV_MPI_Testsome: case FC_EV_MPI_Testall:
    case FC_EV_MPI_Iprobe: case FC_EV_MPI_Improbe:
        return !(e->flags & (FC_EVF_FOUND | FC_EVF_ERROR));
    default:
        return 0;
    }
}

static int alike(const fc_event *a, const fc_event *b)
{
    return a->kind == b->kind && a->peer == b->peer && a->tag == b->tag && a->comm == b->comm &&
           a->bytes == b->bytes && a->obj == b->obj && a->site == b->site && a->flags == b->flags &&
           a->bytes2 == b->bytes2;
}

static void push(stream *s, const fc_event *e)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 4096;
        s->ev = realloc(s->ev, s->cap * sizeof *s->ev);
        if (s->ev == NULL) {
            fprintf(stderr, "fold-polls: out of memory\n");
            exit(1);
        }
    }
    s->ev[s->n++] = *e;
}

static void add(stream *s, const fc_event *e)
{
    if (is_poll(e) && s->first != SIZE_MAX && alike(&s->ev[s->first], e)) {
        fc_event *f = &s->ev[s->first];
        if (s->n == s->first + 1) {
            fc_event p = {.kind = FC_EV_POLLS, .t0 = e->t0, .t1 = e->t1, .peer = FC_PEER_NONE,
                          .bytes = 2, .bytes2 = (f->t1 - f->t0) + (e->t1 - e->t0)};
            push(s, &p);
            return;
        }
        if (s->n == s->first + 2) {
            fc_event *p = &s->ev[s->first + 1];
            p->t0 = e->t0;
            p->t1 = e->t1;
            p->bytes++;
            p->bytes2 += e->t1 - e->t0;
            return;
        }
    }
    push(s, e);
    s->first = is_poll(e) ? s->n - 1 : SIZE_MAX;
}

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if ((x) < 0) {                                                                             \
            fprintf(stderr, "fold-polls: %s\n", fc_errmsg());                                      \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    fc_trace *t;
    if (argc != 3) {
        fprintf(stderr, "usage: fold-polls TRACE OUTDIR\n");
        return 2;
    }
    CHECK(fc_trace_open(argv[1], &t));
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        char path[4200];
        snprintf(path, sizeof path, "%s/" FC_TRACE_FILE_FMT, argv[2], (int)r->info.rank);
        fc_writer *w;
        CHECK(fc_writer_open(path, r->info.rank, r->info.size, r->info.start_ns, r->info.pid, 0, &w));
        CHECK(fc_writer_rank(w, &r->info));
        if (r->nmodules)
            CHECK(fc_writer_modules(w, r->modules, r->nmodules));
        if (r->nsites)
            CHECK(fc_writer_sites(w, r->sites, r->nsites));
        if (r->ncomms)
            CHECK(fc_writer_comms(w, r->comms, r->ncomms));
        if (r->nclocks)
            CHECK(fc_writer_clock(w, r->clocks, r->nclocks));
        stream *s = calloc(r->threads ? r->threads : 1, sizeof *s);
        for (uint32_t k = 0; k < r->threads; k++)
            s[k].first = SIZE_MAX;
        fc_cursor *c;
        fc_record rec;
        int rc;
        CHECK(fc_cursor_open(t, i, &c));
        while ((rc = fc_cursor_next(c, &rec)) > 0)
            add(&s[rec.ev.thread], &rec.ev);
        CHECK(rc);
        fc_cursor_close(c);
        for (uint32_t k = 0; k < r->threads; k++) {
            for (size_t j = 0; j < s[k].n; j += 8192)
                CHECK(fc_writer_events(w, k, s[k].ev + j, s[k].n - j < 8192 ? s[k].n - j : 8192));
            free(s[k].ev);
        }
        free(s);
        CHECK(fc_writer_end(w, r->end.flags, r->end.reason, r->end.end_ns, r->end.dropped));
        CHECK(fc_writer_close(w));
    }
    fc_trace_close(t);
    return 0;
}
