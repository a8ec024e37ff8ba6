/*
 * journal.h - --verify's record of what one run did to the host's files,
 * written by preserve.c while the run goes and replayed backwards by
 * cli/undo.c to put the files back as they were before the run.
 *
 * The journal is a directory only hvrun writes (mode 0700, inside the
 * verify scratch directory): a file "journal" of binary records, one per
 * change, in the order the changes happened, and "copy.N" files holding
 * what an existing file (or symlink target) was before the run changed it.
 * A record is a fixed head followed by its path bytes: paths are counted,
 * never parsed by newline, so any name Linux allows (newlines included)
 * round-trips. Each record is one write(2) to an O_APPEND fd: a run that
 * dies leaves at most one truncated record at the end, which the reader
 * drops. Paths are absolute host paths whose directory part was resolved
 * (no symlinks, no "." or ".."), as the run saw them at that moment.
 */
#ifndef HVRUN_JOURNAL_H
#define HVRUN_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#define JOURNAL_FILE "journal"
#define JOURNAL_MAGIC 0x4a525648u /* "HVRJ" */

enum journal_kind {
    /* path is a name the run made; (dev, ino) what it named then. Undone
     * by removing the name if it still names that object. */
    JOURNAL_CREATED = 1,
    /* path was renamed to path2; (dev, ino) the object moved, and with
     * JOURNAL_F_EXCHANGE (dev2, ino2) the one that came back. Undone by
     * renaming back. */
    JOURNAL_RENAMED = 2,
    /* path named the existing object (dev, ino) of mode, about to change
     * or lose this name; its content before the run is copy.N (copy 0:
     * none kept, e.g. a directory). Undone by putting the content back
     * into that object in place, or the name back (a link to a surviving
     * name of the object, else a new object from the copy). */
    JOURNAL_SAVED = 3,
};

#define JOURNAL_F_EXCHANGE 1u
/* SAVED: the object had more than one link then. */
#define JOURNAL_F_LINKED 2u

struct journal_head {
    uint32_t magic;
    uint16_t kind;
    uint16_t flags;
    uint32_t mode;       /* st_mode: type and permissions before the run */
    uint32_t copy;       /* copy.N, or 0 */
    uint64_t dev, ino;
    uint64_t dev2, ino2;
    uint32_t len, len2;  /* bytes of path and path2 that follow */
};

struct journal_entry {
    struct journal_head h;
    char *path, *path2;  /* NUL-terminated; path2 "" if none */
};

/* Appends one record to the journal fd. 0 or -errno. */
int journal_append(int fd, const struct journal_head *h, const char *path,
                   const char *path2);
/* Every whole, well-formed record of the journal in dir_fd, in order.
 * 0 (with *out NULL and *n 0 when there is no journal) or -errno. */
int journal_load(int dir_fd, struct journal_entry **out, size_t *n);
void journal_free(struct journal_entry *e, size_t n);

#endif
