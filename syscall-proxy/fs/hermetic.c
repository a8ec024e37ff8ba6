/*
 * hermetic.c - keeping the guest away from state it does not own: a
 * private /tmp per run, and name-service lookups confined to /etc files.
 *
 * The private /tmp is a host directory that guest paths "/tmp" and
 * "/tmp/..." name (fs.c's rewrite_path asks proxy_tmp_map); getcwd and the
 * fd/cwd links map it back (proxy_tmp_unmap), so a guest in /tmp/x sees
 * /tmp/x. A walk that starts in the private /tmp is done here, component
 * by component (proxy_tmp_walk), because the host kernel would read a link
 * there to "/tmp/a" as its own /tmp, and a relative path climbing out with
 * ".." as the scratch directory holding it. Known gap, through names the
 * host resolves by itself: a symlink outside /tmp whose target is an
 * absolute /tmp path (~/x -> /tmp/y) still reaches the host's /tmp.
 *
 * Name services: glibc asks nscd and systemd-userdb over AF_UNIX sockets
 * and loads the NSS modules /etc/nsswitch.conf lists (sss, ldap, systemd,
 * dns...). Both depend on host daemons, so with the host virtualised the
 * guest's nsswitch.conf lists only "files" (vfs.c serves it from
 * proxy_nsswitch_files_only) and connect() to those sockets is -ENOENT,
 * which glibc takes as "no daemon" and falls back to the files. The
 * guest's /etc/hosts is the host's plus the run's hostname on 127.0.1.1,
 * as a Debian host's names its own (proxy_hosts_names; vfs.c).
 */
#include "proxy.h"
#include "fs.h"
#include "vfs.h"
#include "kernel.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "det.h"

/* ---- the private /tmp ---------------------------------------------------- */

#define TMP_TEMPLATE "/tmp/hvrun-tmp.XXXXXX"

static int say(char *why, size_t len, int err, const char *dir,
               const char *what)
{
    if (why && len)
        snprintf(why, len, "--tmp %s: %s%s%s", dir, what, err ? ": " : "",
                 err ? strerror(-err) : "");
    return err;
}

/*
 * The owned private /tmp: a directory hvrun makes (scratch.c: 0700, then
 * 0711; locked while the run lives), the guest's /tmp its subdirectory
 * "tmp" (mode 1777, as /tmp is). The name's randomness never reaches the
 * guest, which sees only "/tmp".
 *
 * It is named when the run is set up and made when the guest first names
 * /tmp (proxy_tmp_map), since most programs never do: making it and
 * removing it cost ~4 ms of a /bin/true run's ~29 ms on this project's
 * ext4 host (an rmdir that frees a block ~3 ms; docs/PERFORMANCE.md). Every
 * process of the run names the same directory (fork copies the names), so
 * whether it was made is kept here, once per hvrun process; after the
 * owner's cleanup it is never made again (a late name gets ENOENT, as the
 * removed directory gave before).
 */
static struct {
    char top[PROXY_PATH_MAX];
    bool named, made, removed;
    int lock_fd;
} owned_tmp = {.lock_fd = -1};

/* Makes the named private /tmp, as hvrun whoever the guest is
 * (kernel/fscred.c), with the *at calls the seccomp filter allows. */
static int tmp_materialize(void)
{
    if (!owned_tmp.named || owned_tmp.made)
        return 0;
    if (owned_tmp.removed)
        return -ENOENT;
    char host[PROXY_PATH_MAX + 8];
    snprintf(host, sizeof(host), "%s/tmp", owned_tmp.top);
    const struct proxy_process *as_guest = proxy_fscred_suspend();
    int lock;
    int rc = proxy_scratch_make_named(owned_tmp.top, &lock);
    /* Searchable (not listable) by others: a guest that dropped root
     * reaches its /tmp with its own ids (kernel/fscred.c). */
    if (rc == 0 && (fchmodat(AT_FDCWD, owned_tmp.top, 0711, 0) < 0 ||
                    mkdirat(AT_FDCWD, host, 0700) < 0 ||
                    fchmodat(AT_FDCWD, host, 01777, 0) < 0)) {
        rc = -errno;
        proxy_scratch_remove(owned_tmp.top, lock);
    }
    proxy_fscred_resume(as_guest);
    if (rc < 0)
        return rc;
    owned_tmp.made = true;
    owned_tmp.lock_fd = lock;
    return 0;
}

