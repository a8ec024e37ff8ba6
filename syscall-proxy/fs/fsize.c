/*
 * fsize.c - RLIMIT_FSIZE, the largest file a process may make: Linux's
 * generic_write_check_limits (a write is cut at the limit; one that starts
 * at or past it is EFBIG) and inode_newsize_ok (truncate, ftruncate and
 * fallocate growing a file past it are EFBIG). Each refusal sends the
 * calling thread SIGXFSZ first, as send_sig(SIGXFSZ, current, 0) does:
 * its default action ends the process with a core dump.
 *
 * Regular files only: Linux applies the limit in the paths of regular
 * files (pipes, sockets and devices have no size to grow). The host never
 * sees the guest's limit (hvrun's own is not the guest's), so it is
 * checked here before the host call.
 */
#include "proxy.h"
#include "kernel.h"
#include "fs.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static void send_sigxfsz(struct proxy_process *p)
{
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    info.si_signo = SIGXFSZ;
    info.si_code = SI_USER; /* SEND_SIG_NOINFO: from the process itself */
    info.si_pid = proxy_ns_pid_of(p, p);
    info.si_uid = proxy_ns_uid_seen(p, p->cred.ruid);
    proxy_signal_raise_thread(p, p->tid, SIGXFSZ, &info);
}

/* The limit that applies to host_fd's file (RLIM_INFINITY: none), and its
 * size. */
static rlim_t limit_for(const struct proxy_process *p, int host_fd,
                        off_t *size)
{
    rlim_t limit = p->rlimits[RLIMIT_FSIZE].rlim_cur;
    struct stat st;
    if (limit == RLIM_INFINITY || fstat(host_fd, &st) < 0 ||
        !S_ISREG(st.st_mode))
        return RLIM_INFINITY;
    *size = st.st_size;
    return limit;
}

long proxy_fsize_check_size(struct proxy_process *p, int host_fd,
                            uint64_t new_size)
{
    off_t size = 0;
    rlim_t limit = limit_for(p, host_fd, &size);
    if (limit == RLIM_INFINITY || new_size <= (uint64_t)size ||
        new_size <= limit)
        return 0;
    send_sigxfsz(p);
    return -EFBIG;
}

long proxy_fsize_clip_write(struct proxy_process *p, int host_fd, int64_t pos,
                            struct iovec *iov, int *n)
{
    off_t size = 0;
    rlim_t limit = limit_for(p, host_fd, &size);
    if (limit == RLIM_INFINITY)
        return 0;
    if (pos < 0) { /* at the fd's position, or its end with O_APPEND */
        int fl = fcntl(host_fd, F_GETFL);
        pos = fl >= 0 && (fl & O_APPEND) ? size : lseek(host_fd, 0, SEEK_CUR);
        if (pos < 0)
            return 0; /* the host call will say what is wrong */
    }
    uint64_t total = 0;
    for (int i = 0; i < *n; i++)
        total += iov[i].iov_len;
    if (total == 0)
        return 0;
    if ((uint64_t)pos >= limit) {
        send_sigxfsz(p);
        return -EFBIG;
    }
    uint64_t room = limit - (uint64_t)pos;
    for (int i = 0; i < *n; i++) {
        if (iov[i].iov_len >= room) { /* the last segment that fits */
            iov[i].iov_len = room;
            *n = i + 1;
            break;
        }
        room -= iov[i].iov_len;
    }
    return 0;
}
