/* libtrace/signals.c: on a fatal signal, writes what is buffered and chains to the handler the
 * application (or MPI) had, so that the process ends exactly as it would have untraced. */
#include "runtime.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
#define NSIGS (sizeof sigs / sizeof sigs[0])
static struct sigaction old[NSIGS];
static int installed[NSIGS];
static _Atomic int flushing;

static void handler(int sig, siginfo_t *si, void *uc)
{
    unsigned i = 0;
    while (i < NSIGS && sigs[i] != sig)
        i++;
    int saved = errno;
    /* Only the first signal flushes: a second one (another thread, or a fault inside the flush)
     * goes straight on to the previous handler. */
    /* SIGTERM and SIGINT come from a launcher or a batch system stopping the job, which kills
     * what is still alive a moment later: the flush leaves the records to the rescue file so
     * that the rank dies as soon as it would untraced. A fault has no one waiting on it. */
    if (!atomic_exchange(&flushing, 1) && fc__state == FC__ON) {
        fc__state = FC__INERT;
        fc__emergency_flush(FC_END_SIGNAL, sig == SIGTERM || sig == SIGINT);
    }
    errno = saved;
    if (i == NSIGS)
        return;
    const struct sigaction *o = &old[i];
    if ((o->sa_flags & SA_SIGINFO) && o->sa_sigaction != NULL) {
        o->sa_sigaction(sig, si, uc);
        return;
    }
    if (!(o->sa_flags & SA_SIGINFO) && o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
        o->sa_handler(sig);
        return;
    }
    /* Default action: restore it and send the signal again. It is blocked while this handler
     * runs, so it is delivered on return (a fault would also recur when the instruction is
     * retried); either way the exit status is the untraced one. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

void fc__signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (unsigned i = 0; i < NSIGS; i++) {
        if (sigaction(sigs[i], NULL, &old[i]) < 0)
            continue;
        /* A signal the application ignores is not fatal: leave it alone. */
        if (!(old[i].sa_flags & SA_SIGINFO) && old[i].sa_handler == SIG_IGN)
            continue;
        installed[i] = sigaction(sigs[i], &sa, NULL) == 0;
    }
}
