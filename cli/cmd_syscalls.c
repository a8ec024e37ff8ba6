/*
 * cmd_syscalls.c - `hvrun syscalls`: every x86-64 syscall and how hvrun
 * handles it, as the markdown table of docs/SYSCALLS.md.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "proxy.h"

int cli_cmd_syscalls(int argc, char **argv)
{
    if (argc > 1) {
        bool help = !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help");
        cli_command_usage(help ? stdout : stderr, "syscalls");
        return help ? 0 : 2;
    }
    proxy_catalog_print_markdown(stdout);
    return 0;
}
