/* hello_pie: a dynamic PIE program (ld.so, relocations) prints. */
#include <stdio.h>

int main(int argc, char **argv)
{
    printf("hello from a PIE binary\n");
    for (int i = 1; i < argc; i++)
        printf("arg %d: %s\n", i, argv[i]);
    return 0;
}
