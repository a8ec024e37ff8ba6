/* forkwide: N children alive at once, each blocked reading a pipe until
 * the parent closes its write end, then all reaped (the first part of
 * tests/guest/fork_thousand.c, LTP's futex_cmp_requeue01's 1000 waiters).
 * A run's cost should grow linearly with N; docs/PERFORMANCE.md ("Many
 * processes") has the curve for N = 125..1000:
 *
 *   cc -O2 -o forkwide bench/forkwide.c
 *   for n in 125 250 500 1000; do
 *       perf stat -e task-clock,raw_syscalls:sys_enter \
 *           build/hvrun run -- ./forkwide $n; done
 *
 * Exits 1 if a fork fails or a child does not exit 0. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	int pfd[2];
	if (pipe(pfd) < 0)
		return 1;
	int made = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			char c;
			close(pfd[1]);
			_exit(read(pfd[0], &c, 1) == 0 ? 0 : 1);
		}
		if (pid < 0)
			break;
		made++;
	}
	close(pfd[1]);
	close(pfd[0]);
	int clean = 0, st;
	while (wait(&st) > 0)
		clean += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	printf("forkwide: %d of %d children made, %d exited 0\n", made, n,
	       clean);
	return made == n && clean == n ? 0 : 1;
}
