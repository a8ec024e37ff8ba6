#!/usr/bin/env python3
"""include_graph.py [--quiet] [DIR] - the include graph between the
folders of syscall-proxy/ (default: syscall-proxy of this tree).

Nodes: each subsystem folder (fs, io, kernel, mm, net); "proxy", the
top-level headers every handler builds on (proxy.h, fdtable.h, config.h,
hooks.h) and the folders' part headers (FOLDER/*_state.h: a folder's part
of struct proxy_process, which proxy.h includes; they may include only
each other);
"top", the top-level .c files (process.c, table.c, catalog.c, names.c),
which sit above every folder (table.c names every family's table). An edge
A -> B means a file of A includes a header of B. A header name is looked
up as the compiler does: beside the including file, then in DIR and its
folders (the Makefile's PROXY_DIRS); headers outside DIR are not nodes.

Prints the graph, one line per node, then fails (exit 1) when:
  - the graph has a cycle (each cycle is printed);
  - a .c file includes a header of DIR of which it uses nothing: none of
    the names the header declares (functions, variables, macros, struct,
    union and enum tags, enumerators, typedefs; a struct member counts
    when the file accesses it with -> or .; a header's part headers count
    as its own) appears in the file's code.
docs/ARCHITECTURE.md gives the folders' order the graph follows; the last
line printed is that order as the graph has it (lowest first).
A lower folder calls a higher one only through hooks.h's table.
"""
import os
import re
import sys

FOLDERS = ["net", "io", "fs", "kernel", "mm"]  # the Makefile's PROXY_DIRS
IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = {"struct", "enum", "union", "const", "extern", "static", "inline",
            "void", "int", "bool", "long", "char", "unsigned", "volatile",
            "typedef", "return", "if", "sizeof"}


def strip_code(text):
    """Comments and string/char literals blanked (lines kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def is_part(path):
    """A part header (FOLDER/*_state.h): a folder's part of struct
    proxy_process, which proxy.h includes, so it counts with proxy.h."""
    return path.endswith("_state.h")


def node_of(root, path):
    rel = os.path.relpath(path, root)
    if is_part(path):
        return "proxy"
    if os.sep in rel:
        return rel.split(os.sep)[0]
    return "proxy" if path.endswith(".h") else "top"


def resolve(root, including, name):
    for d in [os.path.dirname(including), root] + \
             [os.path.join(root, f) for f in FOLDERS]:
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(cand):
            return cand
    return None


def declared(header_text):
    """(names, members) a header declares."""
    code = strip_code(header_text)
    names, members = set(), set()
    names.update(re.findall(r"#\s*define\s+(\w+)", code))
    names.update(re.findall(r"\b(?:struct|enum|union)\s+(\w+)\s*\{", code))
    for body in re.findall(r"\benum\s*\w*\s*\{(.*?)\}", code, flags=re.S):
        for item in body.split(","):
            m = IDENT.search(item)
            if m:
                names.add(m.group(0))
    code = re.sub(r"^\s*#.*?(?<!\\)$", "", code, flags=re.M | re.S)
    depth, stmt, kinds = 0, "", []
    for ch in code:
        if ch == "{":
            kinds.append("fn" if re.search(r"\)\s*$", stmt) else "agg")
            if kinds[-1] == "fn":  # an inline function: its name
                m = re.search(r"(\w+)\s*\([^()]*\)\s*$", stmt)
                if m:
                    names.add(m.group(1))
            depth += 1
            stmt = ""
            continue
        if ch == "}":
            depth -= 1
            kinds.pop()
            stmt = ""
            continue
        if ch != ";":
            stmt += ch
            continue
        s, stmt = stmt.strip(), ""
        if depth and kinds[-1] == "fn":
            continue
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", s)  # function pointer
        if m:
            (members if depth else names).add(m.group(1))
            continue
        if depth == 0:
            m = re.match(r"^(?:typedef\b.*?)?(?:[\w\s\*]*?)\b(\w+)\s*\(", s)
            if m:
                names.add(m.group(1))
                continue
        for decl in s.split(","):
            decl = re.sub(r"\[.*?\]|:\s*\d+", "", decl).strip()
            ids = [i for i in IDENT.findall(decl) if i not in KEYWORDS]
            if ids and not re.fullmatch(r"(struct|enum|union)\s+\w+", decl):
                (members if depth else names).add(ids[-1])
    return names - KEYWORDS, members - KEYWORDS


def declared_with_parts(root, header):
    """What a header declares, with the part headers it includes (proxy.h
    holds struct proxy_process's parts through them)."""
    text = open(header).read()
    names, members = declared(text)
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        h = resolve(root, header, name)
        if h and is_part(h):
            n, m = declared(open(h).read())
            names, members = names | n, members | m
    return names, members


def uses(c_code, names, members):
    words = set(IDENT.findall(c_code))
    if names & words:
        return True
    accessed = set(re.findall(r"(?:->|\.)\s*(\w+)", c_code))
    return bool(members & accessed)


def find_cycles(nodes, edges):
    """Each strongly connected set of more than one node, as a path."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def topo_order(nodes, edges):
    """The nodes lowest first: each after every node it includes."""
    out, done = [], set()

    def visit(v):
        if v in done:
            return
        done.add(v)
        for w in sorted(edges.get(v, ())):
            visit(w)
        out.append(v)

    for v in sorted(nodes, key=lambda n: -len(edges.get(n, ()))):
        visit(v)
    return out


def main(argv):
    quiet = "--quiet" in argv
    args = [a for a in argv if a != "--quiet"]
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(args[0] if args else
                           os.path.join(here, "..", "..", "syscall-proxy"))
    files = []
    for d, _, names in os.walk(root):
        files += [os.path.join(d, n) for n in sorted(names)
                  if n.endswith((".c", ".h"))]
    nodes, edges, why, problems = set(), {}, {}, []
    decl_cache = {}
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    for f in sorted(files):
        a = node_of(root, f)
        nodes.add(a)
        text = open(f, encoding="utf-8", errors="replace").read()
        code = strip_code(text)
        for name in inc.findall(text):
            h = resolve(root, f, name)
            if h is None:
                continue
            b = node_of(root, h)
            nodes.add(b)
            if is_part(f) and not is_part(h):
                problems.append(f"{os.path.relpath(f, root)}: a part header "
                                f"includes {name}: only other part headers")
            if a != b:
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), []).append(
                    f"{os.path.relpath(f, root)} includes {name}")
            if f.endswith(".c"):
                if h not in decl_cache:
                    decl_cache[h] = declared_with_parts(root, h)
                if not uses(code, *decl_cache[h]):
                    problems.append(f"{os.path.relpath(f, root)}: includes "
                                    f"{name} but uses nothing it declares")
    cycles = find_cycles(nodes, edges)
    if not quiet:
        for v in sorted(nodes):
            print(f"{v} -> {', '.join(sorted(edges.get(v, ()))) or '-'}")
        if not cycles:
            print("order: " + " < ".join(topo_order(nodes, edges)))
    for comp in cycles:
        problems.append("include cycle between " + ", ".join(comp) + ":")
        for a in comp:
            for b in comp:
                for w in why.get((a, b), [])[:3]:
                    problems.append(f"    {a} -> {b}: {w}")
    for p in problems:
        print(f"include_graph: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
