/*
 * guest_check.h - the one failure check of the guest test programs: on a
 * false condition, print "FAIL file:line: condition (errno ...)" on stdout
 * (which the runners compare with a native run) and exit 1.
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

#endif
