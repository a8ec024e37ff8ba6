/* clockloop: N clock_gettime(CLOCK_MONOTONIC) calls through libc (the vDSO
 * when there is one), then exit; the marginal cost per call is
 * (t(N) - t(0)) / N. */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	struct timespec ts;
	long sink = 0;
	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec & 1;
	}
	return (int)(sink & 0);
}
