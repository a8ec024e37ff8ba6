/*
 * cmd_syscalls.c - `hvrun syscalls`: every x86-64 syscall and how hvrun
 * handles it, as the markdown table of docs/SYSCALLS.md.
 */
#include <stdio.h>

#include "cli.h"
#include "proxy.h"

int cli_cmd_syscalls(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    proxy_catalog_print_markdown(stdout);
    return 0;
}
