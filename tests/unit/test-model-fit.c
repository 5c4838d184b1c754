/* tests/unit/test-model-fit.c: the calibration fits and the papers' model curves, against the
 * papers' numbers computed by hand and against synthetic data made with independent formulas. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <flowcut/error.h>
#include "model/fit.h"

/* Deterministic noise in [-amp, amp]: a small LCG, so failures reproduce. */
static double noise(unsigned *state, double amp)
{
    *state = *state * 1103515245u + 12345u;
    return amp * (2.0 * (double)((*state >> 8) & 0xffff) / 65535.0 - 1.0);
}

static void rel_near(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("got %.10g, want %.10g (within %g relative)", got, want, rel);
}

/* Gropp's Blue Waters example: s = 3.26 us, R_NIC-NIC = 5.7 GB/s, R_CoreBase = 2.9 GB/s,
 * R_CoreIncr = 1 GB/s (GB = 1e9 bytes). Hand-computed times for messages of 1e6 bytes. */
static void test_gropp_blue_waters(void **state)
{
    fc__maxrate bw = {.s = 3.26e-6, .r_nic = 5.7e9, .r_core_base = 2.9e9, .r_core_incr = 1e9};
    /* k = 1: rate min(5.7, 2.9) = 2.9 GB/s; 3.26e-6 + 1e6 / 2.9e9 = 3.480875862e-4. */
    rel_near(fc__gropp_time(&bw, 1, 1e6), 3.480875862e-4, 1e-9);
    /* k = 2: min(5.7, 2.9 + 1) = 3.9; 3.26e-6 + 2e6 / 3.9e9 = 5.160805128e-4. */
    rel_near(fc__gropp_time(&bw, 2, 1e6), 5.160805128e-4, 1e-9);
    /* k = 3: min(5.7, 4.9) = 4.9; 3.26e-6 + 3e6 / 4.9e9 = 6.155048980e-4. */
    rel_near(fc__gropp_time(&bw, 3, 1e6), 6.155048980e-4, 1e-9);
    /* k = 4: min(5.7, 5.9) = 5.7, the NIC caps; 3.26e-6 + 4e6 / 5.7e9 = 7.050143860e-4. */
    rel_near(fc__gropp_time(&bw, 4, 1e6), 7.050143860e-4, 1e-9);
    /* k = 8 of empty messages: the latency term alone. */
    rel_near(fc__gropp_time(&bw, 8, 0), 3.26e-6, 1e-12);
    /* Gropp's note: with R_CoreBase = R_CoreIncr and a huge NIC rate, T = s + n / R_CORE-NIC. */
    fc__maxrate fast = {.s = 1e-6, .r_nic = 1e15, .r_core_base = 2e9, .r_core_incr = 2e9};
    rel_near(fc__gropp_time(&fast, 5, 1e6), 1e-6 + 1e6 / 2e9, 1e-9);
}

/* Hager & Wellein, equations 1-6 with IMB's standard settings, C = 2^19, B_r = 1 GB/s, T_1 = 2 us.
 * x = 4096: n = min(1000, max(1, 41943040 / 4096 = 10240)) = 1000, beta = 1, T_p = 4.096e-6;
 *   T_b = 4.096e-6 (4000 - 1999) + 2e-6 (3999) = 0.008196096 + 0.007998 = 0.016194096;
 *   b = 4 * 4096 * 1000 / 0.016194096 = 1.011726743e9.
 * x = 2^20: n = 41943040 / 1048576 = 40, beta = 2, T_p = 1.048576e-3;
 *   T_b = 1.048576e-3 (160 - 79 / 2) + 2e-6 (159) = 0.126353408 + 0.000318 = 0.126671408;
 *   b = 4 * 1048576 * 40 / 0.126671408 = 1.324467476e9.
 * x = 2^23: n = 5, beta = 16; T_b = 8.388608e-3 (20 - 9 / 16) + 2e-6 (19) = 0.163091568. */
static void test_imb_model(void **state)
{
    fc__imb m = {.chunk = 524288, .bandwidth = 1e9, .latency = 2e-6, .overall_vol = FC_IMB_OVERALL_VOL,
                 .msgs_per_sample = FC_IMB_MSGSPERSAMPLE};
    assert_true(FC_IMB_OVERALL_VOL == 40.0 * 1024 * 1024);
    assert_true(fc__imb_n(&m, 4096) == 1000);
    assert_true(fc__imb_n(&m, 1048576) == 40);
    assert_true(fc__imb_n(&m, 8388608) == 5);
    assert_true(fc__imb_n(&m, 64.0 * 1024 * 1024) == 1);
    assert_true(fc__imb_beta(&m, 4096) == 1);
    assert_true(fc__imb_beta(&m, 1048576) == 2);
    rel_near(fc__imb_tp(&m, 1048576), 1.048576e-3, 1e-12);
    rel_near(fc__imb_tb(&m, 4096), 0.016194096, 1e-9);
    rel_near(fc__imb_bandwidth(&m, 4096), 1.011726743e9, 1e-9);
    rel_near(fc__imb_tb(&m, 1048576), 0.126671408, 1e-9);
    rel_near(fc__imb_bandwidth(&m, 1048576), 1.324467476e9, 1e-9);
    rel_near(fc__imb_tb(&m, 8388608), 0.163091568, 1e-9);
}

