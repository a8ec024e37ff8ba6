/* gdb_spin.c - sleeps 1 ms of logical time, forever: what gdb's ^C
 * (tests/gdb/interrupt.py) must stop. */
#include <unistd.h>

int main(void)
{
    for (;;)
        usleep(1000);
}
