/*
 * guest_check.h - what the guest test programs share: CHECK, which on a
 * false condition prints "FAIL file:line: condition (errno ...)" on stdout
 * (which the runners compare with a native run) and exits 1, and
 * result_text, how a call's result is printed.
 */
#ifndef GUEST_CHECK_H
#define GUEST_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("FAIL %s:%d: %s (errno %d %s)\n", __FILE__, __LINE__,   \
                   #cond, errno, strerror(errno));                         \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

/* A call's result as the tests print it: its value, or the name of errno
 * when it failed (-1). The text is in a static buffer, so a printf may hold
 * only one. Only for programs built with _GNU_SOURCE (strerrorname_np). */
#ifdef _GNU_SOURCE
static inline const char *result_text(long rc)
{
    static char buf[32];
    if (rc < 0)
        return strerrorname_np(errno);
    snprintf(buf, sizeof(buf), "%ld", rc);
    return buf;
}
#endif

#endif
