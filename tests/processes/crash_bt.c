/* A program that crashes three calls deep, for gdb's backtrace (run.sh). */
#include <stdio.h>

static int depth(int n, int *p)
{
    if (n == 0)
        return *p;
    return depth(n - 1, p) + 1;
}

int main(void)
{
    printf("about to crash\n");
    fflush(stdout);
    return depth(3, (int *)0);
}
