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

#endif