int proxy_tmp_make_now(void)
{
    return tmp_materialize();
}

bool proxy_tmp_made(void) { return owned_tmp.made; }

static int tmp_make(struct proxy_process *p, char *why, size_t why_len)
{
    char top[] = TMP_TEMPLATE;
    int rc = proxy_scratch_name(top);
    if (rc < 0)
        return say(why, why_len, rc, TMP_TEMPLATE,
                   "cannot name the private /tmp");
    snprintf(p->fs.tmp_host, sizeof(p->fs.tmp_host), "%s/tmp", top);
    snprintf(p->fs.tmp_top, sizeof(p->fs.tmp_top), "%s", top);
    p->fs.tmp_lock_fd = -1; /* owned_tmp.lock_fd, once made */
    p->fs.tmp_owned = true;
    snprintf(owned_tmp.top, sizeof(owned_tmp.top), "%s", top);
    owned_tmp.named = true;
    owned_tmp.made = owned_tmp.removed = false;
    owned_tmp.lock_fd = -1;
    return 0;
}

/* A directory the user gave: used by its canonical name (so the reverse
 * mapping recognises what readlink says), never deleted. */
static int tmp_use(struct proxy_process *p, const char *dir, char *why,
                   size_t why_len)
{
    char *abs = realpath(dir, NULL);
    if (!abs)
        return say(why, why_len, -errno, dir, "cannot resolve it");
    struct stat st;
    int rc = 0;
    if (stat(abs, &st) < 0)
        rc = say(why, why_len, -errno, dir, "stat");
    else if (!S_ISDIR(st.st_mode))
        rc = say(why, why_len, -ENOTDIR, dir, "not a directory");
    else if (strcmp(abs, "/") == 0)
        rc = say(why, why_len, -EINVAL, dir,
                 "the root cannot be the private /tmp; give a directory");
    else if (strlen(abs) >= sizeof(p->fs.tmp_host))
        rc = say(why, why_len, -ENAMETOOLONG, dir, "path too long");
    if (rc == 0) {
        snprintf(p->fs.tmp_host, sizeof(p->fs.tmp_host), "%s", abs);
        p->fs.tmp_owned = false;
    }
    free(abs);
    return rc;
}

int proxy_tmp_setup(struct proxy_process *p, const char *dir, char *why,
                    size_t why_len)
{
    if (p->fs.tmp_host[0])
        return say(why, why_len, -EEXIST, p->fs.tmp_host,
                   "a private /tmp is already set up");
    return dir ? tmp_use(p, dir, why, why_len) : tmp_make(p, why, why_len);
}

/*
 * A run whose working directory or program lives under the host's /tmp
 * must still reach it by its absolute path: the entry of /tmp that holds
 * it is linked into the private /tmp (like a bind mount of that entry).
 * Nothing else of the host's /tmp is visible.
 */
int proxy_tmp_expose(struct proxy_process *p, const char *host_path)
{
    if (!p->fs.tmp_owned)
        return 0;
    char *real = realpath(host_path, NULL);
    if (!real)
        return 0;
    int rc = 0;
    if (strcmp(real, "/tmp") == 0)
        rc = -EEXIST; /* the host /tmp itself cannot also be the private one */
    else if (strncmp(real, "/tmp/", 5) == 0 && real[5] &&
             strncmp(real, p->fs.tmp_top, strlen(p->fs.tmp_top)) != 0 &&
             (rc = tmp_materialize()) == 0) {
        char top[PROXY_PATH_MAX], link[2 * PROXY_PATH_MAX];
        size_t n = strcspn(real + 5, "/");
        real[5 + n] = 0; /* /tmp/<entry> */
        snprintf(top, sizeof(top), "%s", real);
        snprintf(link, sizeof(link), "%s/%s", p->fs.tmp_host, real + 5);
        if (strcmp(top, p->fs.tmp_top) != 0 && symlink(top, link) < 0 &&
            errno != EEXIST)
            rc = -errno;
    }
    free(real);
    return rc;
}

