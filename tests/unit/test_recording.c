/*
 * test_recording.c - the recording file (detcore/recording.c): what is
 * written loads back event for event; a truncated or bit-flipped file, or
 * one of another format version, is refused with a reason and never
 * crashes or hangs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recording.h"

static char dir[] = "/tmp/hvrun-rec-test.XXXXXX";
static char path[256];

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/run.hvrec", dir);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

static const char *const argv_[] = {"/bin/cat", "FILE", NULL};
static const char *const env_[] = {"PATH=/usr/bin:/bin", "LANG=C", NULL};
static const char *const opts_[] = {"--seed", "7", NULL};
static const char *const gaps_[] = {"cpuid", NULL};

/* A recording of 1000 events with payloads of 0..999 bytes. */
static void write_sample(void)
{
    struct det_rec_header h = {.hvrun_version = "0.test", .backend = "kvm",
                               .cpu = "AMD EPYC", .cwd = "/work",
                               .argv = argv_, .env = env_, .options = opts_,
                               .host_gaps = gaps_};
    struct det_rec_writer *w;
    cr_assert_eq(det_rec_create(&w, path, &h), 0);
    uint8_t data[1000];
    for (int i = 0; i < 1000; i++)
        data[i] = (uint8_t)(i * 7);
    for (int i = 0; i < 1000; i++) {
        struct det_rec_event ev = {.kind = DET_REC_SYSCALL, .tid = (uint32_t)i % 3 + 1,
                                   .nr = 0, .value = i, .len = (uint32_t)i,
                                   .data = data};
        cr_assert_eq(det_rec_append(w, &ev), 0);
    }
    cr_assert_eq(det_rec_finish(w, 3, 0x1234abcdULL), 0);
}

static size_t file_bytes(uint8_t **out)
{
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0);
    struct stat st;
    fstat(fd, &st);
    *out = malloc((size_t)st.st_size);
    cr_assert_eq(read(fd, *out, (size_t)st.st_size), st.st_size);
    close(fd);
    return (size_t)st.st_size;
}

static void put_file(const uint8_t *b, size_t n)
{
    int fd = open(path, O_WRONLY | O_TRUNC);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, b, n), (ssize_t)n);
    close(fd);
}

Test(recording, what_is_written_loads_back, .init = setup, .fini = teardown)
{
    write_sample();
    struct det_recording r;
    char why[160];
    cr_assert_eq(det_rec_load(path, &r, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(r.nr_events, 1001);
    for (size_t i = 0; i < 1000; i++) {
        cr_assert_eq(r.events[i].value, (int64_t)i);
        cr_assert_eq(r.events[i].len, i);
        cr_assert_eq(r.events[i].tid, i % 3 + 1);
        for (size_t k = 0; k < i; k++)
            cr_assert_eq(r.events[i].data[k], (uint8_t)(k * 7));
    }
    cr_assert_eq(r.events[1000].kind, DET_REC_END);
    cr_assert_eq(r.exit_status, 3);
    cr_assert_eq(r.detlog_digest, 0x1234abcdULL);
    cr_assert_str_eq(det_rec_string(&r, "backend"), "kvm");
    cr_assert_str_eq(det_rec_string(&r, "cwd"), "/work");
    cr_assert_str_eq(det_rec_list(&r, "argv", 1), "FILE");
    cr_assert_null(det_rec_list(&r, "argv", 2));
    cr_assert_str_eq(det_rec_list(&r, "env", 1), "LANG=C");
    cr_assert_str_eq(det_rec_list(&r, "host-gaps", 0), "cpuid");
    det_rec_free(&r);
    char tmp[300];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    cr_assert_neq(access(tmp, F_OK), 0, "no .tmp left once finished");
}

Test(recording, truncated_anywhere_is_refused, .init = setup, .fini = teardown)
{
    write_sample();
    uint8_t *b;
    size_t n = file_bytes(&b);
    size_t cuts[] = {0, 4, 8, 23, 24, 60, n / 3, n / 2, n - 17, n - 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        put_file(b, cuts[i]);
        struct det_recording r;
        char why[160] = "";
        cr_assert_eq(det_rec_load(path, &r, why, sizeof(why)), -EINVAL,
                     "cut at %zu of %zu", cuts[i], n);
        cr_assert_neq(why[0], '\0');
        cr_assert_null(strchr(why, '\n'), "one line");
    }
    free(b);
}

Test(recording, any_flipped_bit_is_refused, .init = setup, .fini = teardown)
{
    write_sample();
    uint8_t *b;
    size_t n = file_bytes(&b);
    srand(12345);
    for (int i = 0; i < 100; i++) {
        size_t at = (size_t)rand() % n;
        uint8_t bit = (uint8_t)(1u << (rand() % 8));
        b[at] ^= bit;
        put_file(b, n);
        struct det_recording r;
        char why[160] = "";
        int rc = det_rec_load(path, &r, why, sizeof(why));
        cr_assert(rc == -EINVAL || rc == -EPROTO,
                  "bit %#x of byte %zu of %zu: %d", bit, at, n, rc);
        b[at] ^= bit;
    }
    free(b);
}

Test(recording, another_format_version_is_named, .init = setup,
     .fini = teardown)
{
    write_sample();
    uint8_t *b;
    size_t n = file_bytes(&b);
    b[8] = 2;
    put_file(b, n);
    struct det_recording r;
    char why[160];
    cr_assert_eq(det_rec_load(path, &r, why, sizeof(why)), -EPROTO);
    cr_assert(strstr(why, "version 2"), "%s", why);
    free(b);
}

Test(recording, not_a_recording_or_missing, .init = setup, .fini = teardown)
{
    struct det_recording r;
    char why[160];
    cr_assert_eq(det_rec_load(path, &r, why, sizeof(why)), -ENOENT);
    FILE *f = fopen(path, "w");
    fputs("#!/bin/sh\necho not a recording, but long enough to look\n", f);
    fclose(f);
    cr_assert_eq(det_rec_load(path, &r, why, sizeof(why)), -EINVAL);
    cr_assert_str_eq(why, "not an hvrun recording");
}
