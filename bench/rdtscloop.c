/* rdtscloop: N __rdtsc() reads (the compiler's `rdtsc; shl; or`), then
 * exit: what a benchmark harness, a profiler or a runtime's tick counter
 * costs under each column. */
#include <stdlib.h>
#include <x86intrin.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	unsigned long long sink = 0;
	for (long i = 0; i < n; i++)
		sink += __rdtsc() & 1;
	return (int)(sink & 0);
}