void proxy_tmp_cleanup(struct proxy_process *p)
{
    if (!p->fs.tmp_owned) {
        p->fs.tmp_host[0] = '\0'; /* a --tmp DIR stays as the guest left it */
        return;
    }
    bool ours = owned_tmp.named && !strcmp(owned_tmp.top, p->fs.tmp_top);
    if (ours && owned_tmp.made) {
        proxy_scratch_remove(p->fs.tmp_top, owned_tmp.lock_fd);
        struct stat st;
        if (lstat(p->fs.tmp_top, &st) == 0)
            proxy_log(p, 1, "%s: removing the private /tmp: %s",
                      p->fs.tmp_top, "something is left in it");
    }
    if (ours) {
        owned_tmp.removed = true;
        owned_tmp.lock_fd = -1;
    }
    p->fs.tmp_host[0] = p->fs.tmp_top[0] = '\0';
    p->fs.tmp_lock_fd = -1;
    p->fs.tmp_owned = false;
}

/* The part of an absolute path after a leading "/tmp" component (""
 * or "/..."), or NULL. Repeated leading slashes mean one, as in Linux. */
static const char *after_tmp(const char *path)
{
    if (path[0] != '/')
        return NULL;
    while (path[1] == '/')
        path++;
    if (strncmp(path, "/tmp", 4) != 0 || (path[4] != '/' && path[4] != '\0'))
        return NULL;
    return path + 4;
}

/*
 * Where a ".." in rest (what follows /tmp) climbs above /tmp, or NULL.
 * Counted by name: a symlink inside /tmp followed by ".." is not resolved.
 */
static const char *escaping_dotdot(const char *rest)
{
    int depth = 0;
    const char *s = rest;
    while (*s) {
        while (*s == '/')
            s++;
        if (!*s)
            break;
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == 2 && s[0] == '.' && s[1] == '.') {
            if (--depth < 0)
                return s;
        } else if (!(len == 1 && s[0] == '.')) {
            depth++;
        }
        s += len;
    }
    return NULL;
}

/* rest ("/<entry>[/...]", no escaping "..") starts with an entry of the
 * private /tmp that proxy_tmp_expose made: a link to "/tmp/<entry>". */
static bool exposed_entry(const struct proxy_process *p, const char *rest)
{
    size_t n = strcspn(rest + 1, "/");
    if (n == 0 || (n == 1 && rest[1] == '.') ||
        (n == 2 && rest[1] == '.' && rest[2] == '.'))
        return false;
    char link[PROXY_PATH_MAX], target[PROXY_PATH_MAX];
    if (snprintf(link, sizeof(link), "%s/%.*s", p->fs.tmp_host, (int)n,
                 rest + 1) >= (int)sizeof(link))
        return false;
    ssize_t len = readlink(link, target, sizeof(target) - 1);
    if (len <= 0)
        return false;
    target[len] = '\0';
    return (size_t)len == n + 5 && strncmp(target, "/tmp/", 5) == 0 &&
           memcmp(target + 5, rest + 1, n) == 0;
}

/* The private /tmp p names exists by now: made on this first use when it
 * is the owned one, not yet made. 0 or -errno. */
static int tmp_made_for(const struct proxy_process *p)
{
    if (!owned_tmp.named || strcmp(owned_tmp.top, p->fs.tmp_top) != 0)
        return 0; /* --tmp DIR, or a name hvrun did not choose */
    return tmp_materialize();
}

