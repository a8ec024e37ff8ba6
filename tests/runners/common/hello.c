/* hello.c - a plain test for the sample projects: its output and exit
 * status must pass through the runner and hvrun intact (with SAMPLE_FAIL
 * set in the environment it fails, exit 3, so a failure must too). */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    if (getenv("SAMPLE_FAIL")) {
        printf("hello: failing as asked\n");
        return 3;
    }
    printf("hello: ok\n");
    return 0;
}
