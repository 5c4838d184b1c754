/* analyzer/report/csv.c: the CSV document of an analysis, one row per message, written whole or
 * streamed while the trace is matched. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "util/internal.h"
#include "util/numfmt.h"
#include "report/report.h"
#include "conflict/sweep.h"
#include "report/shared.h"

/* ---- CSV --------------------------------------------------------------------------------------- */

/* A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, quote or line break;
 * NULL is an empty field. */
static void csv_str(fc__obuf *o, const char *s)
{
    if (s == NULL)
        return;
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fc__ob_put(o, s, strlen(s));
        return;
    }
    fc__ob_char(o, '"');
    for (; *s; s++) {
        if (*s == '"')
            fc__ob_char(o, '"');
        fc__ob_char(o, *s);
    }
    fc__ob_char(o, '"');
}

/* One CSV row: main is the flow's main label, NULL for an intra-node message (whose conflict
 * fields stay empty: it is outside the conflict model). The rows go through the buffered writer
 * of numfmt.h, as the JSON does; the predictions write to the stream, after a flush. */
static void csv_row(fc__obuf *o, const fc__analysis *a, const fc__match *m, const fc__flow *fl, const fc__label *main)
{
    fc__ob_u64(o, fl->id);
    fc__ob_char(o, ',');
    fc__ob_u64(o, fl->src_rank);
    fc__ob_char(o, ',');
    fc__ob_u64(o, fl->dst_rank);
    fc__ob_char(o, ',');
    csv_str(o, fc__rp_node_name(m, fl->src_node));
    fc__ob_char(o, ',');
    csv_str(o, fc__rp_node_name(m, fl->dst_node));
    fc__ob_char(o, ',');
    fc__ob_u64(o, fl->bytes);
    fc__ob_char(o, ',');
    fc__ob_secs(o, fl->start);
    fc__ob_char(o, ',');
    fc__ob_secs(o, fl->end);
    fc__ob_char(o, ',');
    fc__ob_secs(o, fl->observed);
    fc__ob_put(o, fl->rendezvous ? ",1" : ",0", 2);
    fc__ob_put(o, fl->intra ? ",1," : ",0,", 3);
    if (main != NULL) {
        const char *kn = fc__conflict_name(main->kind);
        fc__ob_put(o, kn, strlen(kn));
        fc__ob_char(o, ',');
        csv_str(o, main->kind == FC_CONFLICT_NONE ? NULL : fc__rp_node_name(m, main->node));
        fc__ob_char(o, ',');
        fc__ob_u64(o, main->k);
        fc__ob_char(o, ',');
    } else {
        FC__OB_LIT(o, ",,,");
    }
    csv_str(o, fc__report_site(a, fl->src_rank, fl->send_site));
    fc__ob_char(o, ',');
    csv_str(o, fc__report_site(a, fl->dst_rank, fl->recv_site));
    if (fl->coll) {
        fc__ob_char(o, ',');
        const char *cn = fc_event_kind_name(fl->coll), *an = fc__coll_alg_name(fl->coll_alg);
        fc__ob_put(o, cn, strlen(cn));
        fc__ob_char(o, ',');
        fc__ob_put(o, an, strlen(an));
        fc__ob_char(o, ',');
        fc__ob_u64(o, fl->coll_step);
    } else
        FC__OB_LIT(o, ",,,");
    if (a->pred != NULL) {
        fc__ob_flush(o);
        fc__report_csv_predicted(o->f, a, fl);
    }
    fc__ob_char(o, '\n');
}

static void csv_header(FILE *f, const fc__analysis *a)
{
    fputs("id,src_rank,dst_rank,src_node,dst_node,bytes,start,end,observed,rendezvous,intra,main_conflict,"
          "main_node,main_k,send_site,recv_site,collective,algorithm,step",
          f);
    fc__report_csv_predicted_header(f, a);
    putc('\n', f);
}

int fc__report_csv(FILE *f, const fc__analysis *a)
{
    const fc__match *m = a->match;
    csv_header(f, a);
    fc__obuf *o = malloc(sizeof *o); /* 64 KiB: not on the stack */
    if (o == NULL)
        return fc__err(FC_ENOMEM, "writing the report: out of memory");
    fc__ob_init(o, f);
    for (size_t i = 0; i < m->nflows; i++) {
        const fc__flow *fl = &m->flows[i];
        fc__label main;
        double cs;
        if (!fl->intra)
            fc__report_flow_main(a, fl->id, &main, &cs);
        csv_row(o, a, m, fl, fl->intra ? NULL : &main);
    }
    fc__ob_flush(o);
    free(o);
    return fc__rp_finish(f);
}