int proxy_tmp_map(const struct proxy_process *p, const char *path, char *out,
                  size_t outlen)
{
    if (!p->fs.tmp_host[0] || !after_tmp(path))
        return 0;
    char cur[PROXY_PATH_MAX];
    snprintf(cur, sizeof(cur), "%s", path);
    const char *rest;
    /* Each round drops a "/tmp/.." prefix, so this ends. */
    while ((rest = after_tmp(cur))) {
        const char *up = escaping_dotdot(rest);
        if (!up) {
            /* An entry proxy_tmp_expose linked in is the host's, like a
             * bind mount: its name goes to the host /tmp as it is, so
             * lstat and readlink see the directory, not the link (which
             * names itself to the guest: realpath said ELOOP). */
            int made = tmp_made_for(p);
            if (made < 0)
                return made;
            int n = exposed_entry(p, rest)
                        ? snprintf(out, outlen, "/tmp%s", rest)
                        : snprintf(out, outlen, "%s%s", p->fs.tmp_host, rest);
            return n >= 0 && (size_t)n < outlen ? 1 : -ENAMETOOLONG;
        }
        /* /tmp/<...>/.. is "/": go on with what follows the "..". */
        char next[PROXY_PATH_MAX];
        snprintf(next, sizeof(next), "%s", up[2] ? up + 2 : "/");
        memcpy(cur, next, sizeof(cur));
    }
    int n = snprintf(out, outlen, "%s", cur);
    return n >= 0 && (size_t)n < outlen ? 1 : -ENAMETOOLONG;
}

size_t proxy_tmp_unmap(const struct proxy_process *p, char *path, size_t n,
                       size_t cap)
{
    size_t hlen = strlen(p->fs.tmp_host);
    if (!p->fs.tmp_host[0] || n < hlen ||
        memcmp(path, p->fs.tmp_host, hlen) != 0 ||
        (n > hlen && path[hlen] != '/'))
        return n;
    size_t rest = n - hlen, new_len = 4 + rest;
    if (new_len > cap)
        return n;
    memmove(path + 4, path + hlen, rest);
    memcpy(path, "/tmp", 4);
    return new_len;
}

/* ---- symlinks inside the private /tmp ------------------------------------ */

#define WALK_MAX_LINKS 40 /* Linux's MAXSYMLINKS */

/* Where a host dirfd is, when it is inside the private /tmp: its path in
 * dir (1), else 0. A deleted directory is not walked. */
static int dirfd_in_tmp(const struct proxy_process *p, int dirfd, char *dir,
                        size_t cap)
{
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(link, dir, cap - 1);
    if (n <= 0)
        return 0;
    dir[n] = '\0';
    size_t hlen = strlen(p->fs.tmp_host);
    if (strncmp(dir, p->fs.tmp_host, hlen) != 0 ||
        (dir[hlen] != '/' && dir[hlen] != '\0'))
        return 0;
    static const char deleted[] = " (deleted)";
    size_t dl = sizeof(deleted) - 1;
    return !((size_t)n > dl && strcmp(dir + n - dl, deleted) == 0);
}

/* Drops the last component of a resolved host path (one without links). */
static void pop_component(char *resolved)
{
    char *slash = strrchr(resolved, '/');
    if (slash && slash != resolved)
        *slash = '\0';
    else
        snprintf(resolved, 2, "/");
}

/* todo becomes head + "/" + todo (a link's text before what followed it;
 * the slash only when something followed). */
static int prepend(char *todo, size_t cap, const char *head, size_t hlen)
{
    size_t tlen = strlen(todo), sep = tlen ? 1 : 0;
    if (hlen + sep + tlen + 1 > cap)
        return -ENAMETOOLONG;
    memmove(todo + hlen + sep, todo, tlen + 1);
    memcpy(todo, head, hlen);
    if (sep)
        todo[hlen] = '/';
    return 0;
}

struct tmp_walk {
    char resolved[PROXY_PATH_MAX]; /* host path, no links in it */
    char todo[PROXY_PATH_MAX];     /* what is left to walk */
    bool trailing_slash;           /* the path ended in "/": follow it */
};

/* One component of w->todo taken into w->resolved. Returns 0 to go on, 1
 * when the rest is the host's (a component that does not exist, the last
 * one unfollowed), 2 when the walk climbed out of the private /tmp ("/tmp/.."
 * is "/": w->todo is then a guest path from "/"), 3 when a link named an
 * absolute path (w->todo: the guest path to start again from), -errno. */
