/*
 * test_stack.c - proxy_stack_build (syscall-proxy/mm/stack.c): the initial
 * stack must be laid out as Linux's create_elf_tables() lays it out.
 */
#include <criterion/criterion.h>

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"

#define TOP 0x7ffffffff000ULL
#define BUF_BYTES 65536

static uint8_t buf[BUF_BYTES];

static char *const test_argv[] = {"prog", "a", NULL};
static char *const test_envp[] = {"X=1", NULL};

static struct proxy_auxv_input test_ai(void)
{
    struct proxy_auxv_input ai = {
        .phdr = 0x555555554040, .phent = 56, .phnum = 13,
        .entry = 0x555555556000, .base = 0x7ffff7fc3000,
        .hwcap = 0x178bfbff, .hwcap2 = 2,
        .minsigstksz = PROXY_MINSIGSTKSZ(832),
        .uid = 1001, .euid = 1002, .gid = 1003, .egid = 1004, .secure = 0,
        .platform = "x86_64", .execfn = "/usr/bin/prog"};
    for (int i = 0; i < 16; i++)
        ai.random[i] = (uint8_t)(0xa0 + i);
    return ai;
}

/* Host view of guest address g inside the buffer standing for
 * [TOP - len, TOP). */
static uint8_t *host(gva_t g, size_t len)
{
    cr_assert(g >= TOP - len && g < TOP, "gva %#llx outside the buffer",
              (unsigned long long)g);
    return buf + (g - (TOP - len));
}

static uint64_t word(gva_t g)
{
    uint64_t v;
    memcpy(&v, host(g, BUF_BYTES), 8);
    return v;
}

static const char *str(gva_t g) { return (const char *)host(g, BUF_BYTES); }

struct parsed {
    gva_t sp;
    uint64_t argc;
    gva_t argv[8];
    gva_t envp[8];
    size_t envc;
    uint64_t aux_val[64];
    int aux_count[64];
    size_t nr_aux;
    gva_t table_end; /* one past AT_NULL's value */
};

static struct parsed parse_built(const struct proxy_auxv_input *in)
{
    struct proxy_auxv_input ai = *in;
    struct parsed ps;
    memset(&ps, 0, sizeof(ps));
    memset(buf, 0xcc, sizeof(buf));
    int rc = proxy_stack_build(buf, sizeof(buf), TOP, test_argv, test_envp,
                               &ai, &ps.sp);
    cr_assert_eq(rc, 0, "proxy_stack_build = %d", rc);
    gva_t p = ps.sp;
    ps.argc = word(p);
    p += 8;
    for (uint64_t i = 0; i <= ps.argc && i < 8; i++, p += 8)
        ps.argv[i] = word(p);
    while ((ps.envp[ps.envc] = word(p)) != 0 && ps.envc < 7) {
        ps.envc++;
        p += 8;
    }
    p += 8;
    for (;;) {
        uint64_t key = word(p), val = word(p + 8);
        p += 16;
        ps.nr_aux++;
        cr_assert_lt(key, 64, "unexpected auxv key %llu",
                     (unsigned long long)key);
        ps.aux_val[key] = val;
        ps.aux_count[key]++;
        if (key == AT_NULL)
            break;
        cr_assert_lt(ps.nr_aux, 64, "auxv not terminated");
    }
    ps.table_end = p;
    return ps;
}

static struct parsed build_and_parse(void)
{
    struct proxy_auxv_input ai = test_ai();
    return parse_built(&ai);
}

Test(stack, sp_is_16_aligned_and_inside)
{
    struct parsed ps = build_and_parse();
    cr_assert_eq(ps.sp % 16, 0, "sp %#llx", (unsigned long long)ps.sp);
    cr_assert(ps.sp >= TOP - BUF_BYTES && ps.sp < TOP);
}

Test(stack, argc_argv_envp)
{
    struct parsed ps = build_and_parse();
    cr_assert_eq(ps.argc, 2);
    cr_assert_str_eq(str(ps.argv[0]), "prog");
    cr_assert_str_eq(str(ps.argv[1]), "a");
    cr_assert_eq(ps.argv[2], 0, "argv NULL terminator");
    cr_assert_eq(ps.envc, 1);
    cr_assert_str_eq(str(ps.envp[0]), "X=1");
    /* envp[1] == NULL is what stopped the parse; check it explicitly. */
    cr_assert_eq(word(ps.sp + 8 * (1 + 3 + 1)), 0, "envp NULL terminator");
}

