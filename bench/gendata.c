/* gendata: deterministic, compressible pseudo-random text for the compute
 * benchmark.
 *
 *   gendata BYTES [SEED] > file
 *
 * Words drawn by a seeded xorshift64* from a fixed 64-word vocabulary, with
 * a numeric field on every line: bzip2 compresses it about 5:1, so the
 * compressor does real BWT/Huffman work (not the degenerate all-zero case).
 * The same BYTES and SEED always give the same bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t s;

static uint64_t next(void)
{
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	return s * 0x2545F4914F6CDD1DULL;
}

static const char *const words[64] = {
	"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
	"hotel", "india", "juliet", "kilo", "lima", "mike", "november",
	"oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform",
	"victor", "whiskey", "xray", "yankee", "zulu", "syscall", "vcpu",
	"memslot", "page", "table", "guest", "host", "exit", "entry", "stub",
	"kernel", "user", "signal", "thread", "futex", "clock", "seed",
	"replay", "record", "verify", "chaos", "schedule", "buffer", "read",
	"write", "open", "close", "mmap", "brk", "fork", "exec", "wait",
	"pipe", "socket", "poll", "epoll", "timer", "event",
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: gendata BYTES [SEED]\n");
		return 2;
	}
	long long want = atoll(argv[1]);
	s = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x9E3779B97F4A7C15ULL;
	if (s == 0)
		s = 1;
	static char buf[1 << 16];
	size_t n = 0;
	long long done = 0;
	while (done < want) {
		char line[256];
		int len = 0;
		int nw = 4 + (int)(next() % 9);
		for (int w = 0; w < nw; w++) {
			const char *word = words[next() % 64];
			len += snprintf(line + len, sizeof line - len, "%s%s",
					w ? " " : "", word);
		}
		len += snprintf(line + len, sizeof line - len, " %u\n",
				(unsigned)(next() % 100000));
		if (done + len > want)
			len = (int)(want - done);
		if (n + (size_t)len > sizeof buf) {
			fwrite(buf, 1, n, stdout);
			n = 0;
		}
		memcpy(buf + n, line, (size_t)len);
		n += (size_t)len;
		done += len;
	}
	fwrite(buf, 1, n, stdout);
	return ferror(stdout) ? 1 : 0;
}
