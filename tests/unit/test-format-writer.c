/* tests/unit/test-format-writer.c: writer -> reader round trips of every block kind and of events
 * with every field, compressed and stored. */
#include "scratch-trace.h"

static const char *const args[] = {"./app", "-n", "3", ""};

static void write_defs(fc_writer *w, const fc_rank_info *in)
{
    static const fc_frame f1[] = {{0, 0x1234}, {1, 0x99}};
    static const fc_frame f2[] = {{1, 0xabcdef0123}};
    static const fc_module mods[] = {{0, 0x400000, 0x2000, "/usr/bin/app", "00ff"},
                                     {1, 0x7f0000000000, 0x100000, "/lib/libm.so.6", ""}};
    static const fc_site sites[] = {{1, 2, f1}, {2, 1, f2}};
    static const uint32_t world[] = {0, 1, 2, 3}, sub[] = {3, 1}, remote[] = {0, 2};
    static const fc_comm comms[] = {{0, 0, 4, 0, world, NULL, 0},
                                    {2, 0, 2, 0, sub, NULL, 1},
                                    {3, FC_COMMF_INTER | FC_COMMF_LAZY, 2, 2, sub, remote, -1}};
    static const fc_clock clocks[] = {{FC_CLOCK_INIT, 1000, -250, 40, 10, 80},
                                      {FC_CLOCK_FINALIZE, 9000, 750, 60, 12, 120}};
    assert_int_equal(fc_writer_rank(w, in), 0);
    assert_int_equal(fc_writer_modules(w, mods, 2), 0);
    assert_int_equal(fc_writer_sites(w, sites, 2), 0);
    assert_int_equal(fc_writer_comms(w, comms, 3), 0);
    assert_int_equal(fc_writer_clock(w, clocks, 2), 0);
    assert_int_equal(fc_writer_warn(w, "buffer \"full\"\ttwice"), 0);
}

static fc_rank_info full_info(void)
{
    fc_rank_info in;
    memset(&in, 0, sizeof in);
    in.present = 0;
    for (unsigned k = FC_RK_RANK; k <= FC_RK_INIT_MODE; k++)
        in.present |= UINT64_C(1) << k;
    in.rank = 1;
    in.size = 4;
    in.host = "host-a";
    in.node = "node-1";
    in.core = 7;
    in.numa = -1;
    in.mpi_version = "MPICH Version: 4.0.2";
    in.program = "/usr/bin/app";
    in.argc = 4;
    in.argv = args;
    in.start_ns = UINT64_C(1700000000123456789);
    in.pid = 4242;
    in.thread_level = 3;
    in.callsite_depth = 2;
    in.clock_source = "tsc";
    in.affinity = "0-1";
    in.init_mode = FC_INIT_MPI_INIT;
    return in;
}

static void check_defs(const fc_rank *r)
{
    const fc_rank_info *in = &r->info;
    assert_int_equal(in->major, FC_FORMAT_MAJOR);
    assert_int_equal(in->rank, 1);
    assert_int_equal(in->size, 4);
    assert_string_equal(in->host, "host-a");
    assert_string_equal(in->node, "node-1");
    assert_int_equal(in->core, 7);
    assert_int_equal(in->numa, -1);
    assert_string_equal(in->mpi_version, "MPICH Version: 4.0.2");
    assert_string_equal(in->program, "/usr/bin/app");
    assert_int_equal(in->argc, 4);
    for (int i = 0; i < 4; i++)
        assert_string_equal(in->argv[i], args[i]);
    assert_true(in->start_ns == UINT64_C(1700000000123456789));
    assert_int_equal(in->pid, 4242);
    assert_int_equal(in->thread_level, 3);
    assert_int_equal(in->callsite_depth, 2);
    assert_string_equal(in->clock_source, "tsc");
    assert_string_equal(in->affinity, "0-1");
    assert_int_equal(in->init_mode, FC_INIT_MPI_INIT);
    for (unsigned k = FC_RK_RANK; k <= FC_RK_INIT_MODE; k++)
        assert_true(FC_RANK_HAS(in, k));

    assert_int_equal(r->nmodules, 2);
    const fc_module *m = fc_rank_module(r, 1);
    assert_non_null(m);
    assert_string_equal(m->path, "/lib/libm.so.6");
    assert_true(m->base == UINT64_C(0x7f0000000000));
    assert_int_equal(m->size, 0x100000);
    assert_string_equal(m->build_id, "");
    assert_string_equal(fc_rank_module(r, 0)->build_id, "00ff");
    assert_null(fc_rank_module(r, 2));

    const fc_site *s = fc_rank_site(r, 1);
    assert_non_null(s);
    assert_int_equal(s->depth, 2);
    assert_int_equal(s->frames[0].offset, 0x1234);
    assert_int_equal(s->frames[1].module, 1);
    assert_int_equal(s->frames[1].offset, 0x99);
    assert_true(fc_rank_site(r, 2)->frames[0].offset == UINT64_C(0xabcdef0123));
    assert_null(fc_rank_site(r, 0));

    assert_int_equal(r->ncomms, 3);
    const fc_comm *c = fc_rank_comm(r, 3);
    assert_non_null(c);
    assert_int_equal(c->flags, FC_COMMF_INTER | FC_COMMF_LAZY);
    assert_int_equal(c->local_size, 2);
    assert_int_equal(c->remote_size, 2);
    assert_int_equal(c->remote[1], 2);
    assert_int_equal(c->ordinal, -1);
    assert_int_equal(fc_rank_comm(r, 2)->ordinal, 1);
    assert_null(fc_rank_comm(r, 2)->remote);
    assert_null(fc_rank_comm(r, 1));

    assert_int_equal(r->nclocks, 2);
    assert_int_equal(r->clocks[0].offset_ns, -250);
    assert_int_equal(r->clocks[1].local_ns, 9000);
    assert_int_equal(r->clocks[1].uncertainty_ns, 60);
    assert_int_equal(r->clocks[1].samples, 12);
    assert_int_equal(r->clocks[1].min_rtt_ns, 120);
    assert_int_equal(fc_rank_clock_uncertainty(r), 60);

    assert_int_equal(r->nwarnings, 1);
    assert_string_equal(r->warnings[0], "buffer \"full\"\ttwice");
}

