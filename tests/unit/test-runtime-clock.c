/* tests/unit/test-runtime-clock.c: the tick-to-nanosecond map, by hand and against
 * CLOCK_MONOTONIC after a real calibration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "runtime.h"

static void by_hand(void **state)
{
    (void)state;
    fc__clock_conv c;
    /* 3 000 000 ticks in 1 ms: a 3 GHz clock, one tick is 1/3 ns. */
    fc__clock_conv_from(&c, 1000, 5000, 3001000, 1005000);
    assert_true(fc__ticks_ns(&c, 1000) == 5000);
    assert_true(fc__ticks_ns(&c, 4000) == 6000);       /* 3000 ticks later: +1000 ns */
    assert_true(fc__ticks_ns(&c, 3001000) == 1005000);
    assert_true(fc__ticks_ns(&c, 700) == 4900);        /* before the first point: -100 ns */
    /* An hour at 3 GHz: 1.08e13 ticks = 3.6e12 ns, within a microsecond. */
    uint64_t ns = fc__ticks_ns(&c, 1000 + 10800000000000ull);
    assert_true(ns - 5000 >= 3600000000000ull - 1000 && ns - 5000 <= 3600000000000ull + 1000);
    /* Identity (the clock_gettime clock). */
    fc__clock_conv_from(&c, 0, 0, 1000000, 1000000);
    assert_true(fc__ticks_ns(&c, 123456789) == 123456789);
}

static void calibrated(void **state)
{
    (void)state;
    for (int want = 0; want < 2; want++) {
        fc__clock_setup(want);
        assert_int_equal(fc__use_tsc, want && fc__tsc_invariant());
        /* The event clock converted to ns must agree with CLOCK_MONOTONIC read between two
         * event-clock reads: calibration error over a few ms is far below 100 us. */
        uint64_t a = fc__now_ns(), m = fc__mono_ns(), b = fc__now_ns();
        assert_true(a <= b);
        assert_true(m + 100000 >= a && m <= b + 100000);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(by_hand),
        cmocka_unit_test(calibrated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
