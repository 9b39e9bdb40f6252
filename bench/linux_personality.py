"""Speed of the Linux personality's pieces.

1. System calls: a loop of 1-byte write(/dev/null) and fstat through nx_linux_syscall (what
   lifted code calls) against the same calls made directly on the host (anchor: the floor),
   and against qemu-aarch64 running an aarch64 program doing the same loop (anchor: the
   emulator we are compared with).
2. Load + link: recompiler.elf/link on Debian's arm64 busybox-static and lua5.4 with all its
   libraries, against pyelftools reading the same symbols and relocations.

    .venv/bin/python bench/linux_personality.py

Prints ns per call / seconds and the ratios."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N = 1_000_000

BENCH_C = r"""
#include "nxrt.h"
#include "linux_syscalls.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int fd = open("/dev/null", O_WRONLY);
    static NxCpu s; char b[256] = "x";
    double t0 = now();
    for (long i = 0; i < n; i++) { s.x[8] = 64; s.x[0] = fd; s.x[1] = (uint64_t)b; s.x[2] = 1; nx_linux_syscall(&s, 0); }
    double t1 = now();
    for (long i = 0; i < n; i++) syscall(SYS_write, fd, b, 1);
    double t2 = now();
    for (long i = 0; i < n; i++) { s.x[8] = 80; s.x[0] = fd; s.x[1] = (uint64_t)b; nx_linux_syscall(&s, 0); }
    double t3 = now();
    struct stat st;
    for (long i = 0; i < n; i++) fstat(fd, &st);
    double t4 = now();
    printf("%f %f %f %f\n", (t1 - t0) / n * 1e9, (t2 - t1) / n * 1e9, (t3 - t2) / n * 1e9, (t4 - t3) / n * 1e9);
    return 0;
}
"""

GUEST_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int fd = open("/dev/null", O_WRONLY);
    char b[1] = "x"; struct stat st;
    double t0 = now();
    for (long i = 0; i < n; i++) write(fd, b, 1);
    double t1 = now();
    for (long i = 0; i < n; i++) fstat(fd, &st);
    double t2 = now();
    printf("%f %f\n", (t1 - t0) / n * 1e9, (t2 - t1) / n * 1e9);
    return 0;
}
"""


def zig(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "ziglang", "cc", *args], check=True)


def syscalls() -> None:
    rt = ROOT / "cpu_host" / "runtime"
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "b.c").write_text(BENCH_C)
        (d / "g.c").write_text(GUEST_C)
        zig(
            "-target",
            "x86_64-linux-gnu",
            "-fno-sanitize=all",
            "-O2",
            "-Wno-comment",
            f"-I{rt / 'core'}",
            f"-I{rt / 'linux'}",
            *map(str, sorted((rt / "linux").glob("linux_*.c"))),
            str(rt / "core" / "block_profile.c"),  # linux_syscalls.c writes a profile_gen build's counts at exit
            str(d / "b.c"),
            "-o",
            str(d / "b"),
        )
        ours_w, host_w, ours_s, host_s = map(
            float, subprocess.run([str(d / "b"), str(N)], capture_output=True, text=True, check=True).stdout.split()
        )
        print(f"write(1 byte): nx_linux_syscall {ours_w:.0f} ns, host {host_w:.0f} ns, ratio {ours_w / host_w:.2f}")
        print(f"fstat:         nx_linux_syscall {ours_s:.0f} ns, host {host_s:.0f} ns, ratio {ours_s / host_s:.2f}")
        if shutil.which("qemu-aarch64"):
            zig("-target", "aarch64-linux-musl", "-static", "-O2", str(d / "g.c"), "-o", str(d / "g"))
            q_w, q_s = map(
                float,
                subprocess.run(["qemu-aarch64", str(d / "g"), str(N)], capture_output=True, text=True, check=True).stdout.split(),
            )
            print(
                f"qemu-aarch64:  write {q_w:.0f} ns, fstat {q_s:.0f} ns; "
                f"ours/qemu: write {ours_w / q_w:.2f}, fstat {ours_s / q_s:.2f}"
            )


def best(fn, reps: int = 3) -> float:
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def load_link() -> None:
    from elftools.elf.elffile import ELFFile
    from elftools.elf.relocation import RelocationSection

    from nxrecomp.common import debian
    from recompiler.elf import load_elf
    from recompiler.link import link_program

    try:
        roots = [debian.fetch(p, "arm64") for p in ("lua5.4", "liblua5.4-0", "libc6", "libreadline8", "libtinfo6")]
        bb = debian.busybox("arm64")
    except debian.RegistryUnreachable as e:
        print(f"(no Debian mirror: {e}; load/link part skipped)")
        return
    lua = roots[0] / "usr/bin/lua5.4"
    img = link_program(lua, roots[1:])
    paths = [Path(m.path) for m in img.modules]

    def pyelf() -> None:
        for p in paths:
            with open(p, "rb") as f:
                ef = ELFFile(f)
                for s in ef.iter_sections():
                    if s.name == ".dynsym":
                        list(s.iter_symbols())
                    elif isinstance(s, RelocationSection):
                        list(s.iter_relocations())

    t_ours = best(lambda: [load_elf(p) for p in paths])
    t_link = best(lambda: link_program(lua, roots[1:]))
    t_ref = best(pyelf)
    t_bb = best(lambda: link_program(bb))
    print(
        f"load 6 modules of lua5.4: ours {t_ours * 1e3:.1f} ms, pyelftools (symbols+relocs only) "
        f"{t_ref * 1e3:.1f} ms, ratio {t_ours / t_ref:.2f}"
    )
    print(f"load+link lua5.4 + 5 libraries: {t_link * 1e3:.1f} ms; busybox-static: {t_bb * 1e3:.1f} ms")


if __name__ == "__main__":
    syscalls()
    load_link()
