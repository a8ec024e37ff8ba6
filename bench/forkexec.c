/* forkexec: the spawn primitives one at a time, for per-fork and per-exec
 * costs measured from outside (bench/run.sh takes marginal differences).
 *
 *   forkexec f N          fork N children that _exit(0), reaping each
 *   forkexec e N PROG     fork N children that exec PROG, reaping each
 *
 * Exits 1 if a child fails. Static, so that its own start-up is small. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3 || (argv[1][0] == 'e' && argc < 4)) {
		fprintf(stderr, "usage: forkexec f|e N [PROG]\n");
		return 2;
	}
	int exec_child = argv[1][0] == 'e';
	long n = atol(argv[2]);
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			if (exec_child)
				execl(argv[3], argv[3], (char *)NULL);
			_exit(exec_child ? 127 : 0);
		}
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return 1;
	}
	return 0;
}
