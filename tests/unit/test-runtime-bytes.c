/* tests/unit/test-runtime-bytes.c: fc__bytes against MPI_Type_size for every predefined datatype
 * (the size MPICH encodes in builtin handles) and for a derived one; the byte count read inline
 * from a status against MPI_Get_count. Runs MPI as a singleton. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "runtime.h"
#include "record.h"

#define T(x) {x, #x}
static const struct {
    MPI_Datatype dt;
    const char *name;
} types[] = {
    T(MPI_CHAR),
    T(MPI_SIGNED_CHAR),
    T(MPI_UNSIGNED_CHAR),
    T(MPI_BYTE),
    T(MPI_WCHAR),
    T(MPI_SHORT),
    T(MPI_UNSIGNED_SHORT),
    T(MPI_INT),
    T(MPI_UNSIGNED),
    T(MPI_LONG),
    T(MPI_UNSIGNED_LONG),
    T(MPI_FLOAT),
    T(MPI_DOUBLE),
    T(MPI_LONG_DOUBLE),
    T(MPI_LONG_LONG_INT),
    T(MPI_UNSIGNED_LONG_LONG),
    T(MPI_PACKED),
    T(MPI_LB),
    T(MPI_UB),
    T(MPI_FLOAT_INT),
    T(MPI_DOUBLE_INT),
    T(MPI_LONG_INT),
    T(MPI_SHORT_INT),
    T(MPI_2INT),
    T(MPI_LONG_DOUBLE_INT),
    T(MPI_COMPLEX),
    T(MPI_DOUBLE_COMPLEX),
    T(MPI_LOGICAL),
    T(MPI_REAL),
    T(MPI_DOUBLE_PRECISION),
    T(MPI_INTEGER),
    T(MPI_2INTEGER),
    T(MPI_2REAL),
    T(MPI_2DOUBLE_PRECISION),
    T(MPI_CHARACTER),
    T(MPI_REAL4),
    T(MPI_REAL8),
    T(MPI_REAL16),
    T(MPI_COMPLEX8),
    T(MPI_COMPLEX16),
    T(MPI_COMPLEX32),
    T(MPI_INTEGER1),
    T(MPI_INTEGER2),
    T(MPI_INTEGER4),
    T(MPI_INTEGER8),
    T(MPI_INT8_T),
    T(MPI_INT16_T),
    T(MPI_INT32_T),
    T(MPI_INT64_T),
    T(MPI_UINT8_T),
    T(MPI_UINT16_T),
    T(MPI_UINT32_T),
    T(MPI_UINT64_T),
    T(MPI_C_BOOL),
    T(MPI_C_FLOAT_COMPLEX),
    T(MPI_C_DOUBLE_COMPLEX),
    T(MPI_C_LONG_DOUBLE_COMPLEX),
    T(MPI_AINT),
    T(MPI_OFFSET),
    T(MPI_COUNT),
    T(MPI_CXX_BOOL),
    T(MPI_CXX_FLOAT_COMPLEX),
    T(MPI_CXX_DOUBLE_COMPLEX),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX),
};

static void predefined(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        int sz = -1;
        if (types[i].dt == MPI_DATATYPE_NULL)
            continue; /* a type this MPICH build lacks */
        assert_int_equal(MPI_Type_size(types[i].dt, &sz), MPI_SUCCESS);
        if (fc__bytes(types[i].dt, 3) != 3u * (uint64_t)sz)
            fail_msg("%s: fc__bytes %llu, MPI_Type_size x 3 = %d", types[i].name,
                     (unsigned long long)fc__bytes(types[i].dt, 3), 3 * sz);
    }
}

static void derived_and_edges(void **state)
{
    (void)state;
    MPI_Datatype v;
    /* 4 blocks of 3 doubles: 96 bytes of data whatever the stride. */
    MPI_Type_vector(4, 3, 10, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    assert_int_equal(fc__bytes(v, 2), 2 * 96);
    MPI_Type_free(&v);
    assert_int_equal(fc__bytes(MPI_INT, 0), 0);
    assert_int_equal(fc__bytes(MPI_DATATYPE_NULL, 5), 0);
    /* A count past 2^31 must not overflow: 3 GiB of bytes. */
    assert_true(fc__bytes(MPI_BYTE, (int64_t)3 << 30) == (uint64_t)3 << 30);
}

/* MPICH's UCX transport leaks a few small objects from modules it unloads at MPI_Finalize; the
 * leak checker cannot name them and they are not ours, so this MPI-using test turns it off. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}

/* Statuses filled by MPI_Status_set_elements_x (bytes of count elements), with and without the
 * cancelled bit that shares a word with the count's high half: the inline read must say what
 * MPI_Get_count_c says. */
static void status_bytes(void **state)
{
    (void)state;
    const MPI_Count counts[] = {0, 1, 4095, 123456789, ((MPI_Count)1 << 31) + 5, ((MPI_Count)1 << 40) + 3};
    const MPI_Datatype elems[] = {MPI_BYTE, MPI_INT, MPI_DOUBLE};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        for (size_t k = 0; k < sizeof elems / sizeof elems[0]; k++)
            for (int cancelled = 0; cancelled < 2; cancelled++) {
                MPI_Status st;
                memset(&st, 0, sizeof st);
                MPI_Count want = -1;
                assert_int_equal(MPI_Status_set_elements_x(&st, elems[k], counts[i]), MPI_SUCCESS);
                assert_int_equal(MPI_Status_set_cancelled(&st, cancelled), MPI_SUCCESS);
                assert_int_equal(MPI_Get_count_c(&st, MPI_BYTE, &want), MPI_SUCCESS);
                assert_true(fc__status_bytes(&st) == (uint64_t)want);
            }
    assert_true(fc__status_bytes(MPI_STATUS_IGNORE) == 0);
    assert_true(fc__status_bytes(NULL) == 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(predefined),
        cmocka_unit_test(derived_and_edges),
        cmocka_unit_test(status_bytes),
    };
    MPI_Init(&argc, &argv);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
