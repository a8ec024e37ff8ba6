#!/usr/bin/env python3
"""no_userns.py PROGRAM [ARGS...]: runs PROGRAM where unshare(2) of a user
namespace fails EPERM, as on a host that does not allow them (a seccomp
filter of this process and its children only; nothing host-wide)."""
import ctypes
import os
import struct
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
AUDIT_ARCH_X86_64 = 0xC000003E
NR_UNSHARE = 272
CLONE_NEWUSER = 0x10000000
RET_ALLOW = 0x7FFF0000
RET_EPERM = 0x00050000 | 1
# BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_JMP|BPF_JSET|BPF_K, BPF_RET|BPF_K
LD, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06


def insn(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


prog = b"".join([
    insn(LD, 0, 0, 4),                      # seccomp_data.arch
    insn(JEQ, 0, 5, AUDIT_ARCH_X86_64),
    insn(LD, 0, 0, 0),                      # .nr
    insn(JEQ, 0, 3, NR_UNSHARE),
    insn(LD, 0, 0, 16),                     # .args[0], low half
    insn(JSET, 0, 1, CLONE_NEWUSER),
    insn(RET, 0, 0, RET_EPERM),
    insn(RET, 0, 0, RET_ALLOW),
])


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


libc = ctypes.CDLL(None, use_errno=True)
fprog = SockFprog(len(prog) // 8, prog)
if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
        libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog),
                   0, 0) != 0:
    sys.exit("no_userns.py: seccomp: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])
