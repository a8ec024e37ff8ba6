/*
 * stack.c - the initial process stack, laid out exactly as Linux's
 * create_elf_tables() does with randomisation off:
 *
 *   stack_top - 8:   8 zero bytes
 *   below:           execfn string, envp strings, argv strings (the first
 *                    argv string lowest), then align to 16
 *   below:           platform string "x86_64", 16 AT_RANDOM bytes
 *   below (16-aligned sp): argc, argv[], NULL, envp[], NULL, auxv pairs
 */
#include "loader.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct builder {
    uint8_t *buf;
    size_t len;
    gva_t top;   /* guest address of buf + len */
    gva_t p;     /* current position (guest address) */
};

static uint8_t *at(struct builder *b, gva_t gva)
{
    return b->buf + (gva - (b->top - b->len));
}

static int push_bytes(struct builder *b, const void *src, size_t n,
                      gva_t *where)
{
    if (b->p - (b->top - b->len) < n)
        return -E2BIG;
    b->p -= n;
    memcpy(at(b, b->p), src, n);
    if (where)
        *where = b->p;
    return 0;
}

static size_t count(char *const v[])
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

/* Copies strings last-first, as copy_strings() does, recording addresses. */
static int push_strings(struct builder *b, char *const v[], size_t n,
                        gva_t *addrs)
{
    for (size_t i = n; i-- > 0;) {
        size_t len = strlen(v[i]) + 1;
        if (len > PROXY_MAX_ARG_STRLEN)
            return -E2BIG;
        int rc = push_bytes(b, v[i], len, &addrs[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int build(struct builder *b, char *const argv[], size_t argc,
                 gva_t *argv_at, char *const envp[], size_t envc,
                 gva_t *envp_at, const struct proxy_auxv_input *ai,
                 gva_t *sp_out)
{
    static const uint8_t zero8[8];
    gva_t execfn_at, platform_at, random_at;
    int rc = push_bytes(b, zero8, 8, NULL);
    if (rc == 0)
        rc = push_bytes(b, ai->execfn, strlen(ai->execfn) + 1, &execfn_at);
    if (rc == 0)
        rc = push_strings(b, envp, envc, envp_at);
    if (rc == 0)
        rc = push_strings(b, argv, argc, argv_at);
    if (rc < 0)
        return rc;
    b->p &= ~0xfULL;
    if (b->p < b->top - b->len)
        return -E2BIG;
    rc = push_bytes(b, ai->platform, strlen(ai->platform) + 1, &platform_at);
    if (rc == 0)
        rc = push_bytes(b, ai->random, 16, &random_at);
    if (rc < 0)
        return rc;

    uint64_t auxv[][2] = {
        {AT_SYSINFO_EHDR, ai->sysinfo_ehdr},
        {AT_MINSIGSTKSZ, ai->minsigstksz},
        {AT_HWCAP, ai->hwcap},   {AT_PAGESZ, 4096},
        {AT_CLKTCK, 100},        {AT_PHDR, ai->phdr},
        {AT_PHENT, ai->phent},   {AT_PHNUM, ai->phnum},
        {AT_BASE, ai->base},     {AT_FLAGS, 0},
        {AT_ENTRY, ai->entry},   {AT_UID, ai->uid},
        {AT_EUID, ai->euid},     {AT_GID, ai->gid},
        {AT_EGID, ai->egid},     {AT_SECURE, ai->secure},
        {AT_RANDOM, random_at},  {AT_HWCAP2, ai->hwcap2},
        {AT_EXECFN, execfn_at},  {AT_PLATFORM, platform_at},
        {AT_NULL, 0},
    };
    /* Without a vDSO there is no AT_SYSINFO_EHDR at all, as on Linux. */
    size_t skip = ai->sysinfo_ehdr ? 0 : 1;
    size_t aux_words = sizeof(auxv) / 8 - 2 * skip;
    size_t words = 1 + argc + 1 + envc + 1 + aux_words;
    if (b->p - (b->top - b->len) < words * 8 + 16)
        return -E2BIG;
    gva_t sp = (b->p - words * 8) & ~0xfULL;
    gva_t *frame = calloc(words, sizeof(gva_t));
    if (!frame)
        return -ENOMEM;
    size_t w = 0;
    frame[w++] = argc;
    for (size_t i = 0; i < argc; i++)
        frame[w++] = argv_at[i];
    frame[w++] = 0;
    for (size_t i = 0; i < envc; i++)
        frame[w++] = envp_at[i];
    frame[w++] = 0;
    memcpy(&frame[w], auxv[skip], aux_words * 8);
    memcpy(at(b, sp), frame, words * sizeof(gva_t));
    free(frame);
    *sp_out = sp;
    return 0;
}

int proxy_stack_build(uint8_t *buf, size_t buf_len, gva_t stack_top,
                      char *const argv[], char *const envp[],
                      const struct proxy_auxv_input *ai, gva_t *sp_out)
{
    struct builder b = {buf, buf_len, stack_top, stack_top};
    size_t argc = count(argv), envc = count(envp);
    if ((argc + envc) * 8 > buf_len)
        return -E2BIG;
    gva_t *addrs = calloc(argc + envc + 1, sizeof(gva_t));
    if (!addrs)
        return -ENOMEM;
    int rc = build(&b, argv, argc, addrs, envp, envc, addrs + argc, ai,
                   sp_out);
    free(addrs);
    return rc;
}
