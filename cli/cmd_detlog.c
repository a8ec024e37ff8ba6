/*
 * cmd_detlog.c - `hvrun detlog FILE [FILE2]`: what a run's detlog (written
 * by `hvrun run --detlog FILE`) holds, one event a line; with two, where
 * they part and the events just before, so that a run that failed
 * --verify can be told apart from its twin event by event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "det.h"
#include "proxy.h"

#define CONTEXT_EVENTS 8

static void print_record(FILE *f, const char *tag, size_t i,
                         const struct det_record *r)
{
    const char *call = r->nr == 0xffff ? "-" : proxy_syscall_name(r->nr);
    fprintf(f, "%s#%zu tid %u %s %s", tag, i, r->tid, call,
            det_source_name((enum det_source)r->source));
    if (r->source == DET_SRC_SYSCALL)
        fprintf(f, " = %lld\n", (long long)r->value);
    else
        fprintf(f, " value %lld hash %016llx\n", (long long)r->value,
                (unsigned long long)r->hash);
}

static int load(const char *path, struct det_record **recs, size_t *n)
{
    int rc = det_log_load(path, recs, n);
    if (rc < 0)
        cli_error("%s: %s", path,
                  rc == -EINVAL ? "not a detlog (hvrun run --detlog FILE)"
                                : strerror(-rc));
    return rc;
}

/* Prints a's and b's events from the first difference back CONTEXT_EVENTS
 * and a few on; 0 when they are equal, 1 when not. */
static int compare(const char *pa, const struct det_record *a, size_t na,
                   const char *pb, const struct det_record *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && !memcmp(&a[i], &b[i], sizeof(a[i])))
        i++;
    if (i == na && i == nb) {
        printf("identical: %zu events\n", na);
        return 0;
    }
    printf("first difference at event #%zu (%s: %zu events, %s: %zu)\n", i,
           pa, na, pb, nb);
    size_t from = i > CONTEXT_EVENTS ? i - CONTEXT_EVENTS : 0;
    for (size_t k = from; k < i; k++)
        print_record(stdout, "  ", k, &a[k]);
    for (size_t k = i; k < na && k < i + 3; k++)
        print_record(stdout, "1 ", k, &a[k]);
    for (size_t k = i; k < nb && k < i + 3; k++)
        print_record(stdout, "2 ", k, &b[k]);
    return 1;
}

int cli_cmd_detlog(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || argv[1][0] == '-') {
        cli_command_usage(argc < 2 || argc > 3 ? stderr : stdout, "detlog");
        return argc == 2 && (!strcmp(argv[1], "-h") ||
                             !strcmp(argv[1], "--help"))
                   ? 0
                   : 2;
    }
    struct det_record *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    int code = CLI_EXIT_FAILURE;
    if (load(argv[1], &a, &na) < 0)
        goto out;
    if (argc == 2) {
        for (size_t i = 0; i < na; i++)
            print_record(stdout, "", i, &a[i]);
        code = 0;
        goto out;
    }
    if (load(argv[2], &b, &nb) < 0)
        goto out;
    code = compare(argv[1], a, na, argv[2], b, nb);
out:
    free(a);
    free(b);
    return code;
}
