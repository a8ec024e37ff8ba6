/*
 * test_loader.c - proxy_exec_load (syscall-proxy/mm/loader.c) against a real
 * VM: the deterministic layout of a dynamic PIE, a static binary, #!
 * scripts and the error paths. Needs /dev/kvm; without it every test is
 * skipped with the reason.
 */
#include <criterion/criterion.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "det.h"
#include "loader.h"
#include "proxy.h"
#include "config.h"
#include "mm.h"

static struct vmm_host *host;
static struct vmm_vm *vm;
static struct det_state det;
static struct proxy_config cfg;
static struct proxy_process *proc;
static char why[512];
static char tmpdir[64];

static void setup(void)
{
    if (access("/dev/kvm", R_OK | W_OK) != 0) {
        printf("SKIP: no /dev/kvm (%s)\n", strerror(errno));
        fflush(stdout);
        cr_skip_test("no /dev/kvm");
    }
    int rc = vmm_host_open(&host, why, sizeof(why));
    if (rc == -ENOENT || rc == -EACCES || rc == -EPERM || rc == -ENODEV ||
        rc == -ENXIO) {
        printf("SKIP: KVM unusable here: %s\n", why);
        fflush(stdout);
        cr_skip_test("KVM unusable");
    }
    cr_assert_eq(rc, 0, "vmm_host_open: %s", why);
    rc = vmm_vm_create(host, &vm, why, sizeof(why));
    cr_assert_eq(rc, 0, "vmm_vm_create: %s", why);
    struct det_config dc = {.seed = 1};
    det_init(&det, &dc);
    cfg = (struct proxy_config){.fail_closed = false, .log_level = 0,
                                .log = stderr};
    rc = proxy_process_create(&proc, vm, &det, &cfg);
    cr_assert_eq(rc, 0, "proxy_process_create = %d", rc);
    proc->hwcap = vmm_host_hwcap(host);
    proc->hwcap2 = vmm_host_hwcap2(host);
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/hvrun-test-loader-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
    why[0] = 0;
}

static void teardown(void)
{
    if (proc)
        proxy_process_destroy(proc);
    if (vm)
        vmm_vm_destroy(vm);
    if (host)
        vmm_host_close(host);
    if (tmpdir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "test_loader: could not remove %s\n", tmpdir);
    }
}

TestSuite(loader, .init = setup, .fini = teardown, .timeout = 60);

static char *const envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};

static Elf64_Ehdr read_ehdr(const char *path)
{
    Elf64_Ehdr eh;
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0, "open %s", path);
    cr_assert_eq(read(fd, &eh, sizeof(eh)), (ssize_t)sizeof(eh));
    close(fd);
    return eh;
}

static uint64_t guest_word(gva_t g)
{
    uint64_t v = 0;
    cr_assert_eq(vmm_as_copy_in(proc->as, &v, g, 8), 0, "read %#llx",
                 (unsigned long long)g);
    return v;
}

static void guest_str(gva_t g, char *out, size_t max)
{
    cr_assert_geq(vmm_as_strncpy_in(proc->as, out, g, max), 0);
}

/* Looks up an auxv entry on the initial stack at rsp. */
static uint64_t auxv_get(uint64_t key, bool *found)
{
    gva_t p = vmm_vm_regs(vm)->rsp;
    uint64_t argc = guest_word(p);
    p += 8 * (argc + 2);
    while (guest_word(p))
        p += 8;
    p += 8;
    for (int i = 0; i < 64; i++, p += 16) {
        uint64_t k = guest_word(p);
        if (k == key) {
            *found = true;
            return guest_word(p + 8);
        }
        if (k == AT_NULL)
            break;
    }
    *found = false;
    return 0;
}

static uint64_t auxv_must(uint64_t key)
{
    bool found = false;
    uint64_t v = auxv_get(key, &found);
    cr_assert(found, "auxv key %llu missing", (unsigned long long)key);
    return v;
}

static const struct vmm_vma *vma_named_lowest(const char *name)
{
    for (size_t i = 0; i < proc->as->nr_vmas; i++) {
        const struct vmm_vma *v = proc->as->vmas[i];
        if (v->name && strcmp(v->name, name) == 0)
            return v;
    }
    return NULL;
}

