/*
 * exec_text_same.c - processes that exec the same program one after
 * another see the same mappings and the same bytes in their libc's code
 * (read through /proc/self/mem, as a debugger or a program that checks
 * its own text does), and their rewritten instructions give the same
 * answers. Under hvrun the first child's libc text is rewritten the long
 * way, the second's replays what the first did, and the third's is mapped
 * as one piece (syscall-proxy/mm/cpuid_patch.c, "a text's rewriting,
 * replayed"): none of that may show. Natively the layouts match with
 * address randomisation off, which each child is started with.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define CHILDREN 3

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* The hash of the bytes of every executable mapping of libc. */
static uint64_t libc_text_hash(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int mem = open("/proc/self/mem", O_RDONLY);
    CHECK(f && mem >= 0);
    uint64_t h = 0xcbf29ce484222325ULL;
    char line[512], buf[4096];
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char perms[8];
        if (!strstr(line, "libc.so") ||
            sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
            perms[2] != 'x')
            continue;
        for (unsigned long a = lo; a < hi; a += sizeof(buf)) {
            CHECK(pread(mem, buf, sizeof(buf), (off_t)a) ==
                  (ssize_t)sizeof(buf));
            h = fnv(h, buf, sizeof(buf));
        }
    }
    fclose(f);
    close(mem);
    return h;
}

static uint64_t maps_hash(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    uint64_t h = 0xcbf29ce484222325ULL;
    char line[512];
    while (fgets(line, sizeof(line), f))
        h = fnv(h, line, strlen(line));
    fclose(f);
    return h;
}

/* What a child prints: its layout, its libc text, and what calls that
 * hvrun answers in the guest give (ids, the signal mask, a disposition). */
static int child(void)
{
    sigset_t mask;
    struct sigaction sa;
    CHECK(sigprocmask(SIG_BLOCK, NULL, &mask) == 0);
    CHECK(sigaction(SIGUSR1, NULL, &sa) == 0);
    printf("maps %016llx text %016llx ppid-is-parent %d uid %d mask %d "
           "usr1 %s\n",
           (unsigned long long)maps_hash(),
           (unsigned long long)libc_text_hash(),
           getppid() == atoi(getenv("EXEC_TEXT_PARENT")), (int)getuid(),
           sigismember(&mask, SIGUSR1),
           sa.sa_handler == SIG_DFL ? "default" : "set");
    return 0;
}

/* One child's line, read from its stdout. */
static void run_child(const char *self, char *out, size_t len)
{
    int fd[2];
    CHECK(pipe(fd) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        personality(ADDR_NO_RANDOMIZE);
        execl(self, self, "child", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    ssize_t n = 0, got;
    while ((got = read(fd[0], out + n, len - 1 - (size_t)n)) > 0)
        n += got;
    out[n > 0 ? n : 0] = 0;
    close(fd[0]);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return child();
    char parent[16], lines[CHILDREN][512];
    snprintf(parent, sizeof(parent), "%d", (int)getpid());
    setenv("EXEC_TEXT_PARENT", parent, 1);
    for (int i = 0; i < CHILDREN; i++)
        run_child("/proc/self/exe", lines[i], sizeof(lines[i]));
    for (int i = 1; i < CHILDREN; i++)
        if (strcmp(lines[i], lines[0]) != 0) {
            printf("child 1: %schild %d: %s", lines[0], i + 1, lines[i]);
            return 1;
        }
    CHECK(strstr(lines[0], "ppid-is-parent 1") != NULL);
    printf("%d children that exec'd the same program agree\n", CHILDREN);
    return 0;
}
