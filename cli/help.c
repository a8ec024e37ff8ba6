/*
 * help.c - renders usage.c's documentation: --help text, man pages (roff)
 * and the completion scripts' lists. The three readers see the same
 * tables, so they cannot disagree (tests/packaging/man_help.sh checks the
 * rendered pages against --help all the same).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "usage.h"

#ifndef HVRUN_VERSION
#define HVRUN_VERSION "0.0.0"
#endif

#define HELP_WIDTH 79
#define HELP_OPT_COL 24 /* where an option's help starts */
#define HELP_TERM_COL 10 /* where an exit status's meaning starts */

/* ---- --help -------------------------------------------------------------- */

/* Prints text from column col (the cursor is there), wrapped at
 * HELP_WIDTH, continuation lines indented to indent; ends the line. */
static void wrap(FILE *f, const char *text, int col, int indent)
{
    const char *p = text;
    bool first = true;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t word = strcspn(p, " ");
        if (!word)
            break;
        if (!first && col + 1 + (int)word > HELP_WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (!first) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, word, f);
        col += (int)word;
        p += word;
        first = false;
    }
    fputc('\n', f);
}

/* "-j, --jobs J", "--backend kvm|ptrace", "-o FILE" */
static void opt_heading(char *out, size_t len, const struct cli_opt *o)
{
    int n = 0;
    if (o->short_name)
        n += snprintf(out + n, len - (size_t)n, "-%c%s", o->short_name,
                      o->name ? ", " : "");
    if (o->name)
        n += snprintf(out + n, len - (size_t)n, "--%s", o->name);
    if (o->arg)
        snprintf(out + n, len - (size_t)n, " %s", o->arg);
}

static void print_items(FILE *f, const char *title, const struct cli_item *it)
{
    if (!it || !it->term)
        return;
    fprintf(f, "\n%s:\n", title);
    for (; it->term; it++) {
        int col = fprintf(f, "  %s", it->term);
        if (col + 1 >= HELP_TERM_COL) {
            fprintf(f, "\n%*s", HELP_TERM_COL, "");
        } else {
            fprintf(f, "%*s", HELP_TERM_COL - col, "");
        }
        wrap(f, it->text, HELP_TERM_COL, HELP_TERM_COL);
    }
}

void cli_help_print(FILE *f, const struct cli_doc *doc)
{
    for (int i = 0; doc->synopsis[i]; i++)
        fprintf(f, "%s hvrun %s\n", i ? "      " : "usage:", doc->synopsis[i]);
    fputc('\n', f);
    if (!doc->name[0]) {
        wrap(f, doc->description[0], 0, 0);
        fprintf(f, "\ncommands:\n");
        for (size_t i = 1; i < cli_nr_docs; i++)
            fprintf(f, "  %-9s %s\n", cli_docs[i]->name, cli_docs[i]->summary);
    } else {
        wrap(f, doc->description[0], 0, 0);
    }
    fprintf(f, "\noptions:\n");
    for (const struct cli_opt *o = doc->opts; o->name || o->short_name; o++) {
        char head[64];
        opt_heading(head, sizeof(head), o);
        int col = fprintf(f, "  %s", head);
        if (col + 2 > HELP_OPT_COL)
            fprintf(f, "\n%*s", HELP_OPT_COL, "");
        else
            fprintf(f, "%*s", HELP_OPT_COL - col, "");
        wrap(f, o->help, HELP_OPT_COL, HELP_OPT_COL);
    }
    if (doc->opts_note) {
        fputc('\n', f);
        wrap(f, doc->opts_note, 0, 0);
    }
    print_items(f, "exit status", doc->exit_status);
    if (!doc->name[0])
        fprintf(f, "\nEach command's options: hvrun COMMAND --help; its "
                   "manual: man hvrun-COMMAND.\n");
    else
        fprintf(f, "\nThe manual, with environment, files and examples: man "
                   "hvrun-%s.\n", doc->name);
}

/* ---- man pages ----------------------------------------------------------- */

/* Text for roff: '-' and '\' escaped, a leading '.' or '\'' guarded. */
static void roff(FILE *f, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", f);
    for (; *s; s++) {
        if (*s == '-')
            fputs("\\-", f);
        else if (*s == '\\')
            fputs("\\e", f);
        else
            fputc(*s, f);
    }
}

static void roff_page_name(FILE *f, const struct cli_doc *doc)
{
    fputs("hvrun", f);
    if (doc->name[0])
        fprintf(f, "\\-%s", doc->name);
}

static void roff_items(FILE *f, const char *title, const struct cli_item *it)
{
    if (!it || !it->term)
        return;
    fprintf(f, ".SH %s\n", title);
    for (; it->term; it++) {
        fputs(".TP\n\\fB", f);
        roff(f, it->term);
        fputs("\\fR\n", f);
        roff(f, it->text);
        fputc('\n', f);
    }
}

static void roff_option(FILE *f, const struct cli_opt *o)
{
    fputs(".TP\n", f);
    if (o->short_name)
        fprintf(f, "\\fB\\-%c\\fR%s", o->short_name, o->name ? ", " : "");
    if (o->name) {
        fputs("\\fB", f);
        roff(f, "--");
        roff(f, o->name);
        fputs("\\fR", f);
    }
    if (o->arg) {
        fputs(" \\fI", f);
        roff(f, o->arg);
        fputs("\\fR", f);
    }
    fputc('\n', f);
    roff(f, o->help);
    fputc('\n', f);
}

