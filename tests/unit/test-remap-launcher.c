/* tests/unit/test-remap-launcher.c: the launcher formats of `flowcut remap` for mapping B of the
 * report's broadcast (node0 {0,3}, node1 {2,5}, node2 {4,7}, node3 {6,1}), against expected files
 * written by hand in remap-expected/ from each launcher's documentation. */
#include <stdio.h>
#include "scratch-trace.h"
#include "remap/remap.h"

static char *slurp(const char *name)
{
    char path[4200];
    const char *src = getenv("srcdir") ? getenv("srcdir") : ".";
    snprintf(path, sizeof path, "%s/remap-expected/%s", src, name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    char *buf = calloc(1, 65536);
    assert_non_null(buf);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The result of a search, filled in by hand. */
static fc__remap *mapping_b(void)
{
    static char *names[4] = {"node0", "node1", "node2", "node3"};
    static uint32_t b[8] = {0, 3, 1, 0, 2, 1, 3, 2}, a[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    static fc__remap_cand cand;
    static fc__remap rm;
    memset(&rm, 0, sizeof rm);
    memset(&cand, 0, sizeof cand);
    rm.nranks = 8;
    rm.nodes = 4;
    rm.slots = 2;
    rm.node_names = names;
    rm.nnames = 4;
    rm.current.rank_node = a;
    rm.current.time = 2.0;
    rm.current.comm = 1.5;
    rm.current.conflict_s[FC_CONFLICT_INCOMING][2] = 0.5;
    rm.observed_s = 2.1;
    rm.observed_comm = 1.6;
    rm.check_err_pct = 100 * (2.0 - 2.1) / 2.1;
    rm.exhaustive = 1;
    rm.evaluated = 105;
    cand.rank_node = b;
    cand.time = 1.5;
    cand.comm = 1.0;
    cand.gain_pct = 25;
    cand.moved = 4;
    rm.cands = &cand;
    rm.ncands = 1;
    fc__remap_judge(&rm); /* error 4.76 %, gain 25 %: clearly better, alone */
    return &rm;
}

static void check_format(const char *fmt, const char *file, const char *const *names)
{
    char *got = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&got, &len);
    assert_non_null(f);
    fc__remap *rm = mapping_b();
    int which = fc__launcher_parse(fmt);
    assert_true(which >= 0);
    assert_int_equal(fc__launcher_write(f, (unsigned)which, rm, 0,
                                        names ? names : (const char *const *)rm->node_names, "t"), 0);
    fclose(f);
    char *want = slurp(file);
    if (strcmp(got, want) != 0)
        fail_msg("format %s differs from %s:\n--- got\n%s--- expected\n%s", fmt, file, got, want);
    free(want);
    free(got);
}

static void test_hydra(void **state)
{
    (void)state;
    check_format("hydra", "b.hydra", NULL);
}

static void test_openmpi(void **state)
{
    (void)state;
    check_format("openmpi", "b.openmpi", NULL);
}

static void test_slurm(void **state)
{
    (void)state;
    check_format("slurm", "b.slurm", NULL);
}

static void test_cray(void **state)
{
    (void)state;
    check_format("cray", "b.cray", NULL);
}

/* JSON with the names of the next allocation substituted (the current placement keeps the trace's). */
static void test_json(void **state)
{
    (void)state;
    static const char *const next[4] = {"c0", "c1", "c2", "c3"};
    check_format("json", "b.json", next);
}

/* Cray MPICH gives every node the same number of ranks but the last. 7 ranks on 3 nodes of 3 slots,
 * node1 {0}, node0 {1,2,4}, node2 {3,5,6}: node1, first by its lowest rank, holds one rank, so it
 * must go last: the ranks of node0, then node2's, then node1's, 3 per node. */
static void test_cray_short_node_last(void **state)
{
    (void)state;
    static uint32_t pl[7] = {1, 0, 0, 2, 0, 2, 2};
    fc__remap *rm = mapping_b();
    rm->nranks = 7;
    rm->nodes = 3;
    rm->slots = 3;
    rm->cands[0].rank_node = pl;
    char *got = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&got, &len);
    assert_int_equal(fc__launcher_write(f, FC_LAUNCHER_CRAY, rm, 0, (const char *const *)rm->node_names, "t"), 0);
    fclose(f);
    assert_non_null(strstr(got, "# 3 ranks per node (nodes in this order: node0:3, node2:3, node1:1)\n1,2,4,3,5,6,0\n"));
    free(got);
}

/* Two nodes short of the fullest cannot be written for Cray: one message, FC_EINVAL. node0 {0,2,5},
 * node1 {1,4}, node2 {3,6}. */
static void test_cray_refuses_uneven(void **state)
{
    (void)state;
    static uint32_t pl[7] = {0, 1, 0, 2, 1, 0, 2};
    fc__remap *rm = mapping_b();
    rm->nranks = 7;
    rm->nodes = 3;
    rm->slots = 3;
    rm->cands[0].rank_node = pl;
    char *got = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&got, &len);
    assert_int_equal(fc__launcher_write(f, FC_LAUNCHER_CRAY, rm, 0, (const char *const *)rm->node_names, "t"),
                     FC_EINVAL);
    fclose(f);
    assert_non_null(strstr(fc_errmsg(), "cray: the suggestion puts 3 ranks on node0 but 2 on "));
    free(got);
}

/* The judgement, by hand: current 2.0 s; suggestions at 1.0, 1.05 and 1.3 s moving 4, 2 and 1
 * ranks (gains 50, 47.5 and 35 %). With a replay error of 10 %, the first two are within 10 % of
 * 1.0 s (5 % and 30 % apart from the best), the second moves fewer ranks, and 50 % > 10 % is
 * clearly better; with an error of 60 %, all three are equivalent, the third moves fewest, and a
 * 50 % gain is not clearly better. */
static void test_judge(void **state)
{
    (void)state;
    static uint32_t pl[8];
    static fc__remap_cand c3[3];
    fc__remap *rm = mapping_b();
    double time[3] = {1.0, 1.05, 1.3};
    uint32_t moved[3] = {4, 2, 1};
    for (int i = 0; i < 3; i++) {
        memset(&c3[i], 0, sizeof c3[i]);
        c3[i].rank_node = pl;
        c3[i].time = time[i];
        c3[i].moved = moved[i];
        c3[i].gain_pct = 100 * (2.0 - time[i]) / 2.0;
    }
    rm->cands = c3;
    rm->ncands = 3;
    rm->check_err_pct = -10;
    fc__remap_judge(rm);
    assert_int_equal(rm->equivalent, 2);
    assert_int_equal(rm->fewest, 1);
    assert_true(rm->clearly_better);
    assert_true(rm->uncertainty_pct == 10);
    rm->check_err_pct = 60;
    fc__remap_judge(rm);
    assert_int_equal(rm->equivalent, 3);
    assert_int_equal(rm->fewest, 2);
    assert_false(rm->clearly_better);
}

static void test_parse(void **state)
{
    (void)state;
    assert_int_equal(fc__launcher_parse("hydra"), FC_LAUNCHER_HYDRA);
    assert_int_equal(fc__launcher_parse("json"), FC_LAUNCHER_JSON);
    assert_int_equal(fc__launcher_parse("mpirun"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hydra), cmocka_unit_test(test_openmpi), cmocka_unit_test(test_slurm),
        cmocka_unit_test(test_cray),  cmocka_unit_test(test_json),    cmocka_unit_test(test_parse),
        cmocka_unit_test(test_cray_short_node_last), cmocka_unit_test(test_cray_refuses_uneven),
        cmocka_unit_test(test_judge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
