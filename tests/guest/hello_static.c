/* hello_static: a static non-PIE program prints its greeting and argv. */
#include <stdio.h>

int main(int argc, char **argv)
{
    printf("hello from a static binary\n");
    for (int i = 1; i < argc; i++)
        printf("arg %d: %s\n", i, argv[i]);
    return 0;
}
