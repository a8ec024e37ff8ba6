/*
 * progress_copy.h - a counted loop's body copied into its trampoline
 * (progress_copy.c says what may be copied and why).
 */
#ifndef PROXY_MM_PROGRESS_COPY_H
#define PROXY_MM_PROGRESS_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aspace.h"

/* The longest body copied: a tight loop's, not a function's. */
#define PROGRESS_COPY_MAX 96

/* The body [va, va+len) (its bytes in body) made to run at `at`, the same
 * length, into out; false when it may not run anywhere but the text. */
bool progress_copy_body(const uint8_t *body, size_t len, gva_t va, gva_t at,
                        uint8_t *out);

/* The most jumps out of a body that progress.c unrolls (each turn of an
 * unrolled group gives each its own way out). */
#define PROGRESS_COPY_EXITS 2

/* What unrolling the body [va, va+len) needs (progress.c, groups): its
 * rel32 jumps out (where each one's rel32 lies in the body, and its
 * target), whether it may be unrolled at all: no indirect jump (its way
 * out could not be given a turn's own), at most PROGRESS_COPY_EXITS jumps
 * out, and CF written before anything reads it or branches from the
 * body's head (the group's count at the head changes CF; the finder's
 * check covers the other status flags). */
struct progress_copy_exits {
    size_t n;
    size_t rel_at[PROGRESS_COPY_EXITS];
    gva_t target[PROGRESS_COPY_EXITS];
};
bool progress_copy_unrollable(const uint8_t *body, size_t len, gva_t va,
                              struct progress_copy_exits *out);

#endif
