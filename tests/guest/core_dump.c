/*
 * core_dump: a signal whose default action dumps core leaves a core file
 * in the working directory when RLIMIT_CORE allows and the process is
 * dumpable, and the wait status says so (WCOREDUMP, waitid's CLD_DUMPED),
 * also when the core is cut at a limit of a page; no core with
 * RLIMIT_CORE under a page or PR_SET_DUMPABLE 0, nor for SIGKILL. The
 * core is an ELF core whose notes name the process (NT_PRSTATUS's pid, the
 * signal, NT_PRPSINFO's program name) and whose memory holds a global's
 * value. Where the host's core_pattern is not "core" (a pipe to a
 * handler, say) or the hard RLIMIT_CORE is limited, the test says so and
 * checks nothing (the harness counts a SKIP).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/procfs.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long marker = 0x5eed1e55c0ffee00UL;

static void core_name(pid_t pid, char *out, size_t len)
{
    char uses_pid = '0';
    FILE *f = fopen("/proc/sys/kernel/core_uses_pid", "r");
    if (f) {
        uses_pid = (char)fgetc(f);
        fclose(f);
    }
    if (uses_pid == '1')
        snprintf(out, len, "core.%d", (int)pid);
    else
        snprintf(out, len, "core");
}

/* What the core's notes and memory say, one line. */
static void inspect(const char *path, pid_t pid)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        printf("  no core file\n");
        return;
    }
    char *m = malloc((size_t)st.st_size);
    if (!m || read(fd, m, (size_t)st.st_size) != st.st_size) {
        printf("  unreadable core\n");
        close(fd);
        free(m);
        return;
    }
    close(fd);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)m;
    printf("  ELF core %d, mode %o", eh->e_type == ET_CORE,
           (unsigned)(st.st_mode & 0777));
    Elf64_Phdr *ph = (Elf64_Phdr *)(m + eh->e_phoff);
    bool found_marker = false;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_NOTE) {
            for (size_t at = ph[i].p_offset; at < ph[i].p_offset + ph[i].p_filesz;) {
                Elf64_Nhdr *nh = (Elf64_Nhdr *)(m + at);
                char *desc = (char *)(nh + 1) + ((nh->n_namesz + 3) & ~3u);
                if (nh->n_type == NT_PRSTATUS) {
                    struct elf_prstatus *ps = (struct elf_prstatus *)desc;
                    if (ps->pr_pid == pid)
                        printf(", prstatus of the pid with signal %d",
                               ps->pr_cursig);
                } else if (nh->n_type == NT_PRPSINFO) {
                    printf(", program %s", ((struct elf_prpsinfo *)desc)->pr_fname);
                }
                at = (size_t)(desc - m) + ((nh->n_descsz + 3) & ~3u);
            }
        } else if (ph[i].p_type == PT_LOAD &&
                   (unsigned long)&marker >= ph[i].p_vaddr &&
                   (unsigned long)&marker < ph[i].p_vaddr + ph[i].p_filesz) {
            unsigned long v;
            memcpy(&v, m + ph[i].p_offset + ((unsigned long)&marker - ph[i].p_vaddr),
                   sizeof(v));
            found_marker = v == 0x5eed1e55c0ffee01UL;
        }
    }
    printf(", global's value %s\n", found_marker ? "there" : "missing");
    free(m);
}

static void child_dies(const char *what, rlim_t limit, int dumpable, int sig)
{
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        struct rlimit r = {limit, RLIM_INFINITY};
        setrlimit(RLIMIT_CORE, &r);
        if (!dumpable)
            prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        marker++;
        raise(sig);
        _exit(0);
    }
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    waitid(P_PID, (id_t)c, &si, WEXITED | WNOWAIT);
    int status;
    waitpid(c, &status, 0);
    char name[64];
    core_name(c, name, sizeof(name));
    printf("%s: signal %d, WCOREDUMP %d, si_code %s\n", what, WTERMSIG(status),
           WCOREDUMP(status) != 0,
           si.si_code == CLD_DUMPED ? "CLD_DUMPED"
           : si.si_code == CLD_KILLED ? "CLD_KILLED" : "other");
    struct stat st;
    if (limit != RLIM_INFINITY && stat(name, &st) == 0) {
        printf("  a core cut at the limit: %s\n",
               (rlim_t)st.st_size <= limit ? "yes" : "no");
        unlink(name);
    } else if (access(name, F_OK) == 0) {
        inspect(name, c);
        unlink(name);
    } else {
        printf("  no core file\n");
    }
}

int main(void)
{
    char pattern[256] = "";
    FILE *f = fopen("/proc/sys/kernel/core_pattern", "r");
    if (f) {
        if (!fgets(pattern, sizeof(pattern), f))
            pattern[0] = '\0';
        fclose(f);
    }
    pattern[strcspn(pattern, "\n")] = '\0';
    struct rlimit lim;
    if (strcmp(pattern, "core") != 0) {
        printf("not checked here: the host's core_pattern is not \"core\"\n");
        return 0;
    }
    if (getrlimit(RLIMIT_CORE, &lim) == 0 && lim.rlim_max != RLIM_INFINITY) {
        printf("not checked here: RLIMIT_CORE's hard limit is not unlimited\n");
        return 0;
    }
    umask(022);
    child_dies("SIGABRT, unlimited", RLIM_INFINITY, 1, SIGABRT);
    child_dies("SIGSEGV, unlimited", RLIM_INFINITY, 1, SIGSEGV);
    child_dies("SIGABRT, RLIMIT_CORE 0", 0, 1, SIGABRT);
    child_dies("SIGABRT, RLIMIT_CORE a page", 4096, 1, SIGABRT);
    child_dies("SIGABRT, RLIMIT_CORE under a page", 4095, 1, SIGABRT);
    child_dies("SIGABRT, not dumpable", RLIM_INFINITY, 0, SIGABRT);
    child_dies("SIGKILL", RLIM_INFINITY, 1, SIGKILL);
    child_dies("SIGTERM", RLIM_INFINITY, 1, SIGTERM);
    return 0;
}
