"""Debian's arm64 busybox-static run end to end on everything this part of the project builds —
ELF loader and linker (recompiler.elf/link), process image and initial stack (cpu_host.linux),
system calls (cpu_host/runtime/linux/linux_syscalls.c) — with Unicorn standing in for the lifted code
as the CPU (test-only).  stdout, stderr and exit status must equal qemu-aarch64's.

Run as a script, this file is the driver:  python test_linux_busybox.py HARNESS.so PROGRAM ARGV0 ARGS...
(busybox's shell runs applets with execve("/proc/self/exe"): the personality re-runs this
driver through nx_linux_set_self_exec)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

HARNESS_C = r"""
#include "nxrt.h"
#include "linux_syscalls.h"
#include "id_regs.h"
#include <stdlib.h>
#include <string.h>
NxCpu *nxh_new(void) { NxCpu *s = aligned_alloc(64, sizeof(NxCpu)); memset(s, 0, sizeof *s); return s; }
uint64_t nxh_call(NxCpu *s, uint64_t pc, uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
                  uint64_t a4, uint64_t a5) {
    s->x[8] = nr; s->x[0] = a0; s->x[1] = a1; s->x[2] = a2; s->x[3] = a3; s->x[4] = a4; s->x[5] = a5;
    s->pc = pc; s->sp = 0;
    nx_linux_syscall(s, 0);
    return s->x[0];
}
uint64_t nxh_sp(NxCpu *s) { return s->sp; }
/* an MRS of an ID register answered as the runtime answers it (1), or not one (0) */
int nxh_id_register(uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2, uint64_t *v) {
    return nx_id_register(NX_SYSREG_KEY(op0, op1, crn, crm, op2), v);
}
"""

CDEF = """
typedef struct NxCpu NxCpu;
NxCpu *nxh_new(void);
uint64_t nxh_call(NxCpu *s, uint64_t pc, uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
                  uint64_t a4, uint64_t a5);
