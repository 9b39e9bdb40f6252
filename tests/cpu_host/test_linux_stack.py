"""cpu_host.linux.stack: the initial process stack, read by a real libc's startup code.

A static musl program (built here for aarch64 with zig's clang) prints argc/argv/envp and
auxiliary-vector values through musl's own getauxval and finds its TLS through AT_PHDR.  It runs
under Unicorn on the stack we build (the program is placed with recompiler.link), and under
qemu-aarch64 with the same arguments: the two outputs must agree."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from nxrecomp.bundle.memory_map import Region, brk_region, check_disjoint, segment_regions, stack_region
from cpu_host.linux.stack import (
    AT_EXECFN,
    AT_HWCAP,
    AT_PHDR,
    AT_PLATFORM,
    AT_RANDOM,
    HWCAP2_DEFAULT,
    HWCAP_DEFAULT,
    ProgramInfo,
    initial_stack,
    parse_stack,
)
from recompiler.elf import load_elf
from recompiler.link import link

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
__thread int tlsvar = 42;
int main(int argc, char **argv, char **envp) {
    printf("argc=%d\n", argc);
    for (int i = 0; i < argc; i++) printf("argv[%d]=%s\n", i, argv[i]);
    for (char **e = envp; *e; e++) printf("env=%s\n", *e);
    printf("HOME=%s\n", getenv("HOME"));
    printf("pagesz=%lu clktck=%lu secure=%lu\n", getauxval(AT_PAGESZ), getauxval(AT_CLKTCK), getauxval(AT_SECURE));
    printf("platform=%s execfn=%s\n", (char *)getauxval(AT_PLATFORM), (char *)getauxval(AT_EXECFN));
    printf("tls=%d\n", tlsvar);
    fprintf(stderr, "hwcap=%lx hwcap2=%lx uid=%lu euid=%lu gid=%lu egid=%lu\n", getauxval(AT_HWCAP),
            getauxval(AT_HWCAP2), getauxval(AT_UID), getauxval(AT_EUID), getauxval(AT_GID), getauxval(AT_EGID));
    unsigned char *r = (unsigned char *)getauxval(AT_RANDOM);
    for (int i = 0; i < 16; i++) fprintf(stderr, "%02x", r[i]);
    fprintf(stderr, "\n");
    return 3;
}
"""

ARGV = [b"/opt/prog", b"a", b"b c", b""]
ENVP = [b"HOME=/home/guest", b"X=1", b"EMPTY="]


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("stackprog")
    (d / "p.c").write_text(PROGRAM)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ziglang",
            "cc",
            "-target",
            "aarch64-linux-musl",
            "-static",
            "-O1",
            str(d / "p.c"),
            "-o",
            str(d / "p"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    return d / "p"


def _run_unicorn(path: Path, sp: int, data: bytes, stack: Region) -> tuple[int, bytes, bytes]:
    from unicorn import UC_ARCH_ARM64, UC_HOOK_INTR, UC_MODE_ARM, Uc
    from unicorn.arm64_const import UC_ARM64_REG_PC, UC_ARM64_REG_SP, UC_ARM64_REG_X0, UC_ARM64_REG_X8

    im = link([load_elf(path)])
    uc = Uc(UC_ARCH_ARM64, UC_MODE_ARM)
    perms = {"r": 1, "w": 2, "x": 4}
    regions = segment_regions(im.segments) + [stack, brk_region(im.brk_start, 1 << 20)]
    check_disjoint(regions)
    for r in regions:
        uc.mem_map(r.start, r.size, 7)
        assert all(c in perms or c == "-" for c in r.prot)
    for s in im.segments:
        uc.mem_write(s.vaddr, s.data)
    uc.mem_write(sp, data)
    uc.reg_write(UC_ARM64_REG_SP, sp)
    out = {1: bytearray(), 2: bytearray()}
    status = []
    brk = [brk_region(im.brk_start, 1 << 20).start]

    def svc(uc, intno, _):
        nr = uc.reg_read(UC_ARM64_REG_X8)
        a = [uc.reg_read(UC_ARM64_REG_X0 + i) for i in range(6)]
        ret = -38  # ENOSYS
        if nr == 66:  # writev
            total = 0
            for i in range(a[2]):
                base, ln = struct.unpack("<QQ", uc.mem_read(a[1] + 16 * i, 16))
                out[a[0]].extend(uc.mem_read(base, ln))
                total += ln
            ret = total
        elif nr == 64:
            out[a[0]].extend(uc.mem_read(a[1], a[2]))
            ret = a[2]
        elif nr == 29:
            ret = -25  # ENOTTY
        elif nr == 96:
            ret = 1
        elif nr == 73:  # ppoll: musl checks fds 0-2 when uid != euid (secure mode); all open
            ret = 0
        elif nr == 214:
            ret = brk[0] if a[0] == 0 else a[0]
        elif nr in (93, 94):
            status.append(a[0])
            uc.emu_stop()
            return
        uc.reg_write(UC_ARM64_REG_X0, ret & 0xFFFFFFFFFFFFFFFF)

    uc.hook_add(UC_HOOK_INTR, svc)
    uc.emu_start(im.entry, 0, count=5_000_000)
    assert status, f"program did not exit; pc={uc.reg_read(UC_ARM64_REG_PC):#x}"
    return status[0], bytes(out[1]), bytes(out[2])


def test_stack_read_by_musl_matches_qemu(program):
    m = load_elf(program)
    stack = stack_region(0x7F_0000_0000, 1 << 20)
    rnd = bytes(range(16))
    sp, data = initial_stack(
        stack.end, ARGV, ENVP, ProgramInfo(m.phdr_vaddr, m.phent, m.phnum, m.entry), random=rnd, ids=(1000, 1000, 1002, 1002)
    )  # uid != euid would put musl in secure mode
    assert sp % 16 == 0 and sp + len(data) == stack.end
    code, out, err = _run_unicorn(program, sp, data, stack)
    assert code == 3
    expect = [
        "argc=4",
        "argv[0]=/opt/prog",
        "argv[1]=a",
        "argv[2]=b c",
        "argv[3]=",
        "env=HOME=/home/guest",
        "env=X=1",
        "env=EMPTY=",
        "HOME=/home/guest",
        "pagesz=4096 clktck=100 secure=0",
        "platform=aarch64 execfn=/opt/prog",
        "tls=42",
    ]
    assert out.decode().splitlines() == expect
    assert err.decode().splitlines() == [
        f"hwcap={HWCAP_DEFAULT:x} hwcap2={HWCAP2_DEFAULT:x} uid=1000 euid=1000 gid=1002 egid=1002",
        rnd.hex(),
    ]
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) not installed; Unicorn part passed")
    q = subprocess.run(
        ["env", "-i", "qemu-aarch64", "-0", "/opt/prog", str(program), *[a.decode() for a in ARGV[1:]]],
        capture_output=True,
        timeout=60,
    )
    # qemu reports the host path as AT_EXECFN; everything else must be the same
    qlines = [l for l in q.stdout.decode().splitlines() if not l.startswith("env=") and "execfn" not in l]
    ours = [l for l in expect if not l.startswith("env=") and "execfn" not in l and not l.startswith("HOME")]
    assert q.returncode == 3 and [l for l in qlines if not l.startswith("HOME")] == ours


