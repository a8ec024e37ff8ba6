/* hello_nopie: a dynamic, non-PIE program (fixed load address) prints. */
#include <stdio.h>

int main(int argc, char **argv)
{
    printf("hello from a non-PIE binary\n");
    for (int i = 1; i < argc; i++)
        printf("arg %d: %s\n", i, argv[i]);
    return 0;
}