static void load_ok(const char *path, char *const argv[])
{
    int rc = proxy_exec_load(proc, path, NULL, argv, envp, why, sizeof(why));
    cr_assert_eq(rc, 0, "proxy_exec_load(%s) = %d: %s", path, rc, why);
}

static void check_stack_vma(void)
{
    const struct vmm_vma *st = vmm_as_find_vma(proc->as, PROXY_STACK_TOP - 1);
    cr_assert_not_null(st, "no [stack] VMA below 0x7ffffffff000");
    cr_assert_eq(st->end, 0x7ffffffff000ULL);
    cr_assert(st->flags & VMM_VMA_STACK);
    cr_assert_not_null(st->name);
    cr_assert_str_eq(st->name, "[stack]");
    cr_assert(st->prot & PROT_WRITE);
    struct vmm_regs *r = vmm_vm_regs(vm);
    cr_assert_eq(r->rsp % 16, 0, "rsp %#llx", (unsigned long long)r->rsp);
    cr_assert(r->rsp >= st->start && r->rsp < st->end, "rsp not in [stack]");
}

Test(loader, dynamic_pie_layout)
{
    char *const argv[] = {"/bin/true", "--version-not-really", NULL};
    load_ok("/bin/true", argv);
    Elf64_Ehdr eh = read_ehdr("/bin/true");
    if (eh.e_type != ET_DYN) {
        printf("SKIP: /bin/true is not a PIE on this host\n");
        cr_skip_test("/bin/true not PIE");
    }
    check_stack_vma();

    /* The program at ELF_ET_DYN_BASE. */
    const struct vmm_vma *main_v = vmm_as_find_vma(proc->as, PROXY_PIE_BASE);
    cr_assert_not_null(main_v, "no VMA at 0x555555554000");
    cr_assert_eq(main_v->start, PROXY_PIE_BASE);
    cr_assert_str_eq(main_v->name, "/bin/true");
    cr_assert(main_v->flags & VMM_VMA_FILE);
    cr_assert_eq(main_v->file_off, 0);

    /* The interpreter below the mmap base; execution starts there. */
    struct vmm_regs *r = vmm_vm_regs(vm);
    const struct vmm_vma *iv = vmm_as_find_vma(proc->as, r->rip);
    cr_assert_not_null(iv, "rip %#llx unmapped", (unsigned long long)r->rip);
    cr_assert_not_null(iv->name);
    cr_assert(strstr(iv->name, "ld-linux") != NULL, "rip in %s", iv->name);
    cr_assert(iv->prot & PROT_EXEC, "rip not executable");
    cr_assert_lt(iv->end, PROXY_MMAP_BASE + 1);
    const struct vmm_vma *ilow = vma_named_lowest(iv->name);
    cr_assert_lt(ilow->start, 0x7ffff7fff000ULL);
    cr_assert_gt(ilow->start, PROXY_PIE_BASE);
    cr_assert_eq(ilow->file_off, 0);

    /* auxv agrees with the mapping. */
    cr_assert_eq(auxv_must(AT_ENTRY), PROXY_PIE_BASE + eh.e_entry);
    cr_assert_eq(auxv_must(AT_BASE), ilow->start);
    cr_assert_eq(auxv_must(AT_PHDR), PROXY_PIE_BASE + eh.e_phoff);
    cr_assert_eq(auxv_must(AT_PHNUM), eh.e_phnum);
    cr_assert_eq(auxv_must(AT_PHENT), sizeof(Elf64_Phdr));
    cr_assert_eq(auxv_must(AT_PAGESZ), 4096);
    cr_assert_eq(auxv_must(AT_HWCAP), proc->hwcap);

    /* argv as given; execfn is the path. */
    char s[64];
    cr_assert_eq(guest_word(r->rsp), 2);
    guest_str(guest_word(r->rsp + 8), s, sizeof(s));
    cr_assert_str_eq(s, "/bin/true");
    guest_str(guest_word(r->rsp + 16), s, sizeof(s));
    cr_assert_str_eq(s, "--version-not-really");
    guest_str(guest_word(r->rsp + 32), s, sizeof(s));
    cr_assert_str_eq(s, "PATH=/usr/bin:/bin");
    guest_str(auxv_must(AT_EXECFN), s, sizeof(s));
    cr_assert_str_eq(s, "/bin/true");

    /* The heap starts right after the program, page aligned, unmapped. */
    cr_assert_gt(proc->mm.brk_start, PROXY_PIE_BASE);
    cr_assert_eq(proc->mm.brk_start % 4096, 0);
    cr_assert_eq(proc->mm.brk_end, proc->mm.brk_start);
    cr_assert_null(vmm_as_find_vma(proc->as, proc->mm.brk_start));
    cr_assert_not_null(vmm_as_find_vma(proc->as, proc->mm.brk_start - 1));
    cr_assert_str_eq(proc->comm, "true");
}

