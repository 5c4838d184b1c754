/* tests/unit/test-model-profile.c: the platform profile's text format (round trip, versions,
 * bad input) and its time and flow-cut lookups against hand-computed values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <flowcut/error.h>
#include <flowcut/reader.h>
#include "match/flow.h"
#include "model/profile.h"

static char path[256];

static int setup(void **state)
{
    snprintf(path, sizeof path, "%s/fc-profile-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int teardown(void **state)
{
    unlink(path);
    return 0;
}

static void put(const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Writes p as a profile file, checks that the text holds each of the NULL-ended strings, and
 * reads the file back: the profile read, for the caller to free. */
static fc__profile *rewrite(const fc__profile *p, ...)
{
    char *t = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&t, &n);
    assert_non_null(m);
    assert_int_equal(fc__profile_write(m, p), 0);
    fclose(m);
    va_list ap;
    va_start(ap, p);
    for (const char *want = va_arg(ap, const char *); want != NULL; want = va_arg(ap, const char *))
        if (strstr(t, want) == NULL)
            fail_msg("no \"%s\" in the written profile:\n%s", want, t);
    va_end(ap);
    put(t);
    free(t);
    fc__profile *r = NULL;
    assert_int_equal(fc__profile_read(path, &r), 0);
    return r;
}

/* A profile written by hand, as a user would: two inter segments, one intra, cuts, max-rate, and
 * the IMB model of minor version 1. */
static const char *hand =
    "# a comment before the first record\n"
    "flowcut-profile 1.1\n"
    "source calibrate\n"
    "nodes 4\n"
    "ranks-per-node 2\n"
    "mpi \"MPICH Version: 4.0.2 \\\"quoted\\\" \\\\ back\"\n"
    "date 2024-05-01T12:00:00Z\n"
    "network \"emulated 200mbit full duplex\"\n"
    "eps-target 0.03\n"
    "eager-threshold 65536\n"
    "\n"
    "inter 0 65536 1e-4 4e-8 0.01\n"
    "inter 65536 inf 3e-4 4.2e-8 0.02\n"
    "intra 0 inf 2e-6 1e-10 0.01\n"
    "cut outgoing 2 0.02 1.0 0.9\n"
    "cut outgoing 4 0.02 3.0 3.2 3.0 3.2\n"
    "cut incoming 2 0.02 1.0 1.0\n"
    "cut mixed-in 2 0.01 0.25\n"
    "cut mixed-out 2 0.01 0.5\n"
    "maxrate 1e-4 25000000 12500000 12500000 0.05\n"
    "imb 131072 25000000 5e-5 4194304 100 0.03\n";

