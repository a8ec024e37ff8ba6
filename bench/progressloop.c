/* progressloop: a tight compute loop with no syscall (an LCG step per
 * iteration, one loop back edge each), N iterations: the worst case of the
 * progress counter's cost (bench/progress.sh), where each iteration does
 * little beside the counted branch. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
	unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + i;
	printf("%lu\n", x);
	return 0;
}