Test(stack, auxv_has_every_key_once)
{
    struct parsed ps = build_and_parse();
    static const int keys[] = {AT_PHDR,   AT_PHENT,  AT_PHNUM,  AT_PAGESZ,
                               AT_BASE,   AT_ENTRY,  AT_RANDOM, AT_HWCAP,
                               AT_HWCAP2, AT_CLKTCK, AT_UID,    AT_EUID,
                               AT_GID,    AT_EGID,   AT_SECURE, AT_EXECFN,
                               AT_PLATFORM, AT_MINSIGSTKSZ, AT_NULL};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        cr_assert_eq(ps.aux_count[keys[i]], 1, "auxv key %d appears %d times",
                     keys[i], ps.aux_count[keys[i]]);
    /* Nothing else that Linux would not give (AT_FLAGS is Linux's too; no
     * vDSO was given here, so no AT_SYSINFO_EHDR). */
    for (int k = 0; k < 64; k++) {
        bool known = k == AT_FLAGS;
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
            known |= keys[i] == k;
        if (!known)
            cr_assert_eq(ps.aux_count[k], 0, "unexpected auxv key %d", k);
    }
    /* AT_NULL is last with value 0. */
    cr_assert_eq(word(ps.table_end - 16), AT_NULL);
    cr_assert_eq(word(ps.table_end - 8), 0);
}

Test(stack, auxv_values)
{
    struct parsed ps = build_and_parse();
    struct proxy_auxv_input ai = test_ai();
    cr_assert_eq(ps.aux_val[AT_PHDR], ai.phdr);
    cr_assert_eq(ps.aux_val[AT_PHENT], ai.phent);
    cr_assert_eq(ps.aux_val[AT_PHNUM], ai.phnum);
    cr_assert_eq(ps.aux_val[AT_PAGESZ], 4096);
    cr_assert_eq(ps.aux_val[AT_BASE], ai.base);
    cr_assert_eq(ps.aux_val[AT_ENTRY], ai.entry);
    cr_assert_eq(ps.aux_val[AT_HWCAP], ai.hwcap);
    cr_assert_eq(ps.aux_val[AT_HWCAP2], ai.hwcap2);
    cr_assert_eq(ps.aux_val[AT_CLKTCK], 100);
    cr_assert_eq(ps.aux_val[AT_UID], 1001);
    cr_assert_eq(ps.aux_val[AT_EUID], 1002);
    cr_assert_eq(ps.aux_val[AT_GID], 1003);
    cr_assert_eq(ps.aux_val[AT_EGID], 1004);
    cr_assert_eq(ps.aux_val[AT_SECURE], 0);
    cr_assert_eq(ps.aux_val[AT_MINSIGSTKSZ], ai.minsigstksz);
    /* The frame must at least hold the rt_sigframe and the XSAVE image. */
    cr_assert_geq(PROXY_MINSIGSTKSZ(832), 440 + 832);
    cr_assert_eq(PROXY_MINSIGSTKSZ(832) % 16, 0);
}

Test(stack, auxv_pointers)
{
    struct parsed ps = build_and_parse();
    struct proxy_auxv_input ai = test_ai();
    cr_assert_eq(memcmp(host(ps.aux_val[AT_RANDOM], BUF_BYTES), ai.random,
                        16),
                 0, "AT_RANDOM bytes");
    cr_assert_str_eq(str(ps.aux_val[AT_EXECFN]), "/usr/bin/prog");
    cr_assert_str_eq(str(ps.aux_val[AT_PLATFORM]), "x86_64");
    /* The pointed-to data lies above the pointer table. */
    cr_assert_geq(ps.aux_val[AT_RANDOM], ps.table_end);
    cr_assert_geq(ps.aux_val[AT_PLATFORM], ps.table_end);
}

Test(stack, strings_in_linux_order)
{
    struct parsed ps = build_and_parse();
    gva_t a0 = ps.argv[0], a1 = ps.argv[1], e0 = ps.envp[0];
    gva_t fn = ps.aux_val[AT_EXECFN];
    /* argv strings, then envp strings, then execfn, packed together. */
    cr_assert_eq(a1, a0 + sizeof("prog"));
    cr_assert_eq(e0, a1 + sizeof("a"));
    cr_assert_eq(fn, e0 + sizeof("X=1"));
    /* execfn ends 8 bytes below the top; the last 8 bytes are zero. */
    cr_assert_eq(fn + sizeof("/usr/bin/prog"), TOP - 8);
    cr_assert_eq(word(TOP - 8), 0);
    /* Platform string and random bytes sit below the argument strings,
     * the random bytes lowest (as create_elf_tables pushes them). */
    cr_assert_lt(ps.aux_val[AT_PLATFORM] + sizeof("x86_64"), a0 + 1);
    cr_assert_leq(ps.aux_val[AT_RANDOM] + 16, ps.aux_val[AT_PLATFORM]);
}

Test(stack, empty_envp_and_null_envp)
{
    struct proxy_auxv_input ai = test_ai();
    char *const no_env[] = {NULL};
    gva_t sp = 0;
    cr_assert_eq(proxy_stack_build(buf, sizeof(buf), TOP, test_argv, no_env,
                                   &ai, &sp),
                 0);
    cr_assert_eq(word(sp), 2);
    cr_assert_eq(word(sp + 8 * 3), 0, "argv terminator");
    cr_assert_eq(word(sp + 8 * 4), 0, "empty envp terminator");
    cr_assert_eq(sp % 16, 0);
    cr_assert_eq(proxy_stack_build(buf, sizeof(buf), TOP, test_argv, NULL,
                                   &ai, &sp),
                 0);
    cr_assert_eq(word(sp + 8 * 4), 0);
}