Test(loader, same_layout_every_time)
{
    char *const argv[] = {"/bin/true", NULL};
    load_ok("/bin/true", argv);
    struct vmm_regs first = *vmm_vm_regs(vm);
    size_t nr = proc->as->nr_vmas;
    gva_t starts[64];
    cr_assert_leq(nr, 64);
    for (size_t i = 0; i < nr; i++)
        starts[i] = proc->as->vmas[i]->start;

    /* A second VM and process load the same image the same way. */
    struct vmm_vm *vm2;
    cr_assert_eq(vmm_vm_create(host, &vm2, why, sizeof(why)), 0, "%s", why);
    struct proxy_process *p2;
    cr_assert_eq(proxy_process_create(&p2, vm2, &det, &cfg), 0);
    p2->hwcap = proc->hwcap;
    p2->hwcap2 = proc->hwcap2;
    cr_assert_eq(proxy_exec_load(p2, "/bin/true", NULL, argv, envp, why,
                                 sizeof(why)),
                 0, "%s", why);
    struct vmm_regs *second = vmm_vm_regs(vm2);
    cr_assert_eq(second->rip, first.rip);
    cr_assert_eq(second->rsp, first.rsp);
    cr_assert_eq(p2->as->nr_vmas, nr);
    for (size_t i = 0; i < nr; i++)
        cr_assert_eq(p2->as->vmas[i]->start, starts[i]);
    proxy_process_destroy(p2);
    vmm_vm_destroy(vm2);
}

Test(loader, static_binary)
{
    if (system("command -v gcc >/dev/null 2>&1") != 0) {
        printf("SKIP: loader::static_binary: gcc not available\n");
        cr_skip_test("no gcc");
    }
    char src[128], exe[128], cmd[512];
    snprintf(src, sizeof(src), "%s/s.c", tmpdir);
    snprintf(exe, sizeof(exe), "%s/static-prog", tmpdir);
    FILE *f = fopen(src, "w");
    cr_assert_not_null(f);
    fputs("int main(void) { return 7; }\n", f);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "gcc -static -O1 -o '%s' '%s' 2>/dev/null",
             exe, src);
    if (system(cmd) != 0) {
        printf("SKIP: loader::static_binary: gcc -static failed "
               "(no static libc?)\n");
        cr_skip_test("gcc -static failed");
    }
    char *const argv[] = {exe, NULL};
    load_ok(exe, argv);
    Elf64_Ehdr eh = read_ehdr(exe);
    struct vmm_regs *r = vmm_vm_regs(vm);
    gva_t bias = eh.e_type == ET_DYN ? PROXY_PIE_BASE : 0;
    /* No interpreter: execution starts at the program's own entry. */
    cr_assert_eq(r->rip, bias + eh.e_entry, "rip %#llx, e_entry %#llx",
                 (unsigned long long)r->rip,
                 (unsigned long long)eh.e_entry);
    const struct vmm_vma *v = vmm_as_find_vma(proc->as, r->rip);
    cr_assert_not_null(v);
    cr_assert(v->prot & PROT_EXEC);
    cr_assert_str_eq(v->name, exe);
    for (size_t i = 0; i < proc->as->nr_vmas; i++) {
        const char *n = proc->as->vmas[i]->name;
        cr_assert(!n || !strstr(n, "ld-linux"), "interpreter mapped: %s", n);
    }
    cr_assert_eq(auxv_must(AT_BASE), 0);
    cr_assert_eq(auxv_must(AT_ENTRY), bias + eh.e_entry);
    check_stack_vma();
    /* Segments are mapped with their own protections: the entry page is
     * not writable. */
    cr_assert_eq(vmm_pt_lookup(proc->as, r->rip) & VMM_PTE_W, 0);
    cr_assert_eq(vmm_pt_lookup(proc->as, r->rip) & VMM_PTE_NX, 0);
}

