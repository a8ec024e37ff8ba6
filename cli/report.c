/*
 * report.c - `hvrun run --verify|--repeat N --report FILE`: the runs and
 * how each compared with run 1, for CI. JSON by default; a FILE whose
 * name ends in ".xml" gets JUnit XML instead (one test case per run, a
 * run that differs from run 1 a failure), which CI systems show as test
 * results. Written to FILE.tmp and renamed, so a reader never sees half.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void xml_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if (*p >= 0x20 || *p == '\t' || *p == '\n')
                fputc(*p, f);
        }
    }
}

/* The program and its arguments, space-separated (for a test's name). */
static void command_line(const struct run_options *o, char *buf, size_t len)
{
    buf[0] = '\0';
    for (char **a = o->argv; *a; a++) {
        size_t at = strlen(buf);
        snprintf(buf + at, len - at, "%s%s", a == o->argv ? "" : " ", *a);
    }
}

static int count_differing(const struct cli_run_verdict *v, int n)
{
    int k = 0;
    for (int i = 1; i < n; i++)
        k += !v[i].same;
    return k;
}

static void write_json(FILE *f, const struct run_options *o,
                       const struct cli_captured_run *r,
                       const struct cli_run_verdict *v, int n)
{
    fprintf(f, "{\n  \"tool\": \"hvrun\",\n  \"version\": ");
    json_string(f, HVRUN_VERSION);
    fprintf(f, ",\n  \"mode\": \"%s\",\n  \"backend\": ",
            o->repeat ? "repeat" : "verify");
    json_string(f, o->backend);
    fprintf(f, ",\n  \"command\": [");
    for (char **a = o->argv; *a; a++) {
        fputs(a == o->argv ? "" : ", ", f);
        json_string(f, *a);
    }
    int differ = count_differing(v, n);
    fprintf(f, "],\n  \"chaos\": %s,\n  \"seed\": %llu,\n  \"runs\": %d,\n"
               "  \"differing_runs\": %d,\n  \"deterministic\": %s,\n"
               "  \"exit_status\": %d,\n  \"detlog_events\": %llu,\n"
               "  \"digest\": \"%016llx\",\n  \"results\": [\n",
            o->det.chaos ? "true" : "false", (unsigned long long)o->det.seed,
            n, differ, differ ? "false" : "true", r[0].code,
            (unsigned long long)r[0].sum.detlog_events,
            (unsigned long long)r[0].sum.digest);
    for (int i = 0; i < n; i++) {
        fprintf(f, "    {\"run\": %d, \"exit_status\": %d, \"digest\": "
                   "\"%016llx\", \"same_as_run_1\": %s",
                i + 1, r[i].code, (unsigned long long)r[i].sum.digest,
                v[i].same ? "true" : "false");
        if (o->det.chaos && o->repeat)
            fprintf(f, ", \"chaos_seed\": %llu", (unsigned long long)v[i].seed);
        if (!v[i].same) {
            fputs(", \"differs_in\": ", f);
            json_string(f, v[i].streams + (v[i].streams[0] == ' '));
            fputs(", \"first_divergence\": ", f);
            json_string(f, v[i].detail);
        }
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
}

static void write_junit(FILE *f, const struct run_options *o,
                        const struct cli_captured_run *r,
                        const struct cli_run_verdict *v, int n)
{
    char cmd[1024];
    command_line(o, cmd, sizeof(cmd));
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<testsuite name=\"hvrun %s: ",
            o->repeat ? "repeat" : "verify");
    xml_text(f, cmd);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n", n,
            count_differing(v, n));
    for (int i = 0; i < n; i++) {
        fprintf(f, "  <testcase classname=\"hvrun\" name=\"run %d", i + 1);
        if (o->det.chaos && o->repeat)
            fprintf(f, " (--chaos seed %llu)", (unsigned long long)v[i].seed);
        fprintf(f, " exit %d\"", r[i].code);
        if (v[i].same) {
            fputs("/>\n", f);
            continue;
        }
        fputs(">\n    <failure message=\"differs from run 1 in:", f);
        xml_text(f, v[i].streams);
        fputs("\">", f);
        xml_text(f, v[i].detail);
        fputs("</failure>\n  </testcase>\n", f);
    }
    fputs("</testsuite>\n", f);
}

int cli_report_write(const char *path, const struct run_options *o,
                     const struct cli_captured_run *f,
                     const struct cli_run_verdict *v, int n)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *out = fopen(tmp, "we");
    if (!out)
        return -errno;
    size_t len = strlen(path);
    if (len > 4 && !strcmp(path + len - 4, ".xml"))
        write_junit(out, o, f, v, n);
    else
        write_json(out, o, f, v, n);
    int rc = ferror(out) ? -EIO : 0;
    if (fclose(out) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0)
        (void)unlink(tmp);
    return rc;
}