/* ---- CSV, streamed -------------------------------------------------------------------------- */

struct fc__csv_stream {
    FILE *out, *tmp; /* tmp: the intra-node rows, numbered from 0, until the inter-node count is known */
    fc__obuf *ob, *tb; /* the buffers in front of out and tmp */
    fc__analysis a;
    const fc__match *m;
    idorder order; /* the inter-node rows, on their way to out */
};

static int cs_start(void *arg, const fc__match *m)
{
    fc__csv_stream *cs = arg;
    cs->m = cs->a.match = m;
    return 0;
}

static int cs_intra(void *arg, const fc__flow *fl)
{
    fc__csv_stream *cs = arg;
    csv_row(cs->tb, &cs->a, cs->m, fl, NULL);
    return 0;
}

/* Writes the row of inter-node flow fl (the next id). */
static void cs_put_flow(void *arg, const fc__flow *fl, const fc__label_run *runs, size_t nruns)
{
    fc__csv_stream *cs = arg;
    fc__label main;
    double conflict_s;
    fc__runs_main(runs, nruns, &main, &conflict_s);
    csv_row(cs->ob, &cs->a, cs->m, fl, &main);
}

/* A flow has passed its end (sweep.h): its row is written once every lower id has been. */
static int cs_done(void *arg, const fc__flow *fl, const fc__label_run *runs, size_t nruns)
{
    fc__csv_stream *cs = arg;
    return fc__rp_order_flow(&cs->order, fl, runs, nruns);
}

int fc__csv_stream_new(FILE *out, const fc__analysis *a, fc__csv_stream **out_cs)
{
    fc__csv_stream *cs = calloc(1, sizeof *cs);
    *out_cs = NULL;
    if (cs == NULL)
        return fc__err(FC_ENOMEM, "out of memory starting the CSV report");
    cs->out = out;
    cs->a = *a;
    int no_order = fc__rp_order_init(&cs->order, cs_put_flow, cs);
    cs->ob = calloc(1, sizeof *cs->ob); /* empty until initialised: fc__csv_stream_free flushes it */
    cs->tb = calloc(1, sizeof *cs->tb);
    if (no_order || cs->ob == NULL || cs->tb == NULL || (cs->tmp = tmpfile()) == NULL) {
        fc__csv_stream_free(cs);
        return fc__err(FC_ENOMEM, "cannot start the CSV report: out of memory or no temporary file");
    }
    fc__ob_init(cs->ob, out);
    fc__ob_init(cs->tb, cs->tmp);
    csv_header(out, a);
    *out_cs = cs;
    return 0;
}

fc__stream_writer fc__csv_stream_writer(fc__csv_stream *cs)
{
    return (fc__stream_writer){
        .arg = cs, .start = cs_start, .ops = {.arg = cs, .flow_done = cs_done}, .intra = cs_intra};
}

int fc__csv_stream_finish(fc__csv_stream *cs, fc__match *m)
{
    fc__ob_flush(cs->ob);
    fc__ob_flush(cs->tb);
    /* The intra-node rows follow, their ids after the inter-node ones. */
    char buf[65536];
    int at_start = 1;
    if (fflush(cs->tmp) != 0 || ferror(cs->tmp) || fseek(cs->tmp, 0, SEEK_SET) != 0)
        return fc__err(FC_EIO, "the CSV report's temporary file: %s", strerror(errno ? errno : EIO));
    while (fgets(buf, sizeof buf, cs->tmp) != NULL) {
        char *rest = buf;
        if (at_start) {
            uint64_t k = strtoull(buf, &rest, 10);
            fprintf(cs->out, "%" PRIu64, (uint64_t)m->ninter + k);
        }
        fputs(rest, cs->out);
        at_start = strchr(rest, '\n') != NULL; /* a row longer than buf comes in pieces */
    }
    if (ferror(cs->tmp))
        return fc__err(FC_EIO, "the CSV report's temporary file: %s", strerror(errno ? errno : EIO));
    return fc__rp_finish(cs->out);
}

void fc__csv_stream_free(fc__csv_stream *cs)
{
    if (cs == NULL)
        return;
    if (cs->ob != NULL) /* the rows already made are not lost when the analysis stops short */
        fc__ob_flush(cs->ob);
    if (cs->tmp != NULL)
        fclose(cs->tmp);
    fc__rp_order_free(&cs->order);
    free(cs->ob);
    free(cs->tb);
    free(cs);
}