static void test_lookups(void **state)
{
    put(hand);
    fc__profile *p = NULL;
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_non_null(p);
    assert_int_equal(p->version, 1);
    assert_string_equal(p->source, "calibrate");
    assert_string_equal(p->mpi, "MPICH Version: 4.0.2 \"quoted\" \\ back");
    assert_string_equal(p->network, "emulated 200mbit full duplex");
    assert_int_equal(p->nodes, 4);
    assert_int_equal(p->ranks_per_node, 2);
    assert_int_equal(p->eager_threshold, 65536);
    assert_int_equal(p->ninter, 2);
    assert_true(p->inter[1].hi == UINT64_MAX);

    /* 1000 bytes: 1e-4 + 1000 * 4e-8 = 1.4e-4 s. */
    assert_float_equal(fc__profile_time(p, 0, 1000), 1.4e-4, 1e-15);
    /* 65535 is still in the first segment: 1e-4 + 65535 * 4e-8 = 0.0027214. */
    assert_float_equal(fc__profile_time(p, 0, 65535), 0.0027214, 1e-12);
    /* 65536 in the second: 3e-4 + 65536 * 4.2e-8 = 0.0030525120. */
    assert_float_equal(fc__profile_time(p, 0, 65536), 0.003052512, 1e-12);
    /* 1 MiB intra: 2e-6 + 1048576 * 1e-10 = 1.06857600e-4. */
    assert_float_equal(fc__profile_time(p, 1, 1048576), 1.068576e-4, 1e-15);
    assert_ptr_equal(fc__profile_segment(p, 0, 70000), &p->inter[1]);
    assert_ptr_equal(fc__profile_segment(p, 0, 0), &p->inter[0]);

    /* Exact entries, cyclic index for the mixed ones' single value. */
    assert_float_equal(fc__profile_alpha(p, FC_CONFLICT_OUTGOING, 2, 1), 0.9, 1e-12);
    assert_float_equal(fc__profile_alpha(p, FC_CONFLICT_OUTGOING, 4, 3), 3.2, 1e-12);
    assert_float_equal(fc__profile_alpha(p, FC_CONFLICT_MIXED_OUT, 2, 0), 0.5, 1e-12);
    assert_float_equal(fc__profile_alpha(p, FC_CONFLICT_MIXED_IN, 2, 1), 0.25, 1e-12);
    /* Incoming k = 3 is missing: nearest measured k' = 2, scaled by (3-1)/(2-1): 1.0 * 2 = 2. */
    assert_float_equal(fc__profile_alpha(p, FC_CONFLICT_INCOMING, 3, 2), 2.0, 1e-12);
    /* Outgoing k = 3 is as near to 2 as to 4: the tie goes to k' = 4, scaled by 2/3: flow 0 takes
     * alpha_0 = 3.0 -> 2.0; flow 1 takes 3.2 -> 2.1333... */
    assert_float_equal(fc__profile_alpha(p, FC_CONFLICT_OUTGOING, 3, 0), 2.0, 1e-12);
    assert_float_equal(fc__profile_alpha(p, FC_CONFLICT_OUTGOING, 3, 1), 3.2 * 2.0 / 3.0, 1e-12);
    /* Outgoing k = 8: nearest 4, scaled by 7/3: 3.0 * 7/3 = 7. */
    assert_float_equal(fc__profile_alpha(p, FC_CONFLICT_OUTGOING, 8, 0), 7.0, 1e-12);
    /* A flow alone is not cut; a kind absent from the profile is negative. */
    assert_float_equal(fc__profile_alpha(p, FC_CONFLICT_NONE, 1, 0), 0.0, 0);
    fc__profile *q = fc__profile_new();
    assert_true(fc__profile_alpha(q, FC_CONFLICT_OUTGOING, 2, 0) < 0);
    assert_true(fc__profile_time(q, 0, 10) < 0);
    assert_null(fc__profile_segment(q, 0, 10));
    /* No intra segments: the inter ones stand in. */
    assert_int_equal(fc__profile_add_segment(q, 0, 0, UINT64_MAX, 1e-3, 1e-6, 0), 0);
    assert_float_equal(fc__profile_time(q, 1, 1000), 2e-3, 1e-15);
    fc__profile_free(q);
    assert_int_equal(p->has_maxrate, 1);
    assert_float_equal(p->maxrate.r_nic, 25e6, 0);
    fc__profile_free(p);
    fc__profile_free(NULL);
}

/* Written, read back and written again: the same figures and the same text. */
static void test_round_trip(void **state)
{
    put(hand);
    fc__profile *p = NULL, *r = NULL;
    assert_int_equal(fc__profile_read(path, &p), 0);
    char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    FILE *m = open_memstream(&t1, &n1);
    assert_int_equal(fc__profile_write_notes(m, p, "two lines\nof notes"), 0);
    fclose(m);
    put(t1);
    assert_int_equal(fc__profile_read(path, &r), 0);
    assert_int_equal(r->ninter, p->ninter);
    assert_int_equal(r->nintra, p->nintra);
    for (size_t i = 0; i < p->ninter; i++) {
        assert_true(r->inter[i].lo == p->inter[i].lo && r->inter[i].hi == p->inter[i].hi);
        assert_float_equal(r->inter[i].latency, p->inter[i].latency, 1e-9 * p->inter[i].latency);
        assert_float_equal(r->inter[i].per_byte, p->inter[i].per_byte, 1e-9 * p->inter[i].per_byte);
    }
    assert_int_equal(r->ncuts, 5);
    for (size_t i = 0; i < p->ncuts; i++) {
        assert_int_equal(r->cuts[i].kind, p->cuts[i].kind);
        assert_int_equal(r->cuts[i].k, p->cuts[i].k);
        assert_int_equal(r->cuts[i].nalpha, p->cuts[i].nalpha);
        for (size_t j = 0; j < p->cuts[i].nalpha; j++)
            assert_float_equal(r->cuts[i].alpha[j], p->cuts[i].alpha[j], 1e-9);
    }
    assert_string_equal(r->mpi, p->mpi);
    assert_string_equal(r->date, p->date);
    assert_float_equal(r->maxrate.r_core_incr, 12.5e6, 1e-3);
    assert_int_equal(r->has_imb, 1);
    assert_float_equal(r->imb_chunk, 131072, 0);
    assert_float_equal(r->imb_bandwidth, 25e6, 0);
    assert_float_equal(r->imb_latency, 5e-5, 1e-15);
    assert_float_equal(r->imb_overall_vol, 4194304, 0);
    assert_float_equal(r->imb_msgs_per_sample, 100, 0);
    m = open_memstream(&t2, &n2);
    assert_int_equal(fc__profile_write_notes(m, r, "two lines\nof notes"), 0);
    fclose(m);
    assert_string_equal(t1, t2);
    assert_non_null(strstr(t1, "\n# two lines\n# of notes\n"));
    free(t1);
    free(t2);
    fc__profile_free(p);
    fc__profile_free(r);
}

