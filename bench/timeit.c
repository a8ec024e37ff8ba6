/* timeit: run a command once, print "WALL_NS MAXRSS_KB STATUS" on fd 3.
 *
 *   timeit [-i FILE] [-o FILE] -- PROGRAM [ARGS...]
 *
 * Wall time is CLOCK_MONOTONIC from just before fork to just after wait4;
 * max RSS is the child's ru_maxrss from wait4 (what GNU time's %M reports).
 * stdin/stdout default to inherited; -i/-o redirect them for the child only,
 * so the opens are not timed. The child's stderr is left alone (hvrun's
 * --summary line goes there). The result goes to fd 3 when it is open,
 * else to stderr, so callers can keep it apart from the program's output. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags, 0644);
	if (fd < 0) {
		fprintf(stderr, "timeit: %s: %s\n", path, strerror(errno));
		exit(125);
	}
	return fd;
}

int main(int argc, char **argv)
{
	int in = -1, out = -1, i = 1;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "-i") && i + 1 < argc)
			in = open_or_die(argv[++i], O_RDONLY);
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = open_or_die(argv[++i], O_WRONLY | O_CREAT | O_TRUNC);
		else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: timeit [-i FILE] [-o FILE] -- PROGRAM [ARGS...]\n");
		return 125;
	}
	FILE *rep = fdopen(3, "w");
	if (!rep)
		rep = stderr;

	long long t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0) {
		perror("timeit: fork");
		return 125;
	}
	if (pid == 0) {
		if (in >= 0 && dup2(in, 0) < 0)
			_exit(125);
		if (out >= 0 && dup2(out, 1) < 0)
			_exit(125);
		if (rep != stderr)
			close(3);
		execvp(argv[i], argv + i);
		fprintf(stderr, "timeit: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("timeit: wait4");
			return 125;
		}
	}
	long long t1 = now_ns();
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(rep, "%lld %ld %d\n", t1 - t0, ru.ru_maxrss, code);
	fflush(rep);
	return 0;
}
