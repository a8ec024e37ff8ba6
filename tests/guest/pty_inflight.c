/*
 * pty_inflight: bytes written into one end of a pty reach the other end's
 * line discipline in a host kernel work item, later. A reader that looks
 * after the writer's calls returned (here: after a 100 ms sleep, which
 * under hvrun is logical time and waits for no host work) must find all
 * of them there, each run: hvrun counts what is on its way (io/tty.c).
 * Each case is one read (or FIONREAD) after several writes, so a read
 * that came too early shows as a shorter count.
 */
#include <errno.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) { printf("CHECK failed line %d: %s (%s)\n", \
    __LINE__, #c, strerror(errno)); exit(1); } } while (0)

static void show(const char *what, const char *buf, ssize_t n)
{
    printf("%s: %zd \"", what, n);
    for (ssize_t i = 0; i < n; i++)
        printf(buf[i] == '\r' ? "\\r" : buf[i] == '\n' ? "\\n" : "%c", buf[i]);
    printf("\"\n");
}

static void pause_ms(int ms)
{
    usleep((useconds_t)ms * 1000);
}

/* The slave side writes three times; the master reads once. */
static void slave_writes(int m, int s)
{
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        CHECK(write(s, "one\n", 4) == 4);
        CHECK(write(s, "two\n", 4) == 4);
        CHECK(write(s, "three\n", 6) == 6);
        pause_ms(300); /* open while the master reads */
        _exit(0);
    }
    pause_ms(100);
    char buf[256];
    ssize_t n = read(m, buf, sizeof(buf));
    show("master reads the slave's three writes", buf, n);
    CHECK(waitpid(c, NULL, 0) == c);
}

/* The master writes a line in two parts: the slave's one read gets the
 * line (ICANON), the master's one read the echo of both parts. */
static void master_writes_canonical(int m, int s)
{
    CHECK(write(m, "par", 3) == 3);
    CHECK(write(m, "tial\n", 5) == 5);
    CHECK(write(m, "next\n", 5) == 5);
    pause_ms(100);
    int queued = -1;
    CHECK(ioctl(s, FIONREAD, &queued) == 0);
    printf("slave FIONREAD %d\n", queued);
    char buf[256];
    ssize_t n = read(s, buf, sizeof(buf));
    show("slave reads a line", buf, n);
    n = read(m, buf, sizeof(buf));
    show("master reads the echo", buf, n);
    n = read(s, buf, sizeof(buf));
    show("slave reads the next line", buf, n);
}

/* Raw mode (cfmakeraw: no ICANON, no ECHO, no OPOST). */
static void raw_mode(int m, int s)
{
    struct termios tio, saved;
    CHECK(tcgetattr(s, &saved) == 0);
    tio = saved;
    cfmakeraw(&tio);
    CHECK(tcsetattr(s, TCSANOW, &tio) == 0);
    CHECK(write(m, "ab", 2) == 2);
    CHECK(write(m, "cd\n", 3) == 3);
    CHECK(write(s, "x\n", 2) == 2);
    CHECK(write(s, "y\n", 2) == 2);
    pause_ms(100);
    char buf[256];
    ssize_t n = read(s, buf, sizeof(buf));
    show("raw slave reads", buf, n);
    n = read(m, buf, sizeof(buf));
    show("raw master reads", buf, n);
    CHECK(tcsetattr(s, TCSANOW, &saved) == 0);
}

/* A line left unfinished under ICANON becomes readable when ICANON is
 * turned off. */
static void canonical_off(int m, int s)
{
    struct termios tio, saved;
    CHECK(tcgetattr(s, &saved) == 0);
    tio = saved;
    tio.c_lflag &= ~(tcflag_t)ECHO;
    CHECK(tcsetattr(s, TCSANOW, &tio) == 0);
    CHECK(write(m, "held", 4) == 4);
    pause_ms(100);
    tio.c_lflag &= ~(tcflag_t)ICANON;
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    CHECK(tcsetattr(s, TCSANOW, &tio) == 0);
    char buf[256];
    ssize_t n = read(s, buf, sizeof(buf));
    show("unfinished line after ICANON off", buf, n);
    CHECK(tcsetattr(s, TCSANOW, &saved) == 0);
}

int main(void)
{
    int m, s;
    CHECK(openpty(&m, &s, NULL, NULL, NULL) == 0);
    slave_writes(m, s);
    master_writes_canonical(m, s);
    raw_mode(m, s);
    canonical_off(m, s);
    close(s);
    close(m);
    /* a new pty, perhaps under the old one's number */
    CHECK(openpty(&m, &s, NULL, NULL, NULL) == 0);
    slave_writes(m, s);
    return 0;
}
