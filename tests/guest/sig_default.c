/*
 * sig_default: a NULL dereference without a handler kills the process with
 * SIGSEGV's default action; the shell (and hvrun) report status 139.
 */
#include <string.h>
#include <unistd.h>

int main(void)
{
    static const char msg[] = "about to dereference NULL\n";
    if (write(1, msg, strlen(msg)) < 0)
        return 2;
    volatile int *p = NULL;
    *p = 42;
    static const char bad[] = "FAIL: still alive after writing to NULL\n";
    if (write(1, bad, strlen(bad)) < 0)
        return 3;
    return 1;
}
