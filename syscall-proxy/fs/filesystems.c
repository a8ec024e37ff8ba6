/*
 * filesystems.c - sysfs(2), the obsolete System V query of the filesystem
 * types the kernel knows (Linux's fs/filesystems.c): option 1 gives a
 * name's index, option 2 copies an index's name (with its NUL) to a
 * buffer, option 3 counts them; any other option, an unknown name or an
 * index past the end is EINVAL. The option is an int and option 2's
 * index an unsigned int, as Linux reads them; option 1's name is read as
 * getname reads a path (EFAULT, ENOENT for an empty one, ENAMETOOLONG).
 *
 * The list is the one the guest sees in /proc/filesystems, which is the
 * host's read through (docs/DETERMINISM.md): the host's file, read at the
 * first call and kept for the rest of hvrun's life, so a filesystem type
 * the host kernel registers later (a module loaded during the run) shows
 * in the guest's /proc/filesystems but not here. A host file hvrun cannot
 * read is an empty list (the count 0).
 */
#include "proxy.h"
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROC_FILESYSTEMS "/proc/filesystems"
/* Far above the ~40 lines of a distribution kernel's list. */
#define FS_LIST_MAX_BYTES 65536

/* The host's filesystem types in /proc/filesystems order: names[i] points
 * into text, where each line's name ends with a NUL written over its
 * newline. */
static struct fs_list {
    bool loaded;
    char *text;
    const char **names;
    int nr;
} fs_list;

static size_t read_whole(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    while (len < cap) {
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    return len;
}

/* Each line is "nodev\tNAME\n" or "\tNAME\n": the name follows the tab. */
static void parse_lines(char *text, size_t len)
{
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    fs_list.names = calloc(lines ? lines : 1, sizeof(*fs_list.names));
    if (!fs_list.names)
        return;
    for (char *line = text; line < text + len && *line;) {
        char *end = strchr(line, '\n');
        if (!end)
            break;
        *end = 0;
        char *tab = strchr(line, '\t');
        if (tab)
            fs_list.names[fs_list.nr++] = tab + 1;
        line = end + 1;
    }
}

static void fs_list_load(void)
{
    fs_list.loaded = true;
    int fd = open(PROC_FILESYSTEMS, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    fs_list.text = malloc(FS_LIST_MAX_BYTES + 1);
    if (fs_list.text) {
        size_t len = read_whole(fd, fs_list.text, FS_LIST_MAX_BYTES);
        fs_list.text[len] = 0;
        parse_lines(fs_list.text, len);
    }
    close(fd);
}

static long fs_index(struct proxy_process *p, gva_t name_gva)
{
    char name[PROXY_PATH_MAX];
    long len = proxy_path_in(p, name, name_gva);
    if (len < 0)
        return len;
    if (len == 0)
        return -ENOENT; /* getname refuses an empty name */
    for (int i = 0; i < fs_list.nr; i++)
        if (!strcmp(fs_list.names[i], name))
            return i;
    return -EINVAL;
}

static long fs_name(struct proxy_process *p, unsigned int index, gva_t buf)
{
    if (index >= (unsigned int)fs_list.nr)
        return -EINVAL;
    const char *name = fs_list.names[index];
    return proxy_copy_out(p, buf, name, strlen(name) + 1) < 0 ? -EFAULT : 0;
}

static long sys_sysfs(struct proxy_process *p, const uint64_t a[6])
{
    if (!fs_list.loaded)
        fs_list_load();
    switch ((int)a[0]) {
    case 1:
        return fs_index(p, a[1]);
    case 2:
        return fs_name(p, (unsigned int)a[1], a[2]);
    case 3:
        return fs_list.nr;
    default:
        return -EINVAL;
    }
}

const struct proxy_syscall proxy_filesystems_syscalls[] = {
    {SYS_sysfs, "sysfs", sys_sysfs},
    {-1, NULL, NULL},
};
