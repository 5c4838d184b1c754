/* tests/unit/test-runtime-signal.c: what a fatal signal's flush (fc__emergency_flush) writes of a
 * thread's partial chunk: its records, and the wait for that chunk the thread made and has not yet
 * recorded (TRACER_WAIT), in the place and with the times a normal write gives it (format.h,
 * TRACER_WAIT; runtime.c, put_wait). The traced process is a child running MPI as a singleton; the
 * parent reads its rank file back with `flowcut dump` ($FLOWCUT). */
#include <setjmp.h>
#include <stdarg.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime.h"

/* The child: starts tracing, puts three records in its chunk by hand as the wrappers would (an
 * MPI_Waitall of U ticks with one request completed at its exit, then an MPI_Send 3 U later), with a
 * wait of 1.9 U between them noted in its slot as take_chunk notes one taken
 * halfway through the Waitall's records, and flushes as a fatal signal does. */
static void traced_child(const char *dir)
{
    setenv("FLOWCUT_DIR", dir, 1);
    setenv("FLOWCUT_BUFFER", "64K", 1);
    MPI_Init(NULL, NULL);
    fc__init_after(FC_INIT_MPI_INIT, MPI_THREAD_SINGLE);
    fc__thread *t = fc__thread_start();
    if (t == NULL)
        _exit(3);
    fc__tslot *s = (fc__tslot *)t;
    const uint64_t u = 100000, b = fc__now() + 100 * u;
    t->cur[0] = (fc__rec){.t0 = b, .t1 = b + u, .kind = FC_EV_MPI_Waitall, .peer = FC_PEER_NONE, .bytes = 1};
    t->cur[1] = (fc__rec){.t0 = b + u, .t1 = b + u, .kind = FC_EV_COMPLETE, .peer = 0, .obj = 7, .bytes = 4};
    t->cur[2] = (fc__rec){.t0 = b + 4 * u, .t1 = b + 4 * u + u / 2, .kind = FC_EV_MPI_Send, .peer = 0, .bytes = 4};
    t->cur += 3;
    t->end -= 1; /* the slot fill_from keeps for the wait */
    s->wait0 = b + u + u / 10;
    s->wait1 = b + 3 * u;
    s->wait_pending = 1;
    s->wait_mid = 1;
    fc__emergency_flush(FC_END_SIGNAL, 0); /* the flush of a fault, which keeps the wait */
    _exit(0); /* the process dies here, as after the signal */
}

static double field(const char *line, const char *name)
{
    const char *p = strstr(line, name);
    return p != NULL ? atof(p + strlen(name)) : -1;
}

static void wait_written_on_signal(void **state)
{
    (void)state;
    const char *flowcut = getenv("FLOWCUT");
    if (flowcut == NULL)
        skip();
    char dir[] = "/tmp/flowcut-test-signal-XXXXXX", cmd[512], line[1024];
    assert_non_null(mkdtemp(dir));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        traced_child(dir);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    snprintf(cmd, sizeof cmd, "'%s' dump --no-sites --rank 0 '%s' 2>/dev/null", flowcut, dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    /* The rank's records in order, from the Waitall on: Waitall, COMPLETE, TRACER_WAIT, Send. */
    static const char *const want[] = {"kind=MPI_Waitall", "kind=COMPLETE", "kind=TRACER_WAIT", "kind=MPI_Send"};
    double t[4] = {0}, dur[4] = {0};
    size_t n = 0, waits = 0;
    while (fgets(line, sizeof line, p) != NULL) {
        waits += strstr(line, "kind=TRACER_WAIT") != NULL;
        if (n == 0 && strstr(line, want[0]) == NULL)
            continue;
        if (n < 4) {
            assert_non_null(strstr(line, want[n]));
            t[n] = field(line, "time=");
            dur[n] = field(line, "dur=");
        }
        n++;
    }
    pclose(p);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(n, 4);
    assert_int_equal(waits, 1);
    /* Ticks convert to seconds linearly: the wait lasts 1.9 Waitalls and starts 1.1 Waitalls
     * after the Waitall's entry (within the nanosecond rounding of the times printed). */
    double unit = dur[0];
    assert_true(unit > 0);
    assert_true(fabs(dur[2] - 1.9 * unit) <= 3e-9);
    assert_true(fabs(t[2] - t[0] - 1.1 * unit) <= 3e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wait_written_on_signal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
