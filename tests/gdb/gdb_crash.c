/* gdb_crash.c - a NULL write in a named function: gdb must see the
 * SIGSEGV there, and the program die of it when gdb passes it on. */
#include <stdio.h>

__attribute__((noinline)) void crash_here(int *p)
{
    *p = 42;
}

int main(void)
{
    printf("before the crash\n");
    fflush(stdout);
    crash_here(NULL);
    return 0;
}