Test(loader, shebang_script)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/script", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("#!/bin/true  -x \necho never\n", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
    char *const argv[] = {"script", "arg1", NULL};
    load_ok(path, argv);
    struct vmm_regs *r = vmm_vm_regs(vm);
    char s[256];
    /* binfmt_script: interp, its one argument, the script path, then
     * argv[1..]. */
    cr_assert_eq(guest_word(r->rsp), 4);
    guest_str(guest_word(r->rsp + 8), s, sizeof(s));
    cr_assert_str_eq(s, "/bin/true");
    guest_str(guest_word(r->rsp + 16), s, sizeof(s));
    cr_assert_str_eq(s, "-x");
    guest_str(guest_word(r->rsp + 24), s, sizeof(s));
    cr_assert_str_eq(s, path);
    guest_str(guest_word(r->rsp + 32), s, sizeof(s));
    cr_assert_str_eq(s, "arg1");
    cr_assert_not_null(vmm_as_find_vma(proc->as, PROXY_PIE_BASE));
}

Test(loader, missing_file_is_enoent)
{
    const char *path = "/nonexistent-dir/hvrun-no-such-program";
    char *const argv[] = {"x", NULL};
    int rc = proxy_exec_load(proc, path, NULL, argv, envp, why, sizeof(why));
    cr_assert_eq(rc, -ENOENT);
    cr_assert(strstr(why, path) != NULL, "message does not name the file: %s",
              why);
}

Test(loader, text_file_is_enoexec)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/notes.txt", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("just some text, long enough to read a header from\n", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
    char *const argv[] = {path, NULL};
    int rc = proxy_exec_load(proc, path, NULL, argv, envp, why, sizeof(why));
    cr_assert_eq(rc, -ENOEXEC);
    cr_assert(strstr(why, path) != NULL, "message: %s", why);
    cr_assert(strstr(why, "not an ELF") != NULL, "message: %s", why);
}

Test(loader, tiny_file_is_enoexec)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/tiny", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("x", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
    char *const argv[] = {path, NULL};
    cr_assert_eq(proxy_exec_load(proc, path, NULL, argv, envp, why, sizeof(why)),
                 -ENOEXEC);
}

Test(loader, directory_is_eacces)
{
    char *const argv[] = {tmpdir, NULL};
    int rc = proxy_exec_load(proc, tmpdir, NULL, argv, envp, why, sizeof(why));
    cr_assert_eq(rc, -EACCES);
    cr_assert(strstr(why, tmpdir) != NULL, "message: %s", why);
}

Test(loader, not_executable_is_eacces)
{
    char path[128], cmd[320];
    snprintf(path, sizeof(path), "%s/true-copy", tmpdir);
    snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", path);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(chmod(path, 0644), 0);
    char *const argv[] = {path, NULL};
    cr_assert_eq(proxy_exec_load(proc, path, NULL, argv, envp, why, sizeof(why)),
                 -EACCES);
    cr_assert(strstr(why, path) != NULL, "message: %s", why);
}

Test(loader, foreign_elf_is_enoexec)
{
    /* A 32-bit ELF header: hvrun runs x86-64 programs only. */
    char path[128];
    snprintf(path, sizeof(path), "%s/elf32", tmpdir);
    unsigned char hdr[64] = {0x7f, 'E', 'L', 'F', ELFCLASS32, ELFDATA2LSB, 1};
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    close(fd);
    char *const argv[] = {path, NULL};
    cr_assert_eq(proxy_exec_load(proc, path, NULL, argv, envp, why, sizeof(why)),
                 -ENOEXEC);
    cr_assert(strstr(why, path) != NULL, "message: %s", why);
}
