/* libtrace/clock.c: the event clock (TSC or CLOCK_MONOTONIC) and its calibration to nanoseconds. */
#include "runtime.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

int fc__use_tsc;
/* Identity map until calibrated, which is right for clock_gettime ticks. */
fc__clock_conv fc__conv = {0, 0, (uint64_t)1 << 32};

uint64_t fc__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fc__clock_conv_from(fc__clock_conv *c, uint64_t tick0, uint64_t ns0, uint64_t tick1, uint64_t ns1)
{
    c->tick0 = tick0;
    c->ns0 = ns0;
    /* 2^32 scaling keeps 9-10 significant digits of the rate: under 1 ns of error per second. */
    c->mult = (uint64_t)((((unsigned __int128)(ns1 - ns0)) << 32) / (tick1 - tick0));
}

int fc__tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __cpuid(0x80000007u, a, b, c, d);
    return (d >> 8) & 1;
#else
    return 0;
#endif
}

#if defined(__x86_64__) || defined(__i386__)
/* One (tsc, monotonic ns) pair read as close together as the machine allows: the TSC read is
 * bracketed by two clock reads and the tightest of a few tries is kept, its midpoint taken. */
static void tsc_pair(uint64_t *tick, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t a = fc__mono_ns();
        uint64_t t = __rdtsc();
        uint64_t b = fc__mono_ns();
        if (b - a < best) {
            best = b - a;
            *tick = t;
            *ns = a + (b - a) / 2;
        }
    }
}
#endif

/* The clock must be chosen before the first fc__now, which the MPI_Init wrapper reads before
 * PMPI_Init: a CPUID and a getenv, cheap enough for every process the library is preloaded in.
 * The costly calibration waits for fc__clock_setup, in MPI ranks only. */
__attribute__((constructor)) static void choose_clock(void)
{
    const char *e = getenv("FLOWCUT_CLOCK");
    fc__use_tsc = fc__tsc_invariant() && !(e != NULL && strcmp(e, "monotonic") == 0);
}

const char *fc__clock_setup(int want_tsc)
{
#if defined(__x86_64__) || defined(__i386__)
    if (want_tsc && fc__tsc_invariant()) {
        uint64_t t0, n0, t1, n1;
        tsc_pair(&t0, &n0);
        /* 5 ms of spinning: the pair error (~20 ns) is then a few ppm of the rate; the clock
         * offsets measured at init and finalize absorb the remaining linear drift. */
        do
            tsc_pair(&t1, &n1);
        while (n1 - n0 < 5000000u || t1 <= t0);
        fc__clock_conv_from(&fc__conv, t0, n0, t1, n1);
        fc__use_tsc = 1;
        return "tsc";
    }
#endif
    (void)want_tsc;
    fc__use_tsc = 0;
    fc__conv.tick0 = 0;
    fc__conv.ns0 = 0;
    fc__conv.mult = (uint64_t)1 << 32;
    return "clock_gettime";
}
