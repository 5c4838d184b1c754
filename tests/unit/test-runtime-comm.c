/* tests/unit/test-runtime-comm.c: communicator ids, ordinals, handle reuse after a free, lazy
 * definitions and the COMMS payload. Runs MPI as a singleton (world = self = rank 0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "runtime.h"

typedef struct {
    uint64_t id, flags, nlocal, local0, nremote;
    int64_t ordinal;
} def;

/* Decodes a COMMS payload of one-member communicators (all a singleton has). */
static int decode(const fc__buf *b, def *d, int max)
{
    const unsigned char *p = b->p, *end = b->p + b->len;
    uint64_t n = 0, v = 0;
    fc_get_uvarint(&p, end, &n);
    for (uint64_t i = 0; i < n && (int)i < max; i++) {
        fc_get_uvarint(&p, end, &d[i].id);
        fc_get_uvarint(&p, end, &d[i].flags);
        fc_get_uvarint(&p, end, &d[i].nlocal);
        for (uint64_t j = 0; j < d[i].nlocal; j++)
            fc_get_uvarint(&p, end, &d[i].local0);
        fc_get_uvarint(&p, end, &d[i].nremote);
        fc_get_uvarint(&p, end, &v);
        d[i].ordinal = fc_unzigzag(v);
    }
    assert_ptr_equal(p, end);
    return (int)n;
}

static void ids(void **state)
{
    (void)state;
    MPI_Comm a, b, c;
    assert_int_equal(fc__comm(MPI_COMM_WORLD), 0);
    assert_int_equal(fc__comm(MPI_COMM_SELF), 1);
    assert_int_equal(fc__comm(MPI_COMM_NULL), UINT32_MAX);
    PMPI_Comm_dup(MPI_COMM_WORLD, &a);
    assert_int_equal(fc__comm_created(a), 2);
    assert_int_equal(fc__comm(a), 2);
    fc__comm_freed(a);
    PMPI_Comm_free(&a);
    PMPI_Comm_dup(MPI_COMM_WORLD, &b); /* MPICH hands the freed handle out again */
    assert_int_equal(fc__comm_created(b), 3);
    assert_int_equal(fc__comm(b), 3);
    PMPI_Comm_dup(MPI_COMM_SELF, &c); /* never announced: defined lazily on first use */
    assert_int_equal(fc__comm(c), 4);
    assert_int_equal(fc__comm(c), 4);

    def d[8];
    fc__buf buf = {0};
    uint32_t n = fc__comms_encode(&buf);
    assert_int_equal(n, 5);
    /* MPI_COMM_WORLD (id 0) is not written: readers supply it. */
    assert_int_equal(decode(&buf, d, 8), 4);
    /* Every one has the single member world rank 0, so the ordinals count 1, 2, 3 in order of
     * creation after the world's 0; the lazy one is flagged and has no ordinal. */
    for (int i = 0; i < 4; i++) {
        assert_true(d[i].id == (uint64_t)i + 1);
        assert_true(d[i].nlocal == 1 && d[i].local0 == 0 && d[i].nremote == 0);
    }
    assert_true(d[0].ordinal == 1 && d[1].ordinal == 2 && d[2].ordinal == 3);
    assert_true(d[3].flags == FC_COMMF_LAZY && d[3].ordinal == -1);
    fc__comms_mark_written(n);
    free(buf.p);
    fc__buf again = {0};
    fc__comms_encode(&again);
    assert_int_equal(again.len, 0);
    PMPI_Comm_free(&b);
    PMPI_Comm_free(&c);
}

/* MPICH's UCX transport leaks a few small objects from modules it unloads at MPI_Finalize; the
 * leak checker cannot name them and they are not ours, so this MPI-using test turns it off. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ids),
    };
    PMPI_Init(&argc, &argv);
    fc__comms_init(0, 1);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    PMPI_Finalize();
    return rc;
}
