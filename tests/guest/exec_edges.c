/*
 * exec_edges: execve of ELF files and scripts at the edges of what Linux
 * accepts (fs/binfmt_elf.c, fs/binfmt_script.c, fs/exec.c). Each case
 * writes a variant of a sibling test binary (hello_static, hello_pie) into
 * the working directory, execs it in a child and prints how that ended
 * (an errno name, or the exit status); the runner compares the lines with
 * a native run, so every answer is Linux's own.
 *
 *   ELF:    e_phentsize != 56, e_phnum 0 or past 64 KiB of headers,
 *           PT_LOADs out of order, reversed, overlapping
 *   interp: missing, a directory, not executable, a text file (long and
 *           shorter than an ELF header), an ELF with a bad e_phentsize,
 *           a PT_INTERP that is not NUL-terminated, 1 byte, > PATH_MAX,
 *           or past the end of the file
 *   #!:     chains of 1 to 7 scripts (Linux runs 5: BINPRM_MAX_RECURSION)
 *   path:   missing, through a regular file, a link loop, a dangling
 *           link, too long, a directory, a PATH search (execvp) that
 *           fails in each directory before the one that has the program
 *   argv:   100,000 strings (the limit is a quarter of the stack rlimit,
 *           not a count), 300,000 (past it: E2BIG), one string of
 *           MAX_ARG_STRLEN - 1 and MAX_ARG_STRLEN bytes
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static char dir[4096];

struct image {
    unsigned char *b;
    size_t len;
};

static struct image load(const char *name)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    struct image im = {malloc((size_t)st.st_size + 8192), (size_t)st.st_size};
    CHECK(im.b != NULL);
    memset(im.b, 0, im.len + 8192);
    CHECK(read(fd, im.b, im.len) == (ssize_t)im.len);
    close(fd);
    return im;
}

static Elf64_Ehdr *ehdr(struct image *im) { return (Elf64_Ehdr *)im->b; }

static Elf64_Phdr *phdr(struct image *im, int i)
{
    return (Elf64_Phdr *)(im->b + ehdr(im)->e_phoff) + i;
}

static int nth_of(struct image *im, unsigned type, int n)
{
    for (int i = 0; i < ehdr(im)->e_phnum; i++)
        if (phdr(im, i)->p_type == type && n-- == 0)
            return i;
    CHECK(!"no such program header");
    return -1;
}

static void save(const char *name, const struct image *im, mode_t mode)
{
    unlink(name);
    int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, mode);
    CHECK(fd >= 0);
    CHECK(write(fd, im->b, im->len) == (ssize_t)im->len);
    CHECK(close(fd) == 0);
}

static void save_text(const char *name, const char *text, mode_t mode)
{
    struct image im = {(unsigned char *)text, strlen(text)};
    save(name, &im, mode);
}

static const char *errno_name(int e)
{
    switch (e) {
    case ENOENT: return "ENOENT";
    case ENOEXEC: return "ENOEXEC";
    case EACCES: return "EACCES";
    case ELIBBAD: return "ELIBBAD";
    case EIO: return "EIO";
    case ELOOP: return "ELOOP";
    case E2BIG: return "E2BIG";
    case ENOTDIR: return "ENOTDIR";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case EINVAL: return "EINVAL";
    case ENOMEM: return "ENOMEM";
    case EFAULT: return "EFAULT";
    default: return "other";
    }
}

/* Runs path with argv in a child; prints "label: ..." how it ended. */
static void run(const char *label, const char *path, char **argv)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        close(fds[0]);
        fcntl(fds[1], F_SETFD, FD_CLOEXEC);
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        execve(path, argv, envp);
        int e = errno;
        (void)!write(fds[1], &e, sizeof(e));
        _exit(127);
    }
    close(fds[1]);
    int e = 0, st;
    ssize_t n = read(fds[0], &e, sizeof(e));
    close(fds[0]);
    CHECK(waitpid(c, &st, 0) == c);
    if (n == sizeof(e))
        printf("%s: %s\n", label, errno_name(e));
    else if (WIFEXITED(st))
        printf("%s: exit %d\n", label, WEXITSTATUS(st));
    else
        printf("%s: signal %d\n", label, WTERMSIG(st));
}