/* Reads text that must fail with code, and checks the message names the line. */
static void expect_fail(const char *text, int code, const char *needle)
{
    put(text);
    fc__profile *p = (fc__profile *)1;
    int rc = fc__profile_read(path, &p);
    if (rc != code)
        fail_msg("expected %d, got %d (%s) for:\n%s", code, rc, fc_errmsg(), text);
    assert_null(p);
    if (strstr(fc_errmsg(), needle) == NULL)
        fail_msg("message '%s' lacks '%s'", fc_errmsg(), needle);
}

static void test_bad_input(void **state)
{
    expect_fail("flowcut-profile 1.0\nnodes 4\nbogus 1\n", FC_ECORRUPT, "line 3: unknown key 'bogus'");
    expect_fail("flowcut-profile 1.0\nnodes four\n", FC_ECORRUPT, "line 2");
    expect_fail("flowcut-profile 1.0\nnodes 4\nnodes 4\n", FC_ECORRUPT, "line 3: 'nodes' given twice");
    expect_fail("flowcut-profile 2.0\n", FC_EVERSION, "line 1");
    expect_fail("nodes 4\n", FC_ECORRUPT, "line 1");
    expect_fail("", FC_ECORRUPT, "empty");
    expect_fail("flowcut-profile 1.0\ninter 0 100 1e-4 1e-8 0\ninter 200 inf 1e-4 1e-8 0\n", FC_ECORRUPT,
                "line 3: segments must be contiguous");
    expect_fail("flowcut-profile 1.0\ninter 0 100 1e-4 1e-8 0\n", FC_ECORRUPT, "must end at inf");
    expect_fail("flowcut-profile 1.0\ninter 10 inf 1e-4 1e-8 0\n", FC_ECORRUPT, "line 2: the first segment");
    expect_fail("flowcut-profile 1.0\ninter 0 inf -1e-4 1e-8 0\n", FC_ECORRUPT, "line 2");
    expect_fail("flowcut-profile 1.0\ninter 0 inf nan 1e-8 0\n", FC_ECORRUPT, "line 2");
    expect_fail("flowcut-profile 1.0\ncut outgoing 2 0 1.0\n", FC_ECORRUPT, "line 2: cut outgoing 2 needs 2");
    expect_fail("flowcut-profile 1.0\ncut mixed-in 3 0 1.0\n", FC_ECORRUPT, "line 2");
    expect_fail("flowcut-profile 1.0\ncut sideways 2 0 1 1\n", FC_ECORRUPT, "line 2: unknown conflict kind");
    expect_fail("flowcut-profile 1.0\ncut incoming 2 0 1 1\ncut incoming 2 0 1 1\n", FC_ECORRUPT, "line 3");
    expect_fail("flowcut-profile 1.0\nmpi \"unterminated\n", FC_ECORRUPT, "line 2");
    expect_fail("flowcut-profile 1.0\nmaxrate 1 2 3\n", FC_ECORRUPT, "line 2: 'maxrate' takes 5 fields");
    unlink(path);
    fc__profile *p = (fc__profile *)1;
    assert_int_equal(fc__profile_read(path, &p), FC_EIO);
    assert_null(p);
    assert_non_null(strstr(fc_errmsg(), path));
}

/* The late joiner's record of minor version 2: read, written back the same, and absent from the
 * hand-written 1.1 profile, which loads as before without it. */
