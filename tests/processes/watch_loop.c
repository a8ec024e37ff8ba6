/* A variable a loop changes three times, for gdb's watchpoint (run.sh). */
#include <stdio.h>

int g;

int main(void)
{
    for (int i = 0; i < 3; i++)
        g += i + 1;
    printf("g=%d\n", g);
    return 0;
}