static void run_file(const char *label, const char *file)
{
    char path[256];
    snprintf(path, sizeof(path), "./%s", file);
    char *argv[] = {path, NULL};
    run(label, path, argv);
}

static void elf_headers(void)
{
    struct image im = load("hello_static");
    ehdr(&im)->e_phentsize = 57;
    save("v_phentsize", &im, 0755);
    run_file("phentsize-57", "v_phentsize");
    ehdr(&im)->e_phentsize = sizeof(Elf64_Phdr);

    uint16_t phnum = ehdr(&im)->e_phnum;
    ehdr(&im)->e_phnum = 0;
    save("v_phnum0", &im, 0755);
    run_file("phnum-0", "v_phnum0");
    /* Past 64 KiB of headers (load_elf_phdrs); the file is long enough. */
    ehdr(&im)->e_phnum = 65536 / sizeof(Elf64_Phdr) + 1;
    save("v_phnum_big", &im, 0755);
    run_file("phnum-1171", "v_phnum_big");
    ehdr(&im)->e_phnum = phnum;
    free(im.b);
}

static void swap_phdrs(struct image *im, int i, int j)
{
    Elf64_Phdr t = *phdr(im, i);
    *phdr(im, i) = *phdr(im, j);
    *phdr(im, j) = t;
}

static void pt_loads(void)
{
    struct image im = load("hello_static");
    int l0 = nth_of(&im, PT_LOAD, 0), l1 = nth_of(&im, PT_LOAD, 1);
    int l2 = nth_of(&im, PT_LOAD, 2), l3 = nth_of(&im, PT_LOAD, 3);
    swap_phdrs(&im, l0, l1);
    save("v_unsorted", &im, 0755);
    run_file("pt-load-unsorted", "v_unsorted");
    swap_phdrs(&im, l0, l1);

    swap_phdrs(&im, l0, l3);
    swap_phdrs(&im, l1, l2);
    save("v_reversed", &im, 0755);
    run_file("pt-load-reversed", "v_reversed");
    swap_phdrs(&im, l1, l2);
    swap_phdrs(&im, l0, l3);

    /* The first segment grows over half of the second (same file bytes:
     * offsets and addresses are congruent). */
    Elf64_Phdr *a = phdr(&im, l0), *b = phdr(&im, l1);
    uint64_t grow = b->p_vaddr - a->p_vaddr + b->p_filesz / 2;
    a->p_filesz = a->p_memsz = grow;
    save("v_overlap", &im, 0755);
    run_file("pt-load-overlap", "v_overlap");
    free(im.b);
}

/* hello_pie with its PT_INTERP string replaced by interp. */
static void with_interp(const char *label, const char *interp)
{
    struct image im = load("hello_pie");
    Elf64_Phdr *ip = phdr(&im, nth_of(&im, PT_INTERP, 0));
    CHECK(strlen(interp) < ip->p_filesz);
    memset(im.b + ip->p_offset, 0, ip->p_filesz);
    memcpy(im.b + ip->p_offset, interp, strlen(interp));
    save("v_interp", &im, 0755);
    run_file(label, "v_interp");
    free(im.b);
}

static void interp_header(const char *label, void (*edit)(Elf64_Phdr *ip,
                                                           struct image *im))
{
    struct image im = load("hello_pie");
    edit(phdr(&im, nth_of(&im, PT_INTERP, 0)), &im);
    save("v_interp_hdr", &im, 0755);
    run_file(label, "v_interp_hdr");
    free(im.b);
}

static void unterminated(Elf64_Phdr *ip, struct image *im)
{
    im->b[ip->p_offset + ip->p_filesz - 1] = 'x';
}
static void one_byte(Elf64_Phdr *ip, struct image *im) { ip->p_filesz = 1; }
static void huge(Elf64_Phdr *ip, struct image *im) { ip->p_filesz = 4097; }
static void past_eof(Elf64_Phdr *ip, struct image *im)
{
    ip->p_offset = im->len + 100;
}

