/* gdb_watch_map.c - a mapping made while gdb's watchpoint steps every
 * instruction (malloc's mmap: the ptrace backend maps it into its stub
 * with an injected call, which must not run with the guest's TF), then
 * the watched write. */
#include <stdio.h>
#include <stdlib.h>

long watched;

int main(void)
{
    char *block = malloc(1 << 20);
    block[0] = 1;
    watched = block[0] + 41;
    printf("watched %ld\n", watched);
    free(block);
    return 0;
}