/* Equation (4), the paper's unsimplified form, as the independent generator of IMB data. */
static double imb_eq4(double x, double c, double br, double t1)
{
    double n = x > 0 ? fmin(1000, fmax(1, floor(41943040.0 / x))) : 1000;
    double tp = x / br, beta = x < c ? 1 : x / c;
    double tb = 2 * n * (2 * tp + t1) - (2 * n - 1) * (tp / beta - t1);
    return 4 * x * n / tb;
}

static void test_imb_fit(void **state)
{
    double x[24], b[24];
    size_t n = 0;
    unsigned st = 7;
    for (double s = 1024; s <= 16.0 * 1024 * 1024; s *= 2) {
        x[n] = s;
        b[n] = imb_eq4(s, 262144, 1.5e9, 3e-6) * (1 + noise(&st, 0.005));
        n++;
    }
    fc__imb m = {.overall_vol = FC_IMB_OVERALL_VOL, .msgs_per_sample = FC_IMB_MSGSPERSAMPLE};
    double resid;
    assert_int_equal(fc__imb_fit(x, b, n, &m, &resid), 0);
    rel_near(m.bandwidth, 1.5e9, 0.03);
    rel_near(m.latency, 3e-6, 0.15);
    /* C falls between the measured sizes around 2^18: within a factor sqrt(2). */
    assert_true(m.chunk >= 262144 / 1.5 && m.chunk <= 262144 * 1.5);
    assert_true(resid < 0.01);
}

/* Two regimes, as an eager/rendezvous switch makes: 50 us + 8 ns/byte below 64 KiB, then a jump
 * to 150 us + 8.5 ns/byte. Sizes are the powers of two and the midpoints of the switch. */
static void test_segments(void **state)
{
    double x[40], y[40], e[40];
    size_t n = 0;
    unsigned st = 11;
    x[n++] = 0;
    for (double s = 1; s <= 16.0 * 1024 * 1024; s *= 2)
        x[n++] = s;
    for (size_t i = 0; i < n; i++) {
        double t = x[i] < 65536 ? 50e-6 + 8e-9 * x[i] : 150e-6 + 8.5e-9 * x[i];
        y[i] = t * (1 + noise(&st, 0.01));
        e[i] = 0.01;
    }
    fc__segment seg[FC_FIT_MAXSEG];
    size_t ns;
    uint64_t thr;
    assert_int_equal(fc__fit_segments(x, y, e, n, 0.03, seg, &ns, &thr), 0);
    assert_true(ns >= 2);
    assert_true(thr == 65536);
    assert_true(seg[0].lo == 0 && seg[ns - 1].hi == UINT64_MAX);
    for (size_t i = 1; i < ns; i++)
        assert_true(seg[i].lo == seg[i - 1].hi);
    const fc__segment *last = &seg[ns - 1];
    rel_near(last->per_byte, 8.5e-9, 0.03);
    rel_near(seg[0].latency, 50e-6, 0.05);
    /* Every measured point within 3 % of the fitted segments. */
    for (size_t i = 0; i < n; i++) {
        size_t t = 0;
        while (t + 1 < ns && seg[t + 1].lo <= x[i])
            t++;
        rel_near(seg[t].latency + seg[t].per_byte * x[i], y[i], 0.03);
    }
    /* One straight line stays one segment. */
    for (size_t i = 0; i < n; i++)
        y[i] = (20e-6 + 4e-8 * x[i]) * (1 + noise(&st, 0.005));
    assert_int_equal(fc__fit_segments(x, y, NULL, n, 0.03, seg, &ns, &thr), 0);
    assert_int_equal(ns, 1);
    assert_true(thr == 0);
    rel_near(seg[0].per_byte, 4e-8, 0.02);
    /* Bad input. */
    assert_int_equal(fc__fit_segments(x, y, NULL, 1, 0.03, seg, &ns, &thr), FC_EINVAL);
    x[3] = x[2];
    assert_int_equal(fc__fit_segments(x, y, NULL, n, 0.03, seg, &ns, &thr), FC_EINVAL);
}