/* Events exercising every field, large values, negative specials and repeated values (which the
 * encoder leaves out of the mask). */
static size_t make_events(fc_event *ev)
{
    size_t n = 0;
    ev[n++] = ev_make(FC_EV_MPI_Init, 100, 5000, FC_PEER_NONE, 0, 0, 0, 0);
    ev[n++] = ev_make(FC_EV_MPI_Send, 6000, 6100, 2, 7, 0, 1024, 0);
    ev[n] = ev_make(FC_EV_MPI_Send, 6100, 6100, 2, 7, 0, 1024, 0); /* identical fields */
    ev[n++].site = 1;
    ev[n] = ev_make(FC_EV_MPI_Irecv, 7000, 7010, FC_PEER_ANY, FC_TAG_ANY, 2, UINT64_C(1) << 40,
                    UINT64_C(0xfedcba9876543210));
    ev[n].site = 2;
    ev[n++].flags = FC_EVF_ANY_SOURCE | FC_EVF_ANY_TAG;
    ev[n] = ev_make(FC_EV_MPI_Waitall, 8000, 9000, FC_PEER_NONE, 0, 0, 0, 0);
    ev[n++].bytes2 = 3;
    ev[n] = ev_make(FC_EV_COMPLETE, 9000, 9000, 1, INT64_C(2147483647), 2, 64, UINT64_C(0xfedcba9876543210));
    ev[n++].flags = FC_EVF_STATUS | FC_EVF_ANY_SOURCE;
    ev[n] = ev_make(FC_EV_MPI_Allreduce, 10000, 20000, FC_PEER_NONE, 0, 3, 8, 0);
    ev[n++].bytes2 = 16;
    ev[n++] = ev_make(FC_EV_MPI_Comm_split, 30000, 30500, FC_PEER_NONE, 0, 0, 0, 3);
    ev[n++] = ev_make(FC_EV_MPI_Finalize, UINT64_C(1) << 50, (UINT64_C(1) << 50) + 1, FC_PEER_NONE, 0, 0, 0, 0);
    return n;
}

