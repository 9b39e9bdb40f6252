"""The Linux AArch64 personality (cpu_host/runtime/linux/linux_syscalls.c) driven through a small C
harness: register values in, x0 out, as lifted code would call it.  Each case runs in its own
Python process (the personality resets signal dispositions, reserves brk, exits, forks).

Oracles: the host kernel and Python's os module (os.stat, os.listdir, pipes), and the
kernel's own asm-generic unistd.h (shipped with zig) for the system call numbers."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "cpu_host" / "runtime"

HARNESS_C = r"""
#include "nxrt.h"
#include "linux_syscalls.h"
#include <stdlib.h>
#include <string.h>
NxCpu *nxh_new(void) { NxCpu *s = aligned_alloc(64, sizeof(NxCpu)); memset(s, 0, sizeof *s); return s; }
uint64_t nxh_call(NxCpu *s, uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
                  uint64_t a4, uint64_t a5) {
    s->x[8] = nr; s->x[0] = a0; s->x[1] = a1; s->x[2] = a2; s->x[3] = a3; s->x[4] = a4; s->x[5] = a5;
    s->pc = 0x400104;   /* the lifter stores the address after the SVC */
    nx_linux_syscall(s, 0);
    return s->x[0];
}
uint64_t nxh_sp(NxCpu *s) { return s->sp; }
uint64_t nxh_tls(NxCpu *s) { return s->tpidr_el0; }
"""

CDEF = """
typedef struct NxCpu NxCpu;
NxCpu *nxh_new(void);
uint64_t nxh_call(NxCpu *s, uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
uint64_t nxh_sp(NxCpu *s);
uint64_t nxh_tls(NxCpu *s);
int nx_linux_set_brk(uint64_t start, uint64_t reserve);
void nx_linux_set_exe(const char *path);
void nx_linux_add_mapping(uint64_t addr, uint64_t len);
const char *nx_linux_syscall_name(uint32_t n);
int nx_generated_code_region(uint64_t addr, uint64_t *base, uint64_t *size);
"""

PRELUDE = """
import os, sys, struct, errno
from cffi import FFI
ffi = FFI(); ffi.cdef(CDEF); lib = ffi.dlopen(SO)
s = lib.nxh_new()
def sc(nr, *args):   # args stays referenced during the call: a temporary cstr() is not freed before
    a = list(args) + [0] * (6 - len(args))
    a = [int(ffi.cast("uint64_t", x)) if isinstance(x, ffi.CData) else x & 0xFFFFFFFFFFFFFFFF for x in a]
    r = lib.nxh_call(s, nr, *a)
    return r - (1 << 64) if r >= 1 << 63 else r
def buf(n): return ffi.new("char[]", n)
def addr(b): return int(ffi.cast("uint64_t", b))
def cstr(t): return ffi.new("char[]", t.encode() if isinstance(t, str) else t)
AT_FDCWD = -100
"""


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("linux_harness")
    (d / "harness.c").write_text(HARNESS_C)
    so = d / "harness.so"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ziglang",
            "cc",
            "-target",
            "x86_64-linux-gnu",
            "-fno-sanitize=all",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Wno-comment",
            "-Werror",
            "-shared",
            "-fPIC",
            f"-I{RUNTIME / 'core'}",
            f"-I{RUNTIME / 'linux'}",
            *map(str, sorted((RUNTIME / "linux").glob("linux_*.c"))),
            str(RUNTIME / "core" / "block_profile.c"),  # linux_syscalls.c writes a profile_gen build's counts at exit
            str(d / "harness.c"),
            "-o",
            str(so),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return so


def guest(harness: Path, body: str, *, check: bool = True, **kw) -> subprocess.CompletedProcess:
    code = f"CDEF = {CDEF!r}\nSO = {str(harness)!r}\n" + PRELUDE + textwrap.dedent(body)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, **kw)
    if check:
        assert r.returncode == 0, r.stderr.decode()[-3000:]
    return r


def test_write_to_pipe(harness):
    r = guest(
        harness,
        """
        rfd, wfd = os.pipe()
        msg = cstr(b"hello from the guest\\n")
        assert sc(64, wfd, msg, 21) == 21
        assert os.read(rfd, 100) == b"hello from the guest\\n"
        assert sc(64, 9999, msg, 3) == -errno.EBADF
        print("ok")
    """,
    )
    assert r.stdout == b"ok\n"


def test_openat_read_close(harness, tmp_path):
    f = tmp_path / "data.txt"
    f.write_bytes(b"0123456789" * 100)
    guest(
        harness,
        f"""
        fd = sc(56, AT_FDCWD, cstr({str(f)!r}), 0, 0)
        assert fd >= 0, fd
        b = buf(64)
        assert sc(63, fd, b, 10) == 10 and ffi.buffer(b, 10)[:] == b"0123456789"
        assert sc(62, fd, 995, 0) == 995             # lseek SEEK_SET
        assert sc(63, fd, b, 64) == 5
        assert sc(67, fd, b, 4, 12) == 4 and ffi.buffer(b, 4)[:] == b"2345"   # pread64
        assert sc(57, fd) == 0 and sc(57, fd) == -errno.EBADF
        assert sc(56, AT_FDCWD, cstr("/nonexistent/x"), 0, 0) == -errno.ENOENT
        # writev of two pieces into a new file (O_WRONLY|O_CREAT|O_TRUNC)
        fd = sc(56, AT_FDCWD, cstr({str(tmp_path / "out")!r}), 0o1101, 0o644)
        a, c = cstr(b"abc"), cstr(b"defg")
        iov = ffi.new("uint64_t[4]", [addr(a), 3, addr(c), 4])
        assert sc(66, fd, iov, 2) == 7 and sc(57, fd) == 0
    """,
    )
    assert (tmp_path / "out").read_bytes() == b"abcdefg"


STAT = "<QQIIIIQQqiiqqqqqqqII"


def _check_stat(raw: bytes, st: os.stat_result) -> None:
    import struct

    (dev, ino, mode, nlink, uid, gid, rdev, _p, size, blksize, _p2, blocks, at, atn, mt, mtn, ct, ctn, _u1, _u2) = struct.unpack(
        STAT, raw
    )
    assert (dev, ino, mode, nlink, uid, gid, rdev, size, blksize, blocks) == (
        st.st_dev,
        st.st_ino,
        st.st_mode,
        st.st_nlink,
        st.st_uid,
        st.st_gid,
        st.st_rdev,
        st.st_size,
        st.st_blksize,
        st.st_blocks,
    )
    assert (at * 10**9 + atn, mt * 10**9 + mtn, ct * 10**9 + ctn) == (st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns)


def test_fstat_and_newfstatat_layout(harness, tmp_path):
    f = tmp_path / "file"
    f.write_bytes(b"x" * 5000)
    (tmp_path / "link").symlink_to(f)
    r = guest(
        harness,
        f"""
        b = buf(128 + 16)
        fd = sc(56, AT_FDCWD, cstr({str(f)!r}), 0, 0)
        assert sc(80, fd, b) == 0
        sys.stdout.buffer.write(ffi.buffer(b, 128)[:])
        assert sc(79, AT_FDCWD, cstr({str(tmp_path / "link")!r}), b, 0x100) == 0   # AT_SYMLINK_NOFOLLOW
        sys.stdout.buffer.write(ffi.buffer(b, 128)[:])
        assert sc(79, AT_FDCWD, cstr("/no/such"), b, 0) == -errno.ENOENT
        assert sc(80, 12345, b) == -errno.EBADF
    """,
    )
    _check_stat(r.stdout[:128], os.stat(f))
    _check_stat(r.stdout[128:256], os.lstat(tmp_path / "link"))


def test_open_flags_are_translated(harness, tmp_path):
    """aarch64's O_DIRECTORY (040000) is x86-64's O_DIRECT: it must reach the host as
    O_DIRECTORY (opening a file with it fails with ENOTDIR), and F_GETFL reports aarch64 bits."""
    f = tmp_path / "plain"
    f.write_text("x")
    guest(
        harness,
        f"""
        O_DIRECTORY, O_NOFOLLOW, O_LARGEFILE = 0o40000, 0o100000, 0o400000
        assert sc(56, AT_FDCWD, cstr({str(f)!r}), O_DIRECTORY, 0) == -errno.ENOTDIR
        fd = sc(56, AT_FDCWD, cstr({str(tmp_path)!r}), O_DIRECTORY, 0)
        assert fd >= 0
        fl = sc(25, fd, 3)                     # F_GETFL
        assert fl & O_DIRECTORY and fl & O_LARGEFILE and not fl & 0o200000, oct(fl)
        os.symlink({str(f)!r}, {str(tmp_path / "sl")!r})
        assert sc(56, AT_FDCWD, cstr({str(tmp_path / "sl")!r}), O_NOFOLLOW, 0) == -errno.ELOOP
        p = ffi.new("int[2]")
        assert sc(59, p, 0o4000) == 0          # pipe2(O_NONBLOCK)
        assert sc(63, p[0], buf(4), 4) == -errno.EAGAIN
    """,
    )


def test_getdents64_lists_directory(harness, tmp_path):
    for n in ("a", "bb", "ccc"):
        (tmp_path / n).write_text(n)
    r = guest(
        harness,
        f"""
        fd = sc(56, AT_FDCWD, cstr({str(tmp_path)!r}), 0o40000, 0)
        b = buf(4096); names = []
        while (n := sc(61, fd, b, 4096)) > 0:
            raw = ffi.buffer(b, n)[:]; off = 0
            while off < n:
                reclen = struct.unpack_from("<H", raw, off + 16)[0]
                names.append(raw[off + 19:off + reclen].split(b"\\0")[0].decode()); off += reclen
        print(" ".join(sorted(names)))
    """,
    )
    assert r.stdout.decode().split() == sorted([".", "..", "a", "bb", "ccc"])


def test_ioctl_is_never_a_tty(harness):
    guest(
        harness,
        """
        master, slave = os.openpty()
        assert os.isatty(slave)
        ws = buf(64)
        assert sc(29, slave, 0x5401, ws) == -errno.ENOTTY     # TCGETS on a real tty
        assert sc(29, slave, 0x5413, ws) == -errno.ENOTTY     # TIOCGWINSZ
        rfd, wfd = os.pipe()
        assert sc(29, rfd, 0x5401, ws) == -errno.ENOTTY
        assert sc(29, 4321, 0x5401, ws) == -errno.EBADF
        os.write(wfd, b"12345")
        n = ffi.new("int *")
        assert sc(29, rfd, 0x541B, n) == 0 and n[0] == 5       # FIONREAD passes through
    """,
    )


def test_uname_readlink_exe_and_ids(harness):
    r = guest(
        harness,
        """
        u = buf(65 * 6)
        assert sc(160, u) == 0
        f = [ffi.string(u + 65 * i).decode() for i in range(6)]
        assert f[4] == "aarch64" and f[0] == os.uname().sysname and f[2] == os.uname().release
        lib.nx_linux_set_exe(b"/opt/guest/busybox")
        b = buf(256)
        n = sc(78, AT_FDCWD, cstr("/proc/self/exe"), b, 256)
        assert ffi.buffer(b, n)[:] == b"/opt/guest/busybox", n
        assert sc(78, AT_FDCWD, cstr("/proc/self/exe"), b, 4) == 4
        assert (sc(172), sc(173), sc(174), sc(175), sc(176), sc(177)) == \
            (os.getpid(), os.getppid(), os.getuid(), os.geteuid(), os.getgid(), os.getegid())
        ts = ffi.new("int64_t[2]")
        assert sc(113, 0, ts) == 0
        import time
        assert abs(ts[0] + ts[1] / 1e9 - time.time()) < 5
        assert sc(96, 0x1234) == sc(178)                  # set_tid_address returns the tid
        assert sc(293, 0, 0, 0, 0) == -errno.ENOSYS       # rseq
        print(lib.nx_linux_syscall_name(221) and ffi.string(lib.nx_linux_syscall_name(221)).decode())
    """,
    )
    assert r.stdout == b"execve\n"


@pytest.mark.parametrize("huge", [None, "auto", "0", "1"])  # None: unset, the default (auto)
def test_brk_grows_and_shrinks(harness, huge):
    env = {k: v for k, v in os.environ.items() if k != "NXRECOMP_CPU_HOST_HUGE_PAGES"}
    if huge is not None:
        env["NXRECOMP_CPU_HOST_HUGE_PAGES"] = huge
    guest(
        harness,
        env=env,
        body="""
        import ctypes
        start, reserve = 0x3F0000000000, 1 << 24
        assert lib.nx_linux_set_brk(start, reserve) == 0
        assert sc(214, 0) == start
        assert sc(214, start + 10000) == start + 10000
        ctypes.memset(start, 0xAB, 10000)                 # the pages are writable
        assert ctypes.string_at(start + 9999, 1) == b"\\xab"
        assert sc(214, start + 100) == start + 100         # shrink
        assert sc(214, start + 20000) == start + 20000     # grow again: what was given back is zero
        assert ctypes.string_at(start + 100, 19900) == bytes(19900)
        assert ctypes.string_at(start + 99, 1) == b"\\xab"   # below the lowest break: kept
        assert sc(214, start + reserve + 4096) == start + 20000   # beyond the reserve: refused
        assert sc(214, start - 4096) == start + 20000
        # glibc's pattern: grow by 132 KiB, give back a page, many times; then a big shrink
        top = start + 20000
        for _ in range(40):
            top += 132 << 10
            assert sc(214, top) == top
            ctypes.memset(top - 8192, 0xCD, 8192)
            top -= 4096
            assert sc(214, top) == top
        assert sc(214, start + 20000) == start + 20000
        assert sc(214, top) == top
        assert ctypes.string_at(start + 20000, top - start - 20000) == bytes(top - start - 20000)
        # one mapping for the whole area (moving the break splits nothing); where huge pages are
        # asked for (cpu_host.huge_pages), the area past its first 2 MiB (start is 2 MiB-aligned)
        # is a second mapping, marked for them; "auto": asked where the kernel's THP mode is
        # "madvise" (the kernel's own file says which)
        areas = [l for l in open("/proc/self/smaps") if l[:1] in "0123456789abcdef" and "-" in l.split()[0]]
        mine = [l for l in areas if int(l.split("-")[0], 16) < start + reserve
                and int(l.split()[0].split("-")[1], 16) > start]
        smaps = open("/proc/self/smaps").read()
        marked = [" hg" in smaps.split(m, 1)[1].split("VmFlags:", 1)[1].split("\\n", 1)[0] for m in mine]
        mode = "/sys/kernel/mm/transparent_hugepage/enabled"
        thp = os.path.exists(mode)   # a kernel with THP
        want = os.environ.get("NXRECOMP_CPU_HOST_HUGE_PAGES", "auto")
        on = want == "1" or (want == "auto" and thp and "[madvise]" in open(mode).read())
        if thp and on:
            assert [l.split()[0] for l in mine] == [f"{start:x}-{start + (2 << 20):x}",
                                                    f"{start + (2 << 20):x}-{start + reserve:x}"], mine
            assert marked == [False, True], mine
        else:
            assert len(mine) == 1 and marked == [False], mine
    """,
    )


def test_mmap_munmap_and_host_memory_is_protected(harness):
    guest(
        harness,
        """
        import ctypes
        PROT_RW, MAP_PA, MAP_FIXED = 3, 0x22, 0x10
        a = sc(222, 0, 1 << 20, PROT_RW, MAP_PA, -1, 0)
        assert 0 < a < 1 << 47 and a % 4096 == 0
        ctypes.memset(a, 1, 1 << 20)
        assert sc(226, a, 4096, 1) == 0                        # mprotect inside the guest's mapping
        assert sc(215, a, 1 << 20) == 0                        # munmap of the guest's own mapping
        host = buf(1 << 16); h = (addr(host) + 4095) & ~4095
        ffi.buffer(host)[0:4] = b"HOST"
        assert sc(215, h, 4096) == -errno.EINVAL              # host memory: refused
        assert sc(226, h, 4096, 0) == -errno.ENOMEM           # mprotect of host memory: refused
        r = sc(222, h, 4096, PROT_RW, MAP_PA | MAP_FIXED, -1, 0)
        assert r == -errno.ENOMEM, r                           # MAP_FIXED over host memory: refused
        assert ffi.buffer(host)[0:4] == b"HOST"
        # MAP_FIXED into a free hole is allowed, and over the guest's own mapping too
        b = sc(222, 0, 1 << 16, PROT_RW, MAP_PA, -1, 0)
        assert sc(222, b + 4096, 4096, PROT_RW, MAP_PA | MAP_FIXED, -1, 0) == b + 4096
        assert sc(215, b, 1 << 16) == 0
        assert sc(222, b, 4096, PROT_RW, MAP_PA | MAP_FIXED, -1, 0) == b
        # mremap within guest memory
        c = sc(216, b, 4096, 1 << 16, 1, 0)                    # MREMAP_MAYMOVE
        assert c > 0 and sc(215, c, 1 << 16) == 0
        print("ok")
    """,
    )


def test_unknown_syscall_exits_125_with_message(harness):
    r = guest(harness, "sc(42, 1, 2, 3)\nprint('not reached')", check=False)
    assert r.returncode == 125
    assert r.stderr.decode() == "nxrecomp: unhandled system call 42 (nfsservctl) at pc 0x400100\n"
    assert r.stdout == b""
    r = guest(harness, "sc(300)", check=False)
    assert r.returncode == 125 and b"unhandled system call 300 (unknown)" in r.stderr


def test_exit_group_status(harness):
    r = guest(harness, "sys.stdout.write('buffered '); sc(94, 7)", check=False)
    assert r.returncode == 7
    r = guest(harness, "sc(93, 300)", check=False)  # exit of the only thread, status & 0xff
    assert r.returncode == 300 & 0xFF


def test_signals_to_self(harness):
    # default action of SIGTERM: the process dies by that signal
    r = guest(harness, "sc(129, os.getpid(), 15)\nprint('alive')", check=False)
    assert r.returncode == -signal.SIGTERM and r.stdout == b""
    # abort() = tgkill(self, SIGABRT)
    r = guest(harness, "sc(131, os.getpid(), sc(178), 6)", check=False)
    assert r.returncode == -signal.SIGABRT
    # SIG_IGN recorded through rt_sigaction: survives; the old action reads back
    r = guest(
        harness,
        """
        act = ffi.new("uint64_t[4]", [1, 0, 0, 0]); old = ffi.new("uint64_t[4]")
        assert sc(134, 15, act, 0, 8) == 0
        assert sc(129, os.getpid(), 15) == 0
        assert sc(134, 15, 0, old, 8) == 0 and old[0] == 1
        assert sc(134, 9, act, 0, 8) == -errno.EINVAL      # SIGKILL cannot be changed
        assert sc(129, os.getpid(), 17) == 0                 # SIGCHLD: ignored by default
        print("alive")
    """,
    )
    assert r.stdout == b"alive\n"


def test_sigpipe_is_default_for_the_guest(harness):
    """Python ignores SIGPIPE; a Linux program does not: writing to a closed pipe kills it."""
    r = guest(
        harness,
        """
        rfd, wfd = os.pipe(); os.close(rfd)
        sc(64, wfd, cstr(b"x"), 1)
        print("alive")
    """,
        check=False,
    )
    assert r.returncode == -signal.SIGPIPE


def test_clone_forks_and_wait4(harness):
    r = guest(
        harness,
        """
        ctid = ffi.new("int32_t *")
        pid = sc(220, 0x01200011, 0, 0, 0, ctid)   # CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD
        if pid == 0:
            assert ctid[0] == os.getpid()
            sc(64, 1, cstr(b"child\\n"), 6)
            sc(94, 3)
        st = ffi.new("int *")
        assert sc(260, pid, st, 0, 0) == pid and st[0] == 3 << 8
        # clone(2): CLONE_THREAD needs CLONE_SIGHAND (EINVAL); a whole thread's flags need the
        # run loop, which this harness lacks (ENOSYS); tests/realprogs/test_threads.py runs them
        assert sc(220, 0x10000 | 0x100, 0, 0, 0, 0) == -errno.EINVAL   # CLONE_THREAD|CLONE_VM
        assert sc(220, 0x10000 | 0x800 | 0x400 | 0x200 | 0x100, 0, 0, 0, 0) == -errno.ENOSYS
        # a thread with its own file table (no CLONE_FILES) cannot share the host's: refused
        assert sc(220, 0x10000 | 0x800 | 0x200 | 0x100, 0, 0, 0, 0) == -errno.EINVAL
        assert sc(221, cstr("/nonexistent/true"), 0, 0) == -errno.ENOENT   # execve: the host's answer
        print("parent")
    """,
    )
    assert r.stdout == b"child\nparent\n"


def test_execve_of_another_program_is_the_hosts(harness):
    """execve of a path other than the guest program's own runs it on the host, as qemu-aarch64
    does (popen and posix_spawn of /bin/sh work); the child's output and status come back."""
    r = guest(
        harness,
        """
        pid = sc(220, 0x11, 0, 0, 0, 0)   # SIGCHLD: fork
        if pid == 0:
            a0, a1 = cstr("echo"), cstr("from /bin/echo")
            argv = ffi.new("char *[]", [a0, a1, ffi.NULL])
            sc(221, cstr("/bin/echo"), argv, 0)
            sc(94, 99)                     # reached only if execve failed
        st = ffi.new("int *")
        assert sc(260, pid, st, 0, 0) == pid and st[0] == 0, st[0]
        print("parent", flush=True)
    """,
    )
    assert r.stdout == b"from /bin/echo\nparent\n"


def test_clone_with_new_stack_sets_sp(harness):
    r = guest(
        harness,
        """
        pid = sc(220, 0x4111, 0x7000DEAD0, 0, 0, 0)   # CLONE_VM|CLONE_VFORK|SIGCHLD, stack
        if pid == 0:
            sc(94, 0 if lib.nxh_sp(s) == 0x7000DEAD0 else 1)
        st = ffi.new("int *")
        assert sc(260, pid, st, 0, 0) == pid and st[0] == 0
    """,
    )
    assert r.returncode == 0


def test_syscall_table_matches_kernel_header(harness, tmp_path):
    """Our number -> name table against the kernel's asm-generic unistd.h as clang sees it for
    aarch64 (headers shipped with zig)."""
    src = tmp_path / "u.c"
    src.write_text("#include <asm/unistd.h>\n")
    r = subprocess.run(
        [sys.executable, "-m", "ziglang", "cc", "-target", "aarch64-linux-gnu", "-E", "-dM", str(src)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    defs = dict(re.findall(r"#define (__NR3264_\w+|__NR_\w+) (\S+)", r.stdout))

    def value(v: str, depth: int = 0) -> int | None:
        if v.isdigit():
            return int(v)
        if v in defs and depth < 5:
            return value(defs[v], depth + 1)
        return None

    kernel = {}
    for k, v in defs.items():
        if k.startswith("__NR_") and (n := value(v)) is not None and k not in ("__NR_syscalls", "__NR_arch_specific_syscall"):
            kernel.setdefault(n, k[5:])
    assert kernel[63] == "read" and len(kernel) > 300
    out = guest(
        harness,
        """
        for n in range(480):
            p = lib.nx_linux_syscall_name(n)
            print(n, ffi.string(p).decode() if p != ffi.NULL else "-")
    """,
    ).stdout.decode()
    ours = {int(a): b for a, b in (l.split() for l in out.splitlines()) if b != "-"}
    # names the kernel header spells with its 64-bit alias (fstatat64 vs newfstatat etc.)
    alias = {"fstatat": "newfstatat", "fstat": "fstat", "fadvise64_64": "fadvise64"}
    mismatch = {n: (ours.get(n), kernel[n]) for n in kernel if n < 472 and alias.get(kernel[n], kernel[n]) != ours.get(n)}
    assert not mismatch, mismatch
    assert set(ours) <= set(kernel)


def test_generated_code_memory_follows_prot_exec(harness):
    """What lift on miss treats as code generated at run time (linux_syscalls.c): memory mapped
    or mprotected PROT_EXEC outside the runner's image, until it is unmapped, made not executable
    or mapped over; the window given to the lifter is at most 1 MiB either side of the target."""
    guest(
        harness,
        """
        import mmap
        RW, RX, RWX, MAP_PA, MAP_FIXED = 3, 5, 7, 0x22, 0x10
        lo, n = ffi.new("uint64_t *"), ffi.new("uint64_t *")
        def region(a):
            return (lo[0], n[0]) if lib.nx_generated_code_region(a, lo, n) else None
        a = sc(222, 0, 1 << 16, RWX, MAP_PA, -1, 0)                # sljit's RWX chunk
        assert region(a + 0x100) == (a, 1 << 16)
        assert sc(226, a, 4096, RW) == 0                             # its first page no longer executable
        assert region(a + 0x100) is None and region(a + 4096) == (a + 4096, (1 << 16) - 4096)
        assert sc(215, a, 1 << 16) == 0 and region(a + 4096) is None  # munmap
        b = sc(222, 0, 1 << 16, RW, MAP_PA, -1, 0)                  # W^X: RW, then RX
        assert region(b) is None
        assert sc(226, b, 8192, RX) == 0 and region(b + 4) == (b, 8192)
        assert sc(222, b, 4096, RW, MAP_PA | MAP_FIXED, -1, 0) == b  # mapped over, not executable
        assert region(b + 4) is None and region(b + 4096) == (b + 4096, 4096)
        big = sc(222, 0, 8 << 20, RWX, MAP_PA, -1, 0)               # a JIT's large reservation
        assert region(big + (4 << 20) + 8) == (big + (3 << 20), 2 << 20)
        img = mmap.mmap(-1, 1 << 16, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        i = addr(ffi.from_buffer(img))
        lib.nx_linux_add_mapping(i, 1 << 16)                        # the runner's image
        assert sc(226, i, 4096, RX) == 0 and region(i) is None      # the program's own code
        """,
    )
