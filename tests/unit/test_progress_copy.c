/*
 * test_progress_copy.c - which loop bodies progress_copy_body copies into
 * a trampoline (syscall-proxy/mm/progress_copy.c), and how: the same
 * length and offsets, RIP-relative displacements and forward rel32 jumps
 * out of the body moved to reach the same targets from the copy, forward
 * jumps inside it kept; refused: a backward jump, a rel8 jump out, a
 * call, RDTSC, SYSCALL, a body that ends inside an instruction.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "progress_copy.h"

#define VA 0x555555554000ULL /* the body in the text */
#define AT 0x555555450000ULL /* its copy, below */

static int32_t rel_at(const uint8_t *b)
{
    int32_t r;
    memcpy(&r, b, 4);
    return r;
}

Test(progress_copy, straight_line_copied_as_is)
{
    /* imul %rcx,%rsi; add %rdx,%rsi; add $1,%rdx */
    const uint8_t body[] = {0x48, 0x0f, 0xaf, 0xf1, 0x48, 0x01,
                            0xd6, 0x48, 0x83, 0xc2, 0x01};
    uint8_t out[sizeof(body)];
    cr_assert(progress_copy_body(body, sizeof(body), VA, AT, out));
    cr_assert(memcmp(out, body, sizeof(body)) == 0);
}

Test(progress_copy, rip_relative_moved)
{
    /* mov 0x100(%rip),%rax: reads VA + 7 + 0x100 */
    const uint8_t body[] = {0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00};
    uint8_t out[sizeof(body)];
    cr_assert(progress_copy_body(body, sizeof(body), VA, AT, out));
    cr_assert_eq(AT + 7 + (uint64_t)(int64_t)rel_at(out + 3), VA + 7 + 0x100);
    cr_assert(memcmp(out, body, 3) == 0);
}

Test(progress_copy, forward_jump_inside_kept)
{
    /* cmp $5,%rcx; jne +1; nop; add %rcx,%rax */
    const uint8_t body[] = {0x48, 0x83, 0xf9, 0x05, 0x75, 0x01,
                            0x90, 0x48, 0x01, 0xc8};
    uint8_t out[sizeof(body)];
    cr_assert(progress_copy_body(body, sizeof(body), VA, AT, out));
    cr_assert(memcmp(out, body, sizeof(body)) == 0);
}

Test(progress_copy, forward_rel32_out_moved)
{
    /* test %rax,%rax; je rel32 to VA + 9 + 0x1000 (past the body) */
    const uint8_t body[] = {0x48, 0x85, 0xc0, 0x0f, 0x84,
                            0x00, 0x10, 0x00, 0x00};
    uint8_t out[sizeof(body)];
    cr_assert(progress_copy_body(body, sizeof(body), VA, AT, out));
    cr_assert_eq(AT + 9 + (uint64_t)(int64_t)rel_at(out + 5),
                 VA + 9 + 0x1000);
}

Test(progress_copy, refused)
{
    uint8_t out[16];
    /* jne back to the body's start: an inner loop */
    const uint8_t back[] = {0x48, 0xff, 0xc8, 0x75, 0xfb};
    cr_assert_not(progress_copy_body(back, sizeof(back), VA, AT, out));
    /* je rel8 out of the body: cannot reach from the copy */
    const uint8_t out8[] = {0x48, 0x85, 0xc0, 0x74, 0x40};
    cr_assert_not(progress_copy_body(out8, sizeof(out8), VA, AT, out));
    /* call rel32: the return address would name the copy */
    const uint8_t call[] = {0xe8, 0x00, 0x00, 0x00, 0x00};
    cr_assert_not(progress_copy_body(call, sizeof(call), VA, AT, out));
    /* rdtsc: answered in the text only */
    const uint8_t tsc[] = {0x0f, 0x31};
    cr_assert_not(progress_copy_body(tsc, sizeof(tsc), VA, AT, out));
    /* syscall */
    const uint8_t sys[] = {0x0f, 0x05};
    cr_assert_not(progress_copy_body(sys, sizeof(sys), VA, AT, out));
    /* a body that ends inside an instruction (mov $imm32 cut short) */
    const uint8_t cut[] = {0x48, 0xc7, 0xc0, 0x01, 0x00};
    cr_assert_not(progress_copy_body(cut, sizeof(cut), VA, AT, out));
    /* longer than PROGRESS_COPY_MAX */
    uint8_t nops[PROGRESS_COPY_MAX + 1], big[PROGRESS_COPY_MAX + 1];
    memset(nops, 0x90, sizeof(nops));
    cr_assert_not(progress_copy_body(nops, sizeof(nops), VA, AT, big));
}