static void test_latejoin(void **state)
{
    put(hand);
    fc__profile *p = NULL, *r = NULL;
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(p->has_latejoin, 0);
    fc__profile_free(p);
    put("flowcut-profile 1.2\ninter 0 inf 1e-4 1e-8 0\nlate-joiner 0.375 8 0.05\n");
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(p->has_latejoin, 1);
    assert_float_equal(p->latejoin_g, 0.375, 0);
    assert_int_equal(p->latejoin_kmax, 8);
    assert_float_equal(p->latejoin_eps, 0.05, 0);
    r = rewrite(p, "\nlate-joiner 0.375 8 0.05\n", NULL);
    assert_int_equal(r->has_latejoin, 1);
    assert_float_equal(r->latejoin_g, 0.375, 0);
    fc__profile_free(p);
    fc__profile_free(r);
    expect_fail("flowcut-profile 1.2\nlate-joiner -1 8 0\n", FC_ECORRUPT, "line 2");
    expect_fail("flowcut-profile 1.2\nlate-joiner 0.5 8\n", FC_ECORRUPT, "line 2: 'late-joiner' takes 3 fields");
}

/* The connection record of minor version 3: read, written back the same, absent from older
 * profiles; its order is one of two words and its share lies in [0, 1]. */
static void test_connection(void **state)
{
    put(hand);
    fc__profile *p = NULL, *r = NULL;
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(p->has_conn, 0);
    fc__profile_free(p);
    put("flowcut-profile 1.3\ninter 0 inf 1e-4 1e-8 0\nconnection serial 0.875 0.05\n");
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(p->has_conn, 1);
    assert_int_equal(p->conn_serial, 1);
    assert_float_equal(p->conn_wait, 0.875, 0);
    assert_float_equal(p->conn_eps, 0.05, 0);
    r = rewrite(p, "\nconnection serial 0.875 0.05\n", NULL);
    assert_int_equal(r->has_conn, 1);
    assert_int_equal(r->conn_serial, 1);
    fc__profile_free(p);
    fc__profile_free(r);
    put("flowcut-profile 1.3\nconnection parallel 0 0\n");
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(p->has_conn, 1);
    assert_int_equal(p->conn_serial, 0);
    fc__profile_free(p);
    expect_fail("flowcut-profile 1.3\nconnection sideways 0.5 0\n", FC_ECORRUPT, "line 2: connection: ORDER");
    expect_fail("flowcut-profile 1.3\nconnection serial 1.5 0\n", FC_ECORRUPT, "line 2: connection: WAIT");
    expect_fail("flowcut-profile 1.3\nconnection serial 0.5\n", FC_ECORRUPT, "line 2: 'connection' takes 3 fields");
}

/* The connection-ends record of minor version 5: read, written back the same, absent from older
 * profiles; with connection serial, a SHARE of 1/2 or more makes the connection's messages move
 * side by side and end in order, less leaves them one after the other; SHARE lies in [0, 1]. */
static void test_connection_ends(void **state)
{
    put("flowcut-profile 1.4\ninter 0 inf 1e-4 1e-8 0\nconnection serial 0.75 0.01\n");
    fc__profile *p = NULL, *r = NULL;
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(p->has_conn_ends, 0);
    assert_int_equal(fc__profile_conn_ordered(p), 0);
    assert_int_equal(fc__profile_conn_one_at_a_time(p), 1);
    fc__profile_free(p);
    put("flowcut-profile 1.5\ninter 0 inf 1e-4 1e-8 0\nconnection serial 0.75 0.01\nconnection-ends 0.625 0.02\n");
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(p->has_conn_ends, 1);
    assert_float_equal(p->conn_ends, 0.625, 0);
    assert_float_equal(p->conn_ends_eps, 0.02, 0);
    assert_int_equal(fc__profile_conn_ordered(p), 1);
    assert_int_equal(fc__profile_conn_one_at_a_time(p), 0);
    r = rewrite(p, "flowcut-profile 1.5\n", "\nconnection-ends 0.625 0.02\n", NULL);
    assert_int_equal(r->has_conn_ends, 1);
    assert_float_equal(r->conn_ends, 0.625, 0);
    fc__profile_free(p);
    fc__profile_free(r);
    /* Below 1/2 the serial connection stands; a parallel one is never ordered. */
    put("flowcut-profile 1.5\nconnection serial 0.75 0.01\nconnection-ends 0.25 0\n");
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(fc__profile_conn_ordered(p), 0);
    assert_int_equal(fc__profile_conn_one_at_a_time(p), 1);
    fc__profile_free(p);
    put("flowcut-profile 1.5\nconnection parallel 0.1 0.01\nconnection-ends 1 0\n");
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(fc__profile_conn_ordered(p), 0);
    assert_int_equal(fc__profile_conn_one_at_a_time(p), 0);
    fc__profile_free(p);
    expect_fail("flowcut-profile 1.5\nconnection-ends 1.5 0\n", FC_ECORRUPT, "line 2: connection-ends: SHARE");
    expect_fail("flowcut-profile 1.5\nconnection-ends 0.5\n", FC_ECORRUPT,
                "line 2: 'connection-ends' takes 2 fields");
}