static void round_trip(unsigned flags)
{
    char dir[4096], path[4200];
    fc_event ev[16];
    size_t n = make_events(ev), got;
    fc_writer *w;
    make_scratch(dir, sizeof dir);
    rank_path(path, sizeof path, dir, 1);
    fc_rank_info in = full_info();
    assert_int_equal(fc_writer_open(path, 1, 4, in.start_ns, 4242, flags, &w), 0);
    write_defs(w, &in);
    /* Two chunks of one thread, split so that the codec restarts mid-sequence. */
    assert_int_equal(fc_writer_events(w, 0, ev, 4), 0);
    assert_int_equal(fc_writer_events(w, 0, ev + 4, n - 4), 0);
    assert_int_equal(fc_writer_end(w, 0, FC_END_FINALIZE, 777, 0), 0);
    assert_int_equal(fc_writer_close(w), 0);

    fc_trace *t;
    assert_int_equal(fc_trace_open(dir, &t), 0);
    assert_int_equal(fc_trace_nranks(t), 1);
    const fc_rank *r = fc_trace_rank(t, 0);
    check_defs(r);
    assert_true(r->has_end);
    assert_false(r->partial);
    assert_int_equal(r->end.events, n);
    assert_int_equal(r->end.reason, FC_END_FINALIZE);
    assert_int_equal(r->end.end_ns, 777);
    assert_int_equal(r->end.warnings, 1);
    assert_int_equal(r->events, n);
    assert_int_equal(r->event_blocks, 2);
    assert_int_equal(r->first_t0, 100);
    assert_int_equal(fc_trace_world_size(t), 4);
    assert_int_equal(fc_trace_missing(t), 3); /* ranks 0, 2, 3 have no file */
    assert_true(fc_trace_partial(t));
    fc_trace_close(t);

    fc_record *rec = read_all(dir, 0, &got);
    assert_int_equal(got, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rec[i].ev.kind, ev[i].kind);
        assert_true(rec[i].ev.t0 == ev[i].t0);
        assert_true(rec[i].ev.t1 == ev[i].t1);
        assert_true(rec[i].ev.peer == ev[i].peer);
        assert_true(rec[i].ev.tag == ev[i].tag);
        assert_true(rec[i].ev.comm == ev[i].comm);
        assert_true(rec[i].ev.bytes == ev[i].bytes);
        assert_true(rec[i].ev.obj == ev[i].obj);
        assert_true(rec[i].ev.site == ev[i].site);
        assert_true(rec[i].ev.flags == ev[i].flags);
        assert_true(rec[i].ev.bytes2 == ev[i].bytes2);
        assert_int_equal(rec[i].rank, 1);
        assert_int_equal(rec[i].ev.thread, 0);
    }
    free(rec);
    rm_scratch(dir);
}

static void test_round_trip_zlib(void **state)
{
    (void)state;
    round_trip(0);
}

static void test_round_trip_stored(void **state)
{
    (void)state;
    round_trip(FC_WRITER_STORED);
}

/* A RANK block with a field of an unknown key, and a single-file open. */
static void test_unknown_rank_field(void **state)
{
    (void)state;
    char dir[4096], path[4200];
    unsigned char p[6 + 3 + 6 + 4];
    fc_writer *w;
    make_scratch(dir, sizeof dir);
    rank_path(path, sizeof path, dir, 0);
    fc_put_u16(p, 999);
    fc_put_u32(p + 2, 3);
    memcpy(p + 6, "xyz", 3);
    fc_put_u16(p + 9, FC_RK_PID);
    fc_put_u32(p + 11, 4);
    fc_put_u32(p + 15, 31337);
    assert_int_equal(fc_writer_open(path, 0, 1, 0, 1, 0, &w), 0);
    assert_int_equal(fc_writer_block(w, FC_BLK_RANK, FC_BLKF_ZLIB, p, sizeof p), 0);
    assert_int_equal(fc_writer_end(w, 0, 0, 0, 0), 0);
    assert_int_equal(fc_writer_close(w), 0);
    fc_trace *t;
    assert_int_equal(fc_trace_open(path, &t), 0);
    const fc_rank *r = fc_trace_rank(t, 0);
    assert_int_equal(r->info.pid, 31337);
    assert_true(FC_RANK_HAS(&r->info, FC_RK_PID));
    assert_false(FC_RANK_HAS(&r->info, FC_RK_HOST));
    assert_string_equal(r->info.host, "");
    assert_int_equal(r->events, 0);
    assert_false(fc_trace_partial(t));
    fc_trace_close(t);
    rm_scratch(dir);
}

/* Writer argument checks. */
static void test_writer_rejects(void **state)
{
    (void)state;
    char dir[4096], path[4200];
    fc_writer *w;
    fc_event ev[2] = {ev_make(FC_EV_MPI_Send, 10, 11, 0, 0, 0, 0, 0), ev_make(FC_EV_MPI_Send, 5, 6, 0, 0, 0, 0, 0)};
    make_scratch(dir, sizeof dir);
    rank_path(path, sizeof path, dir, 0);
    assert_int_equal(fc_writer_open(path, 0, 1, 0, 1, 0x80, &w), FC_EINVAL);
    assert_null(w);
    assert_int_equal(fc_writer_open(path, 0, 1, 0, 1, 0, &w), 0);
    assert_int_equal(fc_writer_events(w, 0, ev, 2), FC_EINVAL); /* time goes back */
    assert_int_equal(fc_writer_events(w, 0, ev, 0), FC_EINVAL);
    assert_int_equal(fc_writer_offset(w), FC_FILE_HEADER_SIZE);
    assert_int_equal(fc_writer_close(w), 0);
    assert_int_equal(fc_writer_close(NULL), 0);
    rm_scratch(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_zlib),
        cmocka_unit_test(test_round_trip_stored),
        cmocka_unit_test(test_unknown_rank_field),
        cmocka_unit_test(test_writer_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
