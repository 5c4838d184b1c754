/* test-wrappers-spec.c: mpi.spec, as gen-wrappers.py turns it into wrap-table.h, intercepts every
 * MPI event kind of format.h exactly once, and has a large-count (_c) line exactly where the MPI
 * library exports MPI_X_c. The two lists come from different places (format.h by hand, the spec by
 * hand, the library's own symbol table), so each checks the others. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* cmocka.h needs the headers above included first. */
#include <cmocka.h>

#include <flowcut/format.h>

#include "wrap-table.h"

/* The spec's functions: name, kind, whether it has _c, whether it has an f08 entry point. */
typedef struct wrapped {
    const char *name;
    unsigned kind;
    int large, f08;
} wrapped;
static const wrapped table[] = {
#define X(name, kind, large, f08) {#name, kind, large, f08},
    FC_WRAP_TABLE(X)
#undef X
};
#define NTABLE (sizeof table / sizeof table[0])

/* The kinds format.h gives to MPI functions (every class but SUB). */
typedef struct kind {
    const char *name;
    unsigned num;
    int mpi;
} kind;
#define SUB 0
#define ENV 1
#define P2P 1
#define COLL 1
#define COMM 1
#define REQ 1
#define PROBE 1
static const kind kinds[] = {
#define X(name, num, cls) {#name, num, cls},
    FC_EVENT_KINDS(X)
#undef X
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static void test_every_mpi_kind_once(void **state)
{
    (void)state;
    int mpi_kinds = 0;
    for (size_t k = 0; k < NKINDS; k++) {
        int seen = 0;
        for (size_t i = 0; i < NTABLE; i++)
            if (table[i].kind == kinds[k].num) {
                seen++;
                /* The spec line's name is the kind's name. */
                assert_string_equal(table[i].name, kinds[k].name);
            }
        if (seen != (kinds[k].mpi ? 1 : 0))
            fail_msg("%s appears %d times in mpi.spec", kinds[k].name, seen);
        mpi_kinds += kinds[k].mpi;
    }
    assert_int_equal(NTABLE, mpi_kinds);
}

/* MPICH's libmpich exports MPI_X_c exactly for the spec's "large" lines. */
static void test_large_count_variants_match_the_library(void **state)
{
    (void)state;
    void *lib = dlopen("libmpich.so.12", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        skip();
    for (size_t i = 0; i < NTABLE; i++) {
        char sym[96];
        snprintf(sym, sizeof sym, "%s_c", table[i].name);
        int exported = dlsym(lib, sym) != NULL;
        if (exported != table[i].large)
            fail_msg("%s: the library %s it, the spec %s", sym, exported ? "exports" : "lacks",
                     table[i].large ? "says large" : "does not");
    }
    dlclose(lib);
}

static void test_symbols_unique(void **state)
{
    (void)state;
    static const char *syms[] = {FC_WRAP_SYMBOLS};
    size_t n = sizeof syms / sizeof syms[0];
    size_t expect = 0;
    for (size_t i = 0; i < NTABLE; i++)
        expect += 1 + (size_t)table[i].large + (size_t)table[i].f08;
    assert_int_equal(n, expect);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(syms[i], syms[j]) == 0)
                fail_msg("%s defined twice", syms[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_mpi_kind_once),
        cmocka_unit_test(test_large_count_variants_match_the_library),
        cmocka_unit_test(test_symbols_unique),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