static int walk_step(const struct proxy_process *p, struct tmp_walk *w,
                     bool follow_last, int *links)
{
    char *s = w->todo;
    while (*s == '/')
        s++;
    size_t len = strcspn(s, "/");
    char comp[NAME_MAX + 2];
    if (len > NAME_MAX)
        return -ENAMETOOLONG;
    memcpy(comp, s, len);
    comp[len] = '\0';
    char *next = s + len;
    while (*next == '/')
        next++;
    bool last = !*next;
    memmove(w->todo, next, strlen(next) + 1);
    if (len == 0 || strcmp(comp, ".") == 0)
        return 0;
    if (strcmp(comp, "..") == 0) {
        if (strcmp(w->resolved, p->fs.tmp_host) == 0)
            return 2;
        pop_component(w->resolved);
        return 0;
    }
    size_t rl = strlen(w->resolved);
    if (rl + 1 + len + 1 > sizeof(w->resolved))
        return -ENAMETOOLONG;
    char *end = w->resolved + rl;
    snprintf(end, sizeof(w->resolved) - rl, "%s%s",
             rl > 1 ? "/" : "", comp);
    if (last && !follow_last && !w->trailing_slash)
        return 1;
    char target[PROXY_PATH_MAX];
    ssize_t n = readlink(w->resolved, target, sizeof(target) - 1);
    if (n < 0)
        return errno == EINVAL ? 0 : 1; /* not a link, or the host's error */
    if (++*links > WALK_MAX_LINKS)
        return -ELOOP;
    target[n] = '\0';
    *end = '\0'; /* the link's text replaces its name */
    if (prepend(w->todo, sizeof(w->todo), target, (size_t)n) < 0)
        return -ENAMETOOLONG;
    return target[0] == '/' ? 3 : 0;
}

/* The walk's end: resolved + what is left, into out. */
static int walk_finish(const struct tmp_walk *w, char *out, size_t outlen)
{
    const char *sep = w->todo[0] && strcmp(w->resolved, "/") ? "/" : "";
    int n = snprintf(out, outlen, "%s%s%s%s", w->resolved, sep, w->todo,
                     w->trailing_slash ? "/" : "");
    return n >= 0 && (size_t)n < outlen ? 0 : -ENAMETOOLONG;
}

int proxy_tmp_walk(const struct proxy_process *p, int dirfd, char *path,
                   size_t cap, bool follow_last, int *links)
{
    if (!p->fs.tmp_host[0] || !path[0])
        return PROXY_TMP_WALK_HOST;
    struct tmp_walk w;
    size_t hlen = strlen(p->fs.tmp_host);
    if (path[0] == '/') {
        if (strncmp(path, p->fs.tmp_host, hlen) != 0 ||
            (path[hlen] != '/' && path[hlen] != '\0'))
            return PROXY_TMP_WALK_HOST;
        snprintf(w.resolved, sizeof(w.resolved), "%s", p->fs.tmp_host);
        snprintf(w.todo, sizeof(w.todo), "%s", path + hlen);
    } else {
        if (!dirfd_in_tmp(p, dirfd, w.resolved, sizeof(w.resolved)))
            return PROXY_TMP_WALK_HOST;
        snprintf(w.todo, sizeof(w.todo), "%s", path);
    }
    size_t tl = strlen(w.todo);
    w.trailing_slash = tl > 0 && w.todo[tl - 1] == '/';
    for (;;) {
        int rc = walk_step(p, &w, follow_last, links);
        if (rc < 0)
            return rc;
        if (rc == 1 || (rc == 0 && !w.todo[0])) {
            rc = walk_finish(&w, path, cap);
            return rc < 0 ? rc : PROXY_TMP_WALK_RESOLVED;
        }
        if (rc == 2 || rc == 3) {
            int n = snprintf(path, cap, "/%s",
                             w.todo[0] == '/' ? w.todo + 1 : w.todo);
            if (n < 0 || (size_t)n >= cap)
                return -ENAMETOOLONG;
            return PROXY_TMP_WALK_AGAIN;
        }
    }
}