Test(stack, alignment_for_every_string_length)
{
    struct proxy_auxv_input ai = test_ai();
    char arg[64];
    for (int len = 0; len < 40; len++) {
        memset(arg, 'x', (size_t)len);
        arg[len] = 0;
        char *const v[] = {"p", arg, NULL};
        gva_t sp = 0;
        cr_assert_eq(proxy_stack_build(buf, sizeof(buf), TOP, v, test_envp,
                                       &ai, &sp),
                     0);
        cr_assert_eq(sp % 16, 0, "len %d: sp %#llx", len,
                     (unsigned long long)sp);
        cr_assert_str_eq(str(word(sp + 16)), arg);
    }
}

Test(stack, too_small_is_e2big)
{
    struct proxy_auxv_input ai = test_ai();
    gva_t sp = 0;
    cr_assert_eq(proxy_stack_build(buf, 64, TOP, test_argv, test_envp, &ai,
                                   &sp),
                 -E2BIG);
    cr_assert_eq(proxy_stack_build(buf, 0, TOP, test_argv, test_envp, &ai,
                                   &sp),
                 -E2BIG);
    /* A huge argument does not fit a normal buffer either. */
    size_t big_len = 100000;
    char *big = malloc(big_len + 1);
    cr_assert_not_null(big);
    memset(big, 'y', big_len);
    big[big_len] = 0;
    char *const v[] = {"p", big, NULL};
    cr_assert_eq(proxy_stack_build(buf, sizeof(buf), TOP, v, test_envp, &ai,
                                   &sp),
                 -E2BIG);
    free(big);
}

Test(stack, single_string_over_max_arg_strlen_is_e2big)
{
    struct proxy_auxv_input ai = test_ai();
    size_t len = PROXY_MAX_ARG_STRLEN; /* + NUL is one too many */
    size_t blen = 4 * PROXY_MAX_ARG_STRLEN;
    char *s = malloc(len + 1);
    uint8_t *big = malloc(blen);
    cr_assert(s && big);
    memset(s, 'z', len);
    s[len] = 0;
    char *const v[] = {"p", s, NULL};
    gva_t sp = 0;
    cr_assert_eq(proxy_stack_build(big, blen, TOP, v, test_envp, &ai, &sp),
                 -E2BIG);
    s[len - 1] = 0; /* now exactly PROXY_MAX_ARG_STRLEN with the NUL */
    cr_assert_eq(proxy_stack_build(big, blen, TOP, v, test_envp, &ai, &sp), 0);
    free(s);
    free(big);
}

/*
 * For every buffer size the builder either fails with -E2BIG or succeeds,
 * and it never writes outside [buf, buf + len): guard bytes on both sides
 * must survive.
 */
Test(stack, never_writes_outside_the_buffer)
{
    struct proxy_auxv_input ai = test_ai();
    enum { GUARD = 256, MAXLEN = 512 };
    static uint8_t area[GUARD + MAXLEN + GUARD];
    for (size_t len = 0; len <= MAXLEN; len++) {
        memset(area, 0xcc, sizeof(area));
        uint8_t *b = area + GUARD + (MAXLEN - len);
        gva_t sp = 0;
        int rc = proxy_stack_build(b, len, TOP, test_argv, test_envp, &ai,
                                   &sp);
        cr_assert(rc == 0 || rc == -E2BIG, "len %zu: rc %d", len, rc);
        for (size_t i = 0; i < GUARD + MAXLEN - len; i++)
            cr_assert_eq(area[i], 0xcc,
                         "buffer of %zu bytes: wrote %zu bytes below it", len,
                         GUARD + MAXLEN - len - i);
        for (size_t i = GUARD + MAXLEN; i < sizeof(area); i++)
            cr_assert_eq(area[i], 0xcc, "len %zu: wrote above the buffer",
                         len);
        if (rc == 0)
            cr_assert(sp >= TOP - len && sp % 16 == 0, "len %zu: sp", len);
    }
}

Test(stack, vdso_is_announced_first)
{
    struct proxy_auxv_input ai = test_ai();
    ai.sysinfo_ehdr = 0x7ffff7fc1000ULL;
    struct parsed ps = parse_built(&ai);
    cr_assert_eq(ps.aux_count[AT_SYSINFO_EHDR], 1);
    cr_assert_eq(ps.aux_val[AT_SYSINFO_EHDR], 0x7ffff7fc1000ULL);
    /* Right after envp's NULL, as Linux puts it. */
    gva_t auxv = ps.sp + 8 * (1 + ps.argc + 1 + ps.envc + 1);
    cr_assert_eq(word(auxv), AT_SYSINFO_EHDR);
    cr_assert_eq(ps.aux_count[AT_NULL], 1);
}
