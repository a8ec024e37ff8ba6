#!/usr/bin/env python3
"""`hvrun doctor --json` keeps its documented schema (docs/DOCTOR.md,
hvrun-doctor/1): every key there with its type, both backends, and every
line of the text report as a field of "lines", in the same order.

usage: doctor_json.py HVRUN
"""
import json
import re
import subprocess
import sys

NUM = (int, float)
OPT_STR, OPT_BOOL, OPT_INT = (str, type(None)), (bool, type(None)), \
    (int, type(None))
BACKEND_KEYS = {
    "usable": bool, "why": OPT_STR, "hypervisor": OPT_STR,
    "api_version": OPT_INT, "sync_regs": OPT_BOOL, "memslots": OPT_INT,
    "pmu": OPT_BOOL, "rdtsc_trap": OPT_BOOL, "cpuid_control": OPT_BOOL,
    "cpu": (dict, type(None)), "hwcap": OPT_STR,
    "syscall_us": (int, float, type(None)), "probe_calls": int,
    "controlled": (dict, type(None)), "leaks": list,
}
CPU_KEYS = {"vendor": str, "family": int, "model": int, "stepping": int,
            "brand": str}
CONTROLLED = {"cpuid": {"model", "host"}, "rdtsc": {"trapped", "rewritten"},
              "cpu_number": {"model"}}

problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def check_keys(obj, keys, where):
    check(isinstance(obj, dict), f"{where}: not an object")
    if not isinstance(obj, dict):
        return
    for k, t in keys.items():
        check(k in obj, f"{where}.{k}: missing")
        if k in obj:
            check(isinstance(obj[k], t) and not (t is int and
                                                 isinstance(obj[k], bool)),
                  f"{where}.{k}: {obj[k]!r} is not {t}")
    for k in obj:
        check(k in keys, f"{where}.{k}: not in the schema")


def check_backend(name, b):
    where = f"backends.{name}"
    check_keys(b, BACKEND_KEYS, where)
    if not isinstance(b, dict) or "usable" not in b:
        return
    if b["usable"]:
        check(b["why"] is None, f"{where}: usable but has a why")
        check(isinstance(b["syscall_us"], NUM) and b["syscall_us"] > 0,
              f"{where}: usable without a measured syscall cost")
        check(b["probe_calls"] > 0, f"{where}: usable without probe calls")
        check(isinstance(b["rdtsc_trap"], bool) and
              isinstance(b["cpuid_control"], bool),
              f"{where}: usable without rdtsc_trap/cpuid_control")
    else:
        check(isinstance(b["why"], str) and b["why"],
              f"{where}: unusable without a why")
    if b.get("cpu") is not None:
        check_keys(b["cpu"], CPU_KEYS, f"{where}.cpu")
    if b.get("hwcap") is not None:
        check(re.fullmatch(r"0x[0-9a-f]+|0", b["hwcap"]) is not None,
              f"{where}.hwcap: {b['hwcap']!r} is not hex")
    if isinstance(b.get("controlled"), dict):
        for k, allowed in CONTROLLED.items():
            check(b["controlled"].get(k) in allowed,
                  f"{where}.controlled.{k}: {b['controlled'].get(k)!r}")
    for leak in b.get("leaks", []):
        check(isinstance(leak, str) and leak, f"{where}.leaks: {leak!r}")


def main():
    hvrun = sys.argv[1]
    r = subprocess.run([hvrun, "doctor", "--json"], capture_output=True,
                       text=True)
    text = subprocess.run([hvrun, "doctor"], capture_output=True, text=True)
    try:
        doc = json.loads(r.stdout)
    except ValueError as e:
        print(f"FAIL doctor/json: not JSON: {e}")
        return 1
    check_keys(doc, {"schema": str, "version": str, "commit": str,
                     "usable": bool, "backends": dict, "progress": dict,
                     "lines": list}, "")
    prog = doc.get("progress", {})
    check_keys(prog, {"counter": str, "pmu": (bool, type(None))}, "progress")
    check(prog.get("counter") in ("software", "none"),
          f"progress.counter: {prog.get('counter')!r}")
    check(doc.get("schema") == "hvrun-doctor/1",
          f"schema: {doc.get('schema')!r}")
    backends = doc.get("backends", {})
    check(set(backends) == {"kvm", "ptrace"},
          f"backends: {sorted(backends)}")
    for name, b in backends.items():
        check_backend(name, b)
    usable = any(b.get("usable") for b in backends.values())
    check(doc.get("usable") == usable, "usable: not any backend's")
    check(r.returncode == (0 if usable else 125),
          f"exit status {r.returncode} with usable={usable}")
    keys = [l.split(":", 1)[0] for l in text.stdout.splitlines() if ":" in l]
    got = [l.get("key") for l in doc.get("lines", [])]
    check(keys == got, f"lines: text report has {keys}, JSON {got}")
    for l in doc.get("lines", []):
        check_keys(l, {"key": str, "text": str}, "lines[]")
    if problems:
        for p in problems:
            print(f"FAIL doctor/json: {p}")
        return 1
    print(f"PASS doctor/json: schema hvrun-doctor/1, {len(got)} lines, "
          f"usable: " + ", ".join(f"{n}={b['usable']}"
                                  for n, b in backends.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