static void roff_see_also(FILE *f, const struct cli_doc *doc)
{
    fputs(".SH SEE ALSO\n", f);
    bool first = true;
    for (size_t i = 0; i < cli_nr_docs; i++) {
        if (cli_docs[i] == doc)
            continue;
        fprintf(f, "%s.BR ", first ? "" : ",\n");
        roff_page_name(f, cli_docs[i]);
        fputs(" (1)", f);
        first = false;
    }
    fputs("\n.PP\nhvrun's documentation (README.md, docs/) is installed "
          "in /usr/share/doc/hvrun (or PREFIX/share/doc/hvrun).\n", f);
}

void cli_help_print_man(FILE *f, const struct cli_doc *doc)
{
    char title[64];
    snprintf(title, sizeof(title), "HVRUN%s%s", doc->name[0] ? "-" : "",
             doc->name);
    for (char *t = title; *t; t++)
        *t = (char)toupper((unsigned char)*t);
    fputs(".\\\" Generated by `hvrun help --man` from cli/usage.c: edit "
          "that, not this.\n", f);
    fprintf(f, ".TH \"%s\" \"1\" \"\" \"hvrun %s\" \"User Commands\"\n",
            title, HVRUN_VERSION);
    fputs(".nh\n.ad l\n.SH NAME\n", f); /* no hyphens in names, ragged */
    roff_page_name(f, doc);
    fputs(" \\- ", f);
    roff(f, doc->summary);
    fputs("\n.SH SYNOPSIS\n.nf\n", f);
    for (int i = 0; doc->synopsis[i]; i++) {
        fputs("\\fBhvrun\\fR ", f);
        roff(f, doc->synopsis[i]);
        fputc('\n', f);
    }
    fputs(".fi\n.SH DESCRIPTION\n", f);
    for (int i = 0; doc->description[i]; i++) {
        fputs(i ? ".PP\n" : "", f);
        roff(f, doc->description[i]);
        fputc('\n', f);
    }
    if (!doc->name[0]) {
        fputs(".SH COMMANDS\n", f);
        for (size_t i = 1; i < cli_nr_docs; i++) {
            fprintf(f, ".TP\n\\fBhvrun %s\\fR\n", cli_docs[i]->name);
            roff(f, cli_docs[i]->summary);
            fputs("; see\n.BR ", f);
            roff_page_name(f, cli_docs[i]);
            fputs(" (1).\n", f);
        }
        fputs(".TP\n\\fBhvrun help\\fR "
              "[\\fB\\-\\-man\\fR|\\fB\\-\\-complete\\fR] "
              "[\\fICOMMAND\\fR]\n", f);
        roff(f, "A command's --help, its manual page as roff (--man), or "
                "the lists the shell completions use (--complete).");
        fputc('\n', f);
    }
    fputs(".SH OPTIONS\n", f);
    for (const struct cli_opt *o = doc->opts; o->name || o->short_name; o++)
        roff_option(f, o);
    if (doc->opts_note) {
        fputs(".PP\n", f);
        roff(f, doc->opts_note);
        fputc('\n', f);
    }
    roff_items(f, "EXIT STATUS", doc->exit_status);
    roff_items(f, "ENVIRONMENT", doc->environment);
    roff_items(f, "FILES", doc->files);
    roff_items(f, "EXAMPLES", doc->examples);
    roff_see_also(f, doc);
}

/* ---- completion lists ---------------------------------------------------- */

static const char *const kind_names[] = {
    [CLI_ARG_NONE] = "none",  [CLI_ARG_WORD] = "word",
    [CLI_ARG_FILE] = "file",  [CLI_ARG_DIR] = "dir",
    [CLI_ARG_CHOICE] = "choice", [CLI_ARG_COMMAND] = "command",
};

/* The first sentence of help, for a completion menu. */
static void first_sentence(FILE *f, const char *help)
{
    const char *end = strstr(help, ". ");
    size_t n = end ? (size_t)(end - help) : strlen(help);
    if (n && help[n - 1] == '.')
        n--;
    fwrite(help, 1, n, f);
}

void cli_help_print_complete(FILE *f, const struct cli_doc *doc)
{
    if (!doc->name[0]) {
        for (size_t i = 1; i < cli_nr_docs; i++)
            fprintf(f, "%s\t%s\n", cli_docs[i]->name, cli_docs[i]->summary);
        fprintf(f, "help\tprint a command's help, man page or completion "
                   "lists\n");
        return;
    }
    for (const struct cli_opt *o = doc->opts; o->name || o->short_name; o++) {
        if (o->short_name)
            fprintf(f, "-%c%s", o->short_name, o->name ? " " : "");
        if (o->name)
            fprintf(f, "--%s", o->name);
        fprintf(f, "\t%s\t%s\t", kind_names[o->kind],
                o->values ? o->values : "-");
        first_sentence(f, o->help);
        fputc('\n', f);
    }
}

int cli_cmd_help(int argc, char **argv)
{
    enum { TEXT, MAN, COMPLETE } what = TEXT;
    int i = 1;
    if (i < argc && !strcmp(argv[i], "--man")) {
        what = MAN;
        i++;
    } else if (i < argc && !strcmp(argv[i], "--complete")) {
        what = COMPLETE;
        i++;
    }
    const char *name = i < argc ? argv[i] : "";
    const struct cli_doc *doc = cli_doc_find(name);
    if (!doc || i + 1 < argc || name[0] == '-') {
        cli_error("help: unknown command '%s'; usage: hvrun help "
                  "[--man|--complete] [COMMAND]", name);
        return CLI_EXIT_FAILURE;
    }
    if (what == MAN)
        cli_help_print_man(stdout, doc);
    else if (what == COMPLETE)
        cli_help_print_complete(stdout, doc);
    else
        cli_help_print(stdout, doc);
    return 0;
}
