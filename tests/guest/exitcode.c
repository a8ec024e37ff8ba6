/* exitcode: exits with the status given as argv[1] (0 without one). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 0;
    printf("exiting with %d\n", code);
    fflush(stdout);
    exit(code);
}