def test_layout_details():
    info = ProgramInfo(phdr=0x400040, phent=56, phnum=6, entry=0x400580)
    top = 0x7F_FFFF_0000
    sp, data = initial_stack(
        top, [b"busybox", b"echo", b"hi"], [b"A=1"], info, hwcap=0x3, hwcap2=0x2, random=b"R" * 16, ids=(11, 12, 13, 14)
    )
    argv, envp, aux = parse_stack(sp, data)
    assert [aux[k] for k in (11, 12, 13, 14, 23, 6, 17, 7)] == [11, 12, 13, 14, 0, 4096, 100, 0]

    def cstr(addr: int) -> bytes:
        off = addr - sp
        return data[off : data.index(b"\0", off)]

    assert [cstr(a) for a in argv] == [b"busybox", b"echo", b"hi"] and [cstr(e) for e in envp] == [b"A=1"]
    assert aux[AT_PHDR] == 0x400040 and aux[AT_HWCAP] == 3 and aux[26] == 2 and aux[9] == 0x400580
    assert cstr(aux[AT_EXECFN]) == b"busybox" and cstr(aux[AT_PLATFORM]) == b"aarch64"
    assert data[aux[AT_RANDOM] - sp : aux[AT_RANDOM] - sp + 16] == b"R" * 16
    assert data[-8:] == bytes(8) and sp % 16 == 0
    # every pointer lies inside the block, above the table
    for p in argv + envp + [aux[AT_RANDOM], aux[AT_EXECFN], aux[AT_PLATFORM]]:
        assert sp < p < top
    with pytest.raises(ValueError, match="NUL"):
        initial_stack(top, [b"a\0b"], [], info)
    with pytest.raises(ValueError, match="aligned"):
        initial_stack(top + 8, [b"a"], [], info)


def test_segment_regions_merge_shared_pages():
    class S:
        def __init__(self, vaddr, memsz, prot):
            self.vaddr, self.memsz, self.prot = vaddr, memsz, prot

    regs = segment_regions([S(0x400000, 0x1800, "r-x"), S(0x401800, 0x2000, "rw-")])
    assert regs == [Region(0x400000, 0x401000, "r-x"), Region(0x401000, 0x402000, "rwx"), Region(0x402000, 0x404000, "rw-")]
    with pytest.raises(ValueError, match="overlap"):
        check_disjoint([Region(0, 0x2000, "r--"), Region(0x1000, 0x3000, "r--")])