static void interpreters(void)
{
    with_interp("interp-missing", "/nonexistent/ld.so");
    with_interp("interp-directory", ".");
    struct image ld = load("hello_static");
    save("i_noexec", &ld, 0644);
    with_interp("interp-not-executable", "./i_noexec");
    ehdr(&ld)->e_phentsize = 57;
    save("i_phentsize", &ld, 0755);
    with_interp("interp-bad-phentsize", "./i_phentsize");
    ehdr(&ld)->e_phentsize = sizeof(Elf64_Phdr);
    ehdr(&ld)->e_machine = EM_AARCH64;
    save("i_arm", &ld, 0755);
    with_interp("interp-other-arch", "./i_arm");
    free(ld.b);
    save_text("i_text", "this is a text file, not an ELF interpreter, and it"
                        " is longer than an ELF header is\n", 0755);
    with_interp("interp-text", "./i_text");
    save_text("i_short", "short\n", 0755);
    with_interp("interp-short", "./i_short");
    interp_header("interp-unterminated", unterminated);
    interp_header("interp-1-byte", one_byte);
    interp_header("interp-past-path-max", huge);
    interp_header("interp-past-eof", past_eof);
}

static void script_chains(void)
{
    char self[4200];
    snprintf(self, sizeof(self), "#!%s/hello_static\n", dir);
    save_text("s0", self, 0755);
    for (int i = 1; i <= 7; i++) {
        char name[16], text[32], label[32];
        snprintf(name, sizeof(name), "s%d", i);
        snprintf(text, sizeof(text), "#!./s%d\n", i - 1);
        save_text(name, text, 0755);
        snprintf(label, sizeof(label), "script-chain-%d", i + 1);
        run_file(label, name);
    }
}

/* path: a program printing its argc (sh -c 'echo $#'). */
static void many_args(const char *label, size_t n, const char *each)
{
    char **argv = calloc(n + 4, sizeof(char *));
    CHECK(argv != NULL);
    argv[0] = "sh";
    argv[1] = "-c";
    argv[2] = "echo $#";
    for (size_t i = 3; i < n; i++)
        argv[i] = (char *)each;
    run(label, "/bin/sh", argv);
    free(argv);
}

static void arg_limits(void)
{
    many_args("argv-100000", 100000, "x");
    many_args("argv-300000", 300000, "xxxxxxx");
    char *big = malloc(32 * 4096 + 1);
    CHECK(big != NULL);
    memset(big, 'a', 32 * 4096);
    big[32 * 4096 - 1] = 0; /* 131071 bytes + NUL = MAX_ARG_STRLEN */
    many_args("arg-max-strlen", 5, big);
    big[32 * 4096 - 1] = 'a';
    big[32 * 4096] = 0;
    many_args("arg-past-max-strlen", 5, big);
    free(big);
}

/* The path's own errors, which hvrun answers before it makes the new
 * image (a PATH search tries execve in each directory in turn). */
static void path_errors(void)
{
    save_text("v_plain", "not a directory\n", 0644);
    unlink("v_loop");
    CHECK(symlink("v_loop", "v_loop") == 0);
    unlink("v_dangling");
    CHECK(symlink("v_nowhere", "v_dangling") == 0);
    char *argv[] = {"x", NULL};
    run("path-missing", "./v_missing", argv);
    run("path-absolute-missing", "/nonexistent/dir/prog", argv);
    run("path-through-file", "./v_plain/prog", argv);
    run("path-loop", "./v_loop", argv);
    run("path-dangling", "./v_dangling", argv);
    run("path-directory", ".", argv);
    run("path-empty", "", argv);
    static char longname[5000];
    memset(longname, 'n', sizeof(longname) - 1);
    run("path-too-long", longname, argv);
    /* execvp: ENOENT in the first directories, then the program. */
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        char path[4200];
        snprintf(path, sizeof(path), "PATH=/nonexistent:%s/v_plain:%s", dir,
                 dir);
        putenv(path);
        char *hello[] = {"hello_static", NULL};
        execvp("hello_static", hello);
        _exit(127);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    printf("execvp-search: exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(int argc, char **argv)
{
    (void)argc;
    char *copy = strdup(argv[0]);
    snprintf(dir, sizeof(dir), "%s", dirname(copy));
    free(copy);
    elf_headers();
    pt_loads();
    interpreters();
    script_chains();
    arg_limits();
    path_errors();
    return 0;
}
