/* sysloop: the native counterpart of `hvrun doctor`'s round trip: time N
 * raw getpid system calls (no libc caching; syscall(2) straight to the
 * kernel) and print the mean cost per call in nanoseconds.
 *
 *   sysloop [N]        default N = 200000 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	if (n <= 0)
		n = 1;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("%.1f\n", ns / (double)n);
	return 0;
}
