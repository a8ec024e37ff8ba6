/*
 * usage.h - the one source of hvrun's user documentation: per command, its
 * synopsis, description, option table, exit statuses, environment, files
 * and examples (usage.c). Everything that describes the command line is
 * rendered from it (help.c): `hvrun CMD --help`, the man pages (`hvrun help
 * --man CMD`, written into build/man by the Makefile), the shell
 * completions' lists (`hvrun help --complete CMD`) and, for `run`, the
 * getopt table its parser uses. So --help, the man page, the completion
 * and the parser cannot disagree about which options exist.
 *
 * Adding an option: one entry in the command's table in usage.c (for run:
 * with a new CLI_RUN_OPT_* id, handled in cmd_run.c's apply_option).
 */
#ifndef CLI_USAGE_H
#define CLI_USAGE_H

#include <stddef.h>
#include <stdio.h>

/* What an option's argument is, for the shells' completion. */
enum cli_arg_kind {
    CLI_ARG_NONE,   /* a flag */
    CLI_ARG_WORD,   /* a number, a name, a time: nothing to complete */
    CLI_ARG_FILE,   /* a path to a file */
    CLI_ARG_DIR,    /* a path to a directory */
    CLI_ARG_CHOICE, /* one of `values` */
    CLI_ARG_COMMAND /* a shell command line */
};

struct cli_opt {
    int id;              /* getopt's value (run's parser); 0 if unused */
    char short_name;     /* 'j', or 0 */
    const char *name;    /* the long name without "--", or NULL */
    const char *arg;     /* the argument's name in --help ("N", "FILE") */
    enum cli_arg_kind kind;
    const char *values;  /* CLI_ARG_CHOICE: the values, space-separated */
    const char *help;    /* one paragraph, wrapped when printed */
};

/* A two-column list (exit statuses, environment, files, examples): each
 * entry's term and what it means; the list ends at a NULL term. */
struct cli_item {
    const char *term;
    const char *text;
};

struct cli_doc {
    const char *name;     /* "run"; "" for hvrun itself */
    const char *summary;  /* one line: the command table and NAME */
    const char *const *synopsis;      /* lines after "hvrun " */
    const char *const *description;   /* paragraphs */
    const struct cli_opt *opts;       /* ends at an entry with no names */
    const char *opts_note;            /* after the options, or NULL */
    const struct cli_item *exit_status, *environment, *files, *examples;
};

/* hvrun itself (index 0) and each command, in --help's order. */
extern const struct cli_doc *const cli_docs[];
extern const size_t cli_nr_docs;

/* run's getopt ids (cli_opt.id) above the one-letter options. */
enum {
    CLI_RUN_OPT_BACKEND = 256, CLI_RUN_OPT_FAIL_CLOSED, CLI_RUN_OPT_SUMMARY,
    CLI_RUN_OPT_SUMMARY_JSON, CLI_RUN_OPT_LOG, CLI_RUN_OPT_VERIFY,
    CLI_RUN_OPT_SEED, CLI_RUN_OPT_EPOCH, CLI_RUN_OPT_NO_TIME,
    CLI_RUN_OPT_NO_RANDOM, CLI_RUN_OPT_NO_METADATA, CLI_RUN_OPT_NO_HOST,
    CLI_RUN_OPT_TMP, CLI_RUN_OPT_BASE_ENV, CLI_RUN_OPT_CWD,
    CLI_RUN_OPT_HOSTNAME, CLI_RUN_OPT_UID, CLI_RUN_OPT_GID,
    CLI_RUN_OPT_PREEMPT_MS, CLI_RUN_OPT_MEMORY, CLI_RUN_OPT_NO_SECCOMP,
    CLI_RUN_OPT_FS_POLICY, CLI_RUN_OPT_CPUID_REWRITE,
    CLI_RUN_OPT_NO_RDTSC_REWRITE, CLI_RUN_OPT_DETLOG, CLI_RUN_OPT_CHAOS,
    CLI_RUN_OPT_SCHEDULE, CLI_RUN_OPT_SCHEDULE_OUT, CLI_RUN_OPT_LINGER,
    CLI_RUN_OPT_AS_INIT, CLI_RUN_OPT_REPEAT, CLI_RUN_OPT_REPORT,
    CLI_RUN_OPT_GDB, CLI_RUN_OPT_GDB_START, CLI_RUN_OPT_PROGRESS,
};

/* The doc of command name ("" for hvrun itself), or NULL. */
const struct cli_doc *cli_doc_find(const char *name);
/* The number of options in doc's table. */
size_t cli_doc_nr_opts(const struct cli_doc *doc);

/* `hvrun CMD --help`: usage, options, exit statuses, wrapped to 80
 * columns. */
void cli_help_print(FILE *f, const struct cli_doc *doc);
/* The man page hvrun(1) (doc of "") or hvrun-CMD(1), as roff. */
void cli_help_print_man(FILE *f, const struct cli_doc *doc);
/* For the completion scripts: the commands (doc of ""), or doc's options,
 * one a line: NAMES<TAB>KIND<TAB>VALUES<TAB>HELP'S FIRST SENTENCE. */
void cli_help_print_complete(FILE *f, const struct cli_doc *doc);

#endif
