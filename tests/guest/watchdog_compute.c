/*
 * watchdog_compute: a far-off alarm (a test watchdog) must not fire while
 * the program computes for a fraction of a second without syscalls: under
 * hvrun each time slice of computing counts as that much logical time,
 * not as a jump to the alarm.
 */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    alarm(60);
    volatile unsigned long sum = 0;
    for (unsigned long i = 0; i < 400000000UL; i++)
        sum += i;
    printf("computed without the watchdog firing: %s\n", sum ? "yes" : "no");
    return 0;
}
