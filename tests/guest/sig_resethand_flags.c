/*
 * sig_resethand_flags.c - a handler installed with SA_RESETHAND is reset
 * to SIG_DFL as its signal is delivered, and only the handler: the flags
 * (SA_SIGINFO, SA_RESETHAND, SA_NODEFER) read back unchanged, inside the
 * handler and after it, and the handler got its siginfo (LTP's
 * sigaction01). hvrun used to clear SA_SIGINFO too.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>

static const unsigned long shown = SA_SIGINFO | SA_RESETHAND | SA_NODEFER |
                                   SA_RESTART | SA_ONSTACK;

static void show(const char *when)
{
    struct sigaction now;
    sigaction(SIGUSR1, NULL, &now);
    printf("%s: handler %s, flags %#lx\n", when,
           now.sa_handler == SIG_DFL ? "SIG_DFL" : "ours",
           (unsigned long)now.sa_flags & shown);
}

static volatile int got_info;

static void handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    got_info = si && si->si_signo == sig;
    show("in the handler");
}

int main(void)
{
    unsigned long sets[] = {SA_RESETHAND | SA_SIGINFO,
                            SA_RESETHAND | SA_SIGINFO | SA_NODEFER,
                            SA_RESETHAND | SA_SIGINFO | SA_RESTART};
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = handler;
        sa.sa_flags = (int)sets[i];
        sigaction(SIGUSR1, &sa, NULL);
        printf("set %#lx\n", sets[i]);
        raise(SIGUSR1);
        printf("siginfo given: %d\n", got_info);
        show("after");
    }
    return 0;
}