/* The report's section 6.1: f1 ends at T (unharmed), f2 at 1.75 T: the cut is (0, 3). */
static void test_cut_table2(void **state)
{
    double T = 0.1, t[2] = {T, 1.75 * T}, a[2];
    assert_int_equal(fc__fit_cut(t, 2, T, 0, 0.02, 0, a), 0);
    assert_float_equal(a[0], 0.0, 1e-12);
    assert_float_equal(a[1], 3.0, 1e-12);
    /* By hand with latency L = 0.01: work 0.09; f1 ends at 0.1 (alpha 0); f2 at 0.1 + 0.75 * 0.09
     * = 0.1675: during 0.09 it moved 0.09 / 4 and the remaining 0.0675 at full rate. */
    double tl[2] = {0.1, 0.1675};
    assert_int_equal(fc__fit_cut(tl, 2, 0.1, 0.01, 0.02, 0, a), 0);
    assert_float_equal(a[0], 0.0, 1e-12);
    assert_float_equal(a[1], 3.0, 1e-9);
    /* Fair sharing: both end together at 2 T: (1, 1). */
    double tf[2] = {2 * T, 2.02 * T};
    assert_int_equal(fc__fit_cut(tf, 2, T, 0, 0.02, 0, a), 0);
    assert_float_equal(a[0], 1.0, 1e-12);
    assert_float_equal(a[1], 1.02, 1e-12);
    /* The even conflicts of GigaEth/Lam: (1/2, 2). f1 ends at 1.5 T; f2 moved 1.5 T / 3 = T/2 and
     * takes another T/2 alone: ends at 2 T. */
    double te[2] = {1.5 * T, 2 * T};
    assert_int_equal(fc__fit_cut(te, 2, T, 0, 0.02, 0, a), 0);
    assert_float_equal(a[0], 0.5, 1e-12);
    assert_float_equal(a[1], 2.0, 1e-12);
    /* A flow that made no progress while the other ran. */
    double ts[2] = {T, 2.5 * T};
    assert_int_equal(fc__fit_cut(ts, 2, T, 0, 0.02, 0, a), 0);
    assert_true(a[1] == FC_FIT_ALPHA_MAX);
    assert_int_equal(fc__fit_cut(ts, 2, 0, 0, 0.02, 0, a), FC_EINVAL);
}

/* Synthetic max-rate data from the per-flow form: each of k flows moves n bytes at
 * min(R_NIC / k, (R_CB + (k-1) R_CI) / k) after the start-up s, plus 1 % noise. */
static void gen_maxrate(unsigned kmax, double s, double nic, double cb, double ci, unsigned *k, double *n,
                        double *t, size_t *cnt)
{
    unsigned st = 3;
    *cnt = 0;
    for (unsigned kk = 1; kk <= kmax; kk++)
        for (double b = 65536; b <= 4.0 * 1048576; b *= 4) {
            double per_flow = fmin(nic / kk, (cb + (kk - 1) * ci) / kk);
            k[*cnt] = kk;
            n[*cnt] = b;
            t[*cnt] = (s + b / per_flow) * (1 + noise(&st, 0.01));
            ++*cnt;
        }
}

static void test_maxrate_fit(void **state)
{
    unsigned k[64], fixed;
    double n[64], t[64];
    size_t cnt;
    fc__maxrate m;
    /* Blue Waters' shape over k = 1..6: every parameter is identifiable. */
    gen_maxrate(6, 3.26e-6, 5.7e9, 2.9e9, 1e9, k, n, t, &cnt);
    assert_int_equal(fc__fit_maxrate(k, n, t, cnt, &m, &fixed), 0);
    assert_int_equal(fixed, 0);
    rel_near(m.r_nic, 5.7e9, 0.03);
    rel_near(m.r_core_base, 2.9e9, 0.05);
    rel_near(m.r_core_incr, 1e9, 0.15);
    assert_true(m.eps < 0.02);
    /* The emulated cluster's shape: one flow already fills the 25 MB/s link and only k = 1, 2 are
     * measured: the NIC rate is determined, the core rates are not. */
    gen_maxrate(2, 200e-6, 25e6, 1e9, 1e9, k, n, t, &cnt);
    assert_int_equal(fc__fit_maxrate(k, n, t, cnt, &m, &fixed), 0);
    rel_near(m.r_nic, 25e6, 0.02);
    assert_true(fixed & FC_FIT_FIXED_CORE_BASE);
    assert_true(fixed & FC_FIT_FIXED_CORE_INCR);
    assert_false(fixed & FC_FIT_FIXED_NIC);
    rel_near(fc__gropp_time(&m, 2, 1048576), 200e-6 + 2 * 1048576 / 25e6, 0.03);
    /* Nothing to fit. */
    assert_int_equal(fc__fit_maxrate(k, n, t, 0, &m, &fixed), FC_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gropp_blue_waters), cmocka_unit_test(test_imb_model),
        cmocka_unit_test(test_imb_fit),           cmocka_unit_test(test_segments),
        cmocka_unit_test(test_cut_table2),        cmocka_unit_test(test_maxrate_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
