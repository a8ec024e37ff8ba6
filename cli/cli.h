/*
 * cli.h - hvrun's command line: one table of subcommands, each in
 * cmd_<name>.c. Exit statuses: the guest's own status; 128+N when the guest
 * died of signal N; 126 program not executable / not an x86-64 ELF; 127
 * program not found; 125 hvrun's own failure (as env and timeout use them).
 */
#ifndef CLI_H
#define CLI_H

#include <stdio.h>

#define CLI_EXIT_FAILURE 125
#define CLI_EXIT_NOEXEC 126
#define CLI_EXIT_NOTFOUND 127

int cli_cmd_run(int argc, char **argv);
int cli_cmd_doctor(int argc, char **argv);
int cli_cmd_syscalls(int argc, char **argv);
int cli_cmd_detlog(int argc, char **argv);
int cli_cmd_analyze(int argc, char **argv);
int cli_cmd_record(int argc, char **argv);
int cli_cmd_replay(int argc, char **argv);
/* hvrun --help; `hvrun NAME --help` (usage.c's text for command NAME). */
void cli_usage(FILE *f);
void cli_command_usage(FILE *f, const char *name);
int cli_cmd_help(int argc, char **argv);

/* Prints "hvrun: <message>" on one line to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