uint64_t nxh_sp(NxCpu *s);
int nxh_id_register(uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2, uint64_t *v);
int nx_linux_set_brk(uint64_t start, uint64_t reserve);
void nx_linux_set_exe(const char *path);
void nx_linux_add_mapping(uint64_t addr, uint64_t len);
void nx_linux_set_self_exec(const char *const *prefix, int n);
"""


def build_harness(out_dir: Path) -> Path:
    rt = ROOT / "cpu_host" / "runtime"
    (out_dir / "harness.c").write_text(HARNESS_C)
    so = out_dir / "harness.so"
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
            "-Wno-comment",
            "-shared",
            "-fPIC",
            f"-I{rt / 'core'}",
            f"-I{rt / 'linux'}",
            *map(str, sorted((rt / "linux").glob("linux_*.c"))),
            str(rt / "core" / "block_profile.c"),  # linux_syscalls.c writes a profile_gen build's counts at exit
            str(out_dir / "harness.c"),
            "-o",
            str(so),
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode:
        raise RuntimeError(r.stderr)
    return so


def drive(so: str, prog: str, argv: list[str], extra_hooks: list = (), random: bytes | None = None) -> None:
    """Run ``prog`` with Unicorn as the CPU; never returns (the guest's exit_group ends us)."""
    from cffi import FFI
    from unicorn import UC_ARCH_ARM64, UC_HOOK_INSN, UC_HOOK_INTR, UC_MODE_ARM, Uc, UcError
    from unicorn.arm64_const import (
        UC_ARM64_INS_MRS,
        UC_ARM64_REG_CPACR_EL1,
        UC_ARM64_REG_PC,
        UC_ARM64_REG_SP,
        UC_ARM64_REG_X0,
        UC_ARM64_REG_X8,
        UC_CPU_ARM64_MAX,
    )

    from cpu_host.linux.process import page_up, setup_process
    from recompiler.link import link_program

    ffi = FFI()
    ffi.cdef(CDEF)
    lib = ffi.dlopen(so)
    image = link_program(prog)
    exe = os.path.abspath(prog)
    proc = setup_process(
        image,
        [os.fsencode(a) for a in argv],
        [k.encode() + b"=" + v.encode() for k, v in os.environ.items()],
        personality=lib,
        exe_path=exe,
        random=random,
    )
    prefix = [ffi.new("char[]", os.fsencode(x)) for x in (sys.executable, os.path.abspath(__file__), so, prog)]
    lib.nx_linux_set_self_exec(ffi.new("char *[]", prefix), len(prefix))

    uc = Uc(UC_ARCH_ARM64, UC_MODE_ARM)
    # the auxiliary vector claims what the lifter implements (LSE atomics, RCPC, ...: libgcc's
    # outline atomics then use them), so the CPU under the personality must have them too
    uc.ctl_set_cpu_model(UC_CPU_ARM64_MAX)
    for r in proc.regions:  # Unicorn reads and writes the very host pages the guest owns
        uc.mem_map_ptr(r.start, r.size, 7, r.start)
    uc.reg_write(UC_ARM64_REG_CPACR_EL1, 3 << 20)  # FP/SIMD enabled at EL0
    uc.reg_write(UC_ARM64_REG_SP, proc.sp)
    cpu = lib.nxh_new()
    brk_end = [proc.brk.start]
    regs = [UC_ARM64_REG_X0 + i for i in range(6)]

    def remap(start: int, size: int) -> None:
        try:
            uc.mem_unmap(start, size)
        except UcError:
            pass
        uc.mem_map_ptr(start, size, 7, start)

    def svc(uc, _intno, _data):
        nr = uc.reg_read(UC_ARM64_REG_X8)
        a = [uc.reg_read(x) for x in regs]
        r = lib.nxh_call(cpu, uc.reg_read(UC_ARM64_REG_PC), nr, *a)
        ok = r < 1 << 63
        if nr == 214:  # brk: show Unicorn the pages the personality opened or closed
            end = page_up(r)
            if end > brk_end[0]:
                uc.mem_map_ptr(brk_end[0], end - brk_end[0], 7, brk_end[0])
            elif end < brk_end[0]:
                uc.mem_unmap(end, brk_end[0] - end)
            brk_end[0] = end
        elif nr == 222 and ok:
            remap(r, page_up(a[1]))
        elif nr == 216 and ok:
            try:
                uc.mem_unmap(a[0], page_up(a[1]))
            except UcError:
                pass
            remap(r, page_up(a[2]))
        elif nr == 215 and r == 0:
            try:
                uc.mem_unmap(a[0], page_up(a[1]))
            except UcError:
                pass
        elif nr == 220 and r == 0 and lib.nxh_sp(cpu):  # child of a clone with its own stack
            uc.reg_write(UC_ARM64_REG_SP, lib.nxh_sp(cpu))
        uc.reg_write(UC_ARM64_REG_X0, r)

    id_value = ffi.new("uint64_t *")

    def mrs(uc, reg, cp, _data):
        # the ID registers read as the runtime reports them (cpu_host/runtime/core/id_regs.h), not
        # as Unicorn's "max" CPU model: glibc's IFUNC resolvers read MIDR_EL1 and the ID_AA64
        # registers, and both runs must pick the same string-function variants
        if not lib.nxh_id_register(cp.op0, cp.op1, cp.crn, cp.crm, cp.op2, id_value):
            return False
        uc.reg_write(reg, id_value[0])  # Unicorn's number of the destination (XZR: ignored)
        return True  # the instruction is done

    uc.hook_add(UC_HOOK_INTR, svc)
    uc.hook_add(UC_HOOK_INSN, mrs, None, 1, 0, UC_ARM64_INS_MRS)
    for kind, fn in extra_hooks:  # lockstep tracing (tests/recompiler/lockstep.py)
        uc.hook_add(kind, fn)
    try:
        uc.emu_start(proc.entry, 0)
    except UcError as e:
        print(f"unicorn: {e} at pc {uc.reg_read(UC_ARM64_REG_PC):#x}", file=sys.stderr)
    os._exit(99)


if __name__ == "__main__":
    drive(sys.argv[1], sys.argv[2], sys.argv[3:])

# ---- tests ----------------------------------------------------------------------------------
import pytest  # noqa: E402


from tests.cpu_host.busybox_cases import (
    CASES,
    HEAVY_CASES,
    compare_with_qemu,
    expected_status,  # noqa: E402
    fetch_busybox,
    make_inputs,
)

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def busybox() -> Path:
    return fetch_busybox()


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    return build_harness(tmp_path_factory.mktemp("bbharness"))


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return make_inputs(tmp_path_factory.mktemp("bbwork"))


def compare(busybox: Path, harness: Path, work: Path, argv: list[str], stdin: str | None = None) -> int:
    """Run argv both ways, assert equal stdout/stderr/status; return the status."""
    inp = (work / stdin).read_bytes() if stdin else b""
    return compare_with_qemu([sys.executable, __file__, str(harness), str(busybox)], busybox, work, argv, inp)


@pytest.mark.parametrize("argv", CASES, ids=lambda a: " ".join(a)[:40])
def test_busybox_applet_matches_qemu(busybox, harness, work, argv):
    # the failures are meant: a case that fails by accident would compare two errors
    assert compare(busybox, harness, work, argv) == expected_status(argv)


def test_busybox_reads_stdin(busybox, harness, work):
    assert compare(busybox, harness, work, ["tr", "a-z", "n-za-m"], stdin="words.txt") == 0
    assert compare(busybox, harness, work, ["sh"], stdin="words.txt") == 127  # unknown commands


@pytest.mark.heavy
@pytest.mark.parametrize("argv", list(HEAVY_CASES.values()), ids=list(HEAVY_CASES))
def test_busybox_heavy(busybox, harness, work, argv):
    assert compare(busybox, harness, work, argv) == 0
