/*
 * main.c - subcommand dispatch, --help and --version.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_run.h"
#include "usage.h"

#ifndef HVRUN_VERSION
#define HVRUN_VERSION "0.0.0"
#endif

#ifndef HVRUN_COMMIT
#define HVRUN_COMMIT "unknown"
#endif

/* Each command's function; what it says of itself is in usage.c. */
struct cli_command {
    const char *name;
    int (*fn)(int argc, char **argv);
};

static const struct cli_command commands[] = {
    {"run", cli_cmd_run},         {"doctor", cli_cmd_doctor},
    {"syscalls", cli_cmd_syscalls}, {"analyze", cli_cmd_analyze},
    {"detlog", cli_cmd_detlog},   {"record", cli_cmd_record},
    {"replay", cli_cmd_replay},   {"help", cli_cmd_help},
};

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("hvrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_usage(FILE *f) { cli_help_print(f, cli_doc_find("")); }

void cli_command_usage(FILE *f, const char *name)
{
    cli_help_print(f, cli_doc_find(name));
}

uint64_t cli_started_ns;

int main(int argc, char **argv)
{
    cli_started_ns = vmm_clock_now();
    if (argc < 2) {
        cli_usage(stderr);
        return CLI_EXIT_FAILURE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        cli_usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("hvrun %s (commit %s)\n", HVRUN_VERSION, HVRUN_COMMIT);
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    cli_error("unknown command '%s'; see 'hvrun --help'", argv[1]);
    return CLI_EXIT_FAILURE;
}