/* ---- name services ------------------------------------------------------- */

/* What glibc consults when there is no nsswitch.conf, files only. */
static const char default_nsswitch[] = "passwd:         files\n"
                                       "group:          files\n"
                                       "shadow:         files\n"
                                       "gshadow:        files\n"
                                       "hosts:          files\n"
                                       "networks:       files\n"
                                       "protocols:      files\n"
                                       "services:       files\n"
                                       "ethers:         files\n"
                                       "rpc:            files\n"
                                       "netgroup:       files\n";

struct strbuf {
    char *s;
    size_t len, cap;
    bool failed;
};

static void sb_put(struct strbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->failed = true;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

/*
 * One line: "db:<blanks>sources" becomes "db:<blanks>files"; comments,
 * blank lines and lines without a database name are kept as they are
 * (glibc ignores the last kind too).
 */
static void nss_line(struct strbuf *b, const char *line, size_t len)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    const char *colon = memchr(line, ':', len);
    const char *hash = memchr(line, '#', len);
    if (i == len || line[i] == '#' || !colon || (hash && hash < colon) ||
        colon == line + i) {
        sb_put(b, line, len);
        return;
    }
    size_t keep = (size_t)(colon - line) + 1;
    while (keep < len && (line[keep] == ' ' || line[keep] == '\t'))
        keep++;
    sb_put(b, line, keep);
    if (keep == (size_t)(colon - line) + 1)
        sb_put(b, " ", 1);
    sb_put(b, "files", 5);
}

char *proxy_nsswitch_files_only(const char *in, size_t len, size_t *out_len)
{
    if (!in) {
        in = default_nsswitch;
        len = sizeof(default_nsswitch) - 1;
    }
    struct strbuf b = {0};
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(in + pos, '\n', len - pos);
        size_t line_len = nl ? (size_t)(nl - (in + pos)) : len - pos;
        nss_line(&b, in + pos, line_len);
        if (nl)
            sb_put(&b, "\n", 1);
        pos += line_len + (nl ? 1 : 0);
    }
    if (!b.s && !b.failed)
        sb_put(&b, "", 0);
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    *out_len = b.len;
    return b.s;
}

/* One /etc/hosts line (no newline): an address, then names, "#" to the
 * end a comment. */
static bool hosts_line_names(const char *line, size_t len, const char *name)
{
    const char *hash = memchr(line, '#', len);
    if (hash)
        len = (size_t)(hash - line);
    size_t nlen = strlen(name), i = 0;
    for (int field = 0; i < len; field++) {
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
            i++;
        size_t start = i;
        while (i < len && line[i] != ' ' && line[i] != '\t')
            i++;
        if (field > 0 && i - start == nlen && nlen &&
            strncasecmp(line + start, name, nlen) == 0)
            return true;
    }
    return false;
}

bool proxy_hosts_names(const char *hosts, size_t len, const char *name)
{
    size_t pos = 0;
    while (hosts && pos < len) {
        const char *nl = memchr(hosts + pos, '\n', len - pos);
        size_t line_len = nl ? (size_t)(nl - (hosts + pos)) : len - pos;
        if (hosts_line_names(hosts + pos, line_len, name))
            return true;
        pos += line_len + 1;
    }
    return false;
}

bool proxy_hermetic_socket_blocked(const struct proxy_process *p,
                                   const char *path, size_t len)
{
    static const char *const exact[] = {"/run/nscd/socket",
                                        "/var/run/nscd/socket"};
    static const char *const dirs[] = {"/run/systemd/userdb/",
                                       "/var/run/systemd/userdb/"};
    if (!p->det->cfg.virtualize_host)
        return false;
    size_t n = strnlen(path, len);
    for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
        if (n == strlen(exact[i]) && memcmp(path, exact[i], n) == 0)
            return true;
    }
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        size_t dl = strlen(dirs[i]);
        if (n > dl && memcmp(path, dirs[i], dl) == 0)
            return true;
    }
    return false;
}
