#!/usr/bin/env python3
"""The man pages say what --help says: for hvrun and each command, every
option `hvrun CMD --help` lists is in OPTIONS of hvrun-CMD(1) and the
reverse, and so are the exit statuses; each page has its sections and
renders without groff warnings.

usage: man_help.py HVRUN MANDIR   (MANDIR: the pages `make man` wrote)
"""
import re
import shutil
import subprocess
import sys

COMMANDS = ["", "run", "analyze", "record", "replay", "doctor", "detlog",
            "syscalls"]
SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
            "EXAMPLES", "SEE ALSO"]


def help_sections(text):
    """{'options': [lines], 'exit status': [lines]} of --help's text."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^([a-z ]+):$", line)
        if m:
            cur = out.setdefault(m.group(1), [])
        elif not line.strip():
            continue
        elif cur is not None and line.startswith("  ") and \
                not line.startswith("   "):
            cur.append(line[2:])
        elif not line.startswith(" "):
            cur = None
    return out


def help_options(lines):
    opts = set()
    for line in lines:
        head = line.split("  ")[0]
        opts |= {t.rstrip(",") for t in head.split() if t.startswith("-")}
    return opts


def man_sections(roff):
    out, cur = {}, None
    for line in roff.splitlines():
        if line.startswith(".SH "):
            cur = out.setdefault(line[4:].strip('"'), [])
        elif cur is not None:
            cur.append(line)
    return out


def plain(roff_line):
    s = re.sub(r"\\f[BIRP]", "", roff_line)
    return s.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")


def tagged(lines):
    """The tag line after each .TP."""
    return [plain(lines[i + 1]) for i, l in enumerate(lines)
            if l == ".TP" and i + 1 < len(lines)]


def main():
    hvrun, mandir = sys.argv[1], sys.argv[2]
    failed = checked = 0
    for cmd in COMMANDS:
        page = f"{mandir}/hvrun{'-' + cmd if cmd else ''}.1"
        argv = [hvrun] + ([cmd] if cmd else []) + ["--help"]
        text = subprocess.run(argv, capture_output=True, text=True,
                              check=True).stdout
        with open(page) as f:
            roff = f.read()
        hs, ms = help_sections(text), man_sections(roff)
        problems = []
        for sec in SECTIONS:
            if sec not in ms:
                problems.append(f"no {sec} section")
        h_opts = help_options(hs.get("options", []))
        m_opts = {t.rstrip(",") for tag in tagged(ms.get("OPTIONS", []))
                  for t in tag.split() if t.startswith("-")}
        if not h_opts:
            problems.append("--help lists no options")
        for o in sorted(h_opts - m_opts):
            problems.append(f"{o}: in --help, not in the page")
        for o in sorted(m_opts - h_opts):
            problems.append(f"{o}: in the page, not in --help")
        h_exit = {l.split()[0] for l in hs.get("exit status", [])}
        m_exit = set(tagged(ms.get("EXIT STATUS", [])))
        if h_exit != m_exit:
            problems.append(f"exit statuses: --help {sorted(h_exit)}, page "
                            f"{sorted(m_exit)}")
        if shutil.which("groff"):
            r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page],
                               capture_output=True, text=True)
            if r.stderr.strip():
                problems.append("groff: " + r.stderr.strip().splitlines()[0])
        name = f"hvrun{'-' + cmd if cmd else ''}"
        checked += 1
        if problems:
            failed += 1
            for p in problems:
                print(f"FAIL man/{name}: {p}")
        else:
            print(f"PASS man/{name}: {len(h_opts)} options, "
                  f"{len(h_exit)} exit statuses agree")
    print(f"man pages: {checked - failed} of {checked} agree with --help")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