/* The opposite record of minor version 4: read, written back the same, absent from older
 * profiles; the delay between measured k is interpolated by hand here: 0 at k = 0, then the
 * lines through (1, 3) and (4, 15) for D_IN, (1, 1) and (4, 3) for D_OUT, the last value beyond
 * k = 4. */
static void test_opposite(void **state)
{
    put(hand);
    fc__profile *p = NULL, *r = NULL;
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(p->nopp, 0);
    assert_float_equal(fc__profile_opposite(p, 0, 3), 0, 0);
    fc__profile_free(p);
    /* Listed out of order: the reader sorts them by k. */
    put("flowcut-profile 1.4\ninter 0 inf 1e-4 1e-8 0\nopposite 4 15 3 0.05\nopposite 1 3 1 0.02\n");
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(p->nopp, 2);
    assert_int_equal(p->opp[0].k, 1);
    assert_int_equal(p->opp[1].k, 4);
    assert_float_equal(p->opp[1].eps, 0.05, 0);
    assert_float_equal(fc__profile_opposite(p, 0, 0), 0, 0);
    assert_float_equal(fc__profile_opposite(p, 0, -1), 0, 0);
    assert_float_equal(fc__profile_opposite(p, 0, 0.5), 1.5, 1e-15);
    assert_float_equal(fc__profile_opposite(p, 0, 1), 3, 0);
    assert_float_equal(fc__profile_opposite(p, 0, 2), 7, 1e-15);   /* 3 + 12 / 3 */
    assert_float_equal(fc__profile_opposite(p, 0, 4), 15, 0);
    assert_float_equal(fc__profile_opposite(p, 0, 9), 15, 0);
    assert_float_equal(fc__profile_opposite(p, 1, 1), 1, 0);
    assert_float_equal(fc__profile_opposite(p, 1, 2.5), 2, 1e-15);  /* 1 + 2 * 1.5 / 3 */
    assert_float_equal(fc__profile_opposite(p, 1, 30), 3, 0);
    r = rewrite(p, "flowcut-profile 1.5\n", "\nopposite 1 3 1 0.02\nopposite 4 15 3 0.05\n", NULL);
    assert_int_equal(r->nopp, 2);
    assert_float_equal(fc__profile_opposite(r, 0, 2), 7, 1e-15);
    fc__profile_free(p);
    fc__profile_free(r);
    expect_fail("flowcut-profile 1.4\nopposite 0 1 1 0\n", FC_ECORRUPT, "line 2: opposite: K");
    expect_fail("flowcut-profile 1.4\nopposite 2 -1 0 0\n", FC_ECORRUPT, "line 2");
    expect_fail("flowcut-profile 1.4\nopposite 2 inf 0 0\n", FC_ECORRUPT, "line 2");
    expect_fail("flowcut-profile 1.4\nopposite 2 1 1\n", FC_ECORRUPT, "line 2: opposite has four fields");
    expect_fail("flowcut-profile 1.4\nopposite 2 1 1 0\nopposite 2 3 1 0\n", FC_ECORRUPT,
                "line 3: a second opposite line");
    /* In a file of this reader's minor, a misspelt key is a mistake. */
    expect_fail("flowcut-profile 1.4\nopposit 2 1 1 0\n", FC_ECORRUPT, "line 2: unknown key 'opposit'");
}

/* A file of a newer minor version may hold keys this reader does not know: they are skipped. */
static void test_newer_minor(void **state)
{
    put("flowcut-profile 1.7\nnodes 3\nfuture-key 1 2 3\ninter 0 inf 1e-4 1e-8 0\n");
    fc__profile *p = NULL;
    assert_int_equal(fc__profile_read(path, &p), 0);
    assert_int_equal(p->nodes, 3);
    assert_int_equal(p->ninter, 1);
    fc__profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lookups, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_minor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_latejoin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connection_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_opposite, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
