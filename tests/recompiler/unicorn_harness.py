"""Differential test of the lifter against Unicorn: one A64 instruction at a time.

For an instruction class of ``recompiler/isa.py`` (``Form.cls``) the harness draws random
instruction words through ``Form.encode``, keeps those that decode back to the same form, that
the lifter lifts without ``nx_unimplemented`` and that Unicorn 2.1.4 executes without an
exception, and gives each one random registers (X0-X30, SP, NZCV, V0-V31).  Unicorn
single-steps the word; the lifted C of the one-instruction function (compiled with every
other case of the class into one shared library, with the test-only stubs of
``harness_stubs.c``) runs on an ``NxCpu``.  Both see the same scratch memory at the same
address (Unicorn's mapping and an ``mmap`` of the host process), and the states after are
compared: X, SP, PC, NZCV, V, the system registers the class writes, and the scratch memory.

One more class is the harness's own: ``ldst_excl_pair``, a load-exclusive followed by a
store-exclusive of the same size and base (a two-instruction function), so that the store
succeeds and its memory write and status are compared too.  MRS/MSR are drawn only for NZCV,
FPCR, FPSR, TPIDR_EL0 (and MRS TPIDRRO_EL0); SYS only for DC/IC cache operations.

FP and SIMD classes (``FP_CLASSES``) are drawn with a random FPCR (rounding mode, FZ, DN) in
60% of cases; the lifted side gets it in s->fpcr and in the host's MXCSR (``NX_FPCR_APPLY``,
what a guest MSR FPCR does) for the call.  Special FP operands (``_F32``/``_F64``) are mixed in.

The lifted code runs in a forked child, so a crash of one case (a bad address, a trap) is
reported as that case's failure instead of killing the test process.
"""

from __future__ import annotations

import multiprocessing
import random
import re
import struct
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
from unicorn import Uc, UcError, UC_ARCH_ARM64, UC_MODE_ARM, UC_ERR_FETCH_UNMAPPED
from unicorn import arm64_const as A

from recompiler import cc
from recompiler.build import FLAGS, RUNTIME_DIR
from recompiler.decode import Insn, decode, disasm
from recompiler.isa import BY_NAME, FORMS, Form
from recompiler.lift import HANDLERS
from recompiler.lift.control import branch_target
from recompiler.lift.emitter import FunctionEmitter, FunctionPlan, fname

M64 = (1 << 64) - 1
STUBS_C = Path(__file__).resolve().parent / "harness_stubs.c"

# Scratch memory: mapped at the same address by Unicorn and by the child that runs lifted code.
# Below 2^39 like guest memory; several candidates in case another mapping holds one.
SCRATCH_BASES = (0x10_0000_0000, 0x13_5700_0000, 0x2A_4200_0000, 0x61_0000_0000)
SCRATCH_SIZE = 1 << 20
CODE_OFF = 0x80000  # each accepted case's words at CODE_OFF + 8 * its index
DATA_LO, DATA_HI = 0x10000, 0xF0000  # where base registers point (offsets stay inside)

# What the harness cannot show.
SKIPPED_CLASSES = {"exception": "SVC/BRK/UDF only call the runtime (nx_svc/nx_brk): nothing to compare"}
SKIPPED_FORMS = {
    # Unicorn runs at EL1, where MSR DAIFSet/SPSel/PAN... change PSTATE (SPSel even switches SP);
    # user code cannot use them (UNDEFINED at EL0), and the lifter makes them no-ops.
    "MSR_imm": "PSTATE writes: privileged, no user-mode effect to compare",
    # FEAT_HBC (Armv8.8): Unicorn 2.1.4 predates it and raises UNDEFINED; test_modimm_bcond_forms
    # checks that it lifts to B.cond's C (the Arm ARM: the same branch, with a hint)
    "BC_cond": "BC.cond: not in Unicorn 2.1.4's CPU (FEAT_HBC)",
}
MEMORY_CLASSES = {"ldst_lit", "ldst_excl", "ldst_pair", "ldst_atomic", "ldst_reg", "ldst_imm", "simd_ldst", "system"}
# The system class runs on Switch 1's core (Cortex-A57, ARMv8.0): its hint space is all NOPs there,
# as the lifter treats it.  Unicorn's "max" CPU would execute pointer-authentication hints.
A57_CLASSES = {"system"}


# A class of this harness, not of the table: LDXR-family load then store-exclusive (two words).
EXCL_PAIR = "ldst_excl_pair"


def classes() -> list[str]:
    """Every instruction class of the table, in table order, skipped ones left out; the
    exclusive pairs after the exclusives."""
    seen: list[str] = []
    for f in FORMS:
        if f.cls not in seen and f.cls not in SKIPPED_CLASSES:
            seen.append(f.cls)
            if f.cls == "ldst_excl":
                seen.append(EXCL_PAIR)
    return seen


# ---- machine state ---------------------------------------------------------------------------
@dataclass
class State:
    x: list[int]
    sp: int
    pc: int
    nzcv: int
    v: list[int]
    fpcr: int = 0
    fpsr: int = 0
    tpidr: int = 0
    tpidrro: int = 0
    trap: int = 0  # set by a harness stub the instruction must not reach


@dataclass
class Case:
    index: int
    form: Form
    insn: Insn
    inp: State
    c_code: str
    expected: State | None = None
    exp_mem: tuple[bytes, bytes] = (b"", b"")
    lift_error: str = ""  # the lifter raised on this word (a lifter bug; nothing to run)
    prefix: list[Insn] = field(default_factory=list)  # run before ``insn`` (LDXR before STXR)

    @property
    def insns(self) -> list[Insn]:
        return [*self.prefix, self.insn]

    @property
    def word(self) -> int:
        return self.insn.word

    @property
    def words(self) -> list[int]:
        return [i.word for i in self.insns]

    @property
    def addr(self) -> int:
        """Entry of the case's function (its first instruction)."""
        return self.insns[0].addr

    def describe(self) -> str:
        pre = "".join(f"after {i.word:#010x} '{disasm(i.word, i.addr)}': " for i in self.prefix)
        return f"{pre}{self.form.name} {self.word:#010x} '{disasm(self.word, self.insn.addr)}' @{self.insn.addr:#x}"


@dataclass
class ClassResult:
    cls: str
    run: int = 0
    passed: int = 0
    known: int = 0  # cases of known lifter bugs (tested apart, xfail)
    candidates: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


# ---- random operands ---------------------------------------------------------------------------
_INTERESTING = [
    0,
    1,
    2,
    3,
    0x1F,
    0x20,
    0x3F,
    0x40,
    0x7F,
    0x80,
    0xFF,
    0x100,
    0x7FFF,
    0x8000,
    0xFFFF,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFFF,
    0x100000000,
    0x7FFFFFFFFFFFFFFF,
    0x8000000000000000,
    M64,
    M64 - 1,
    0xFFFFFFFF00000000,
    0x00000000FFFFFFFE,
]
_F32 = [
    0x00000000,
    0x80000000,
    0x3F800000,
    0xBF800000,
    0x3F000000,
    0x3FC00000,
    0x40200000,
    0xC0200000,
    0x7F800000,
    0xFF800000,
    0x7FC00000,
    0xFFC00000,
    0x7F800001,
    0x7FA00000,
    0xFFC12345,
    0x00000001,
    0x807FFFFF,
    0x00800000,
    0x7F7FFFFF,
    0xFF7FFFFF,
    0x4F000000,
    0xCF000000,
    0x5F000000,
    0xDF000000,
    0x4F800000,
    0x5F800000,
    0x3EAAAAAB,
    0x4B400000,
]
_F64 = [
    0x0000000000000000,
    0x8000000000000000,
    0x3FF0000000000000,
    0xBFF0000000000000,
    0x3FE0000000000000,
    0x3FF8000000000000,
    0x4004000000000000,
    0xC004000000000000,
    0x7FF0000000000000,
    0xFFF0000000000000,
    0x7FF8000000000000,
    0xFFF8000000000000,
    0x7FF0000000000001,
    0x7FF4000000000000,
    0x7FF8000000012345,
    0x0000000000000001,
    0x800FFFFFFFFFFFFF,
    0x0010000000000000,
    0x7FEFFFFFFFFFFFFF,
    0x41E0000000000000,
    0xC1E0000000000000,
    0x43E0000000000000,
    0xC3E0000000000000,
    0x41F0000000000000,
    0x43F0000000000000,
    0x3FD5555555555555,
    0x4338000000000000,
    0x36A0000000000000,
]
# more special operands: signalling NaNs with payloads (both signs), the largest denormals,
# values next to the integer conversion limits and to the float range/rounding edges
_F32 += [
    0xFF812345,
    0x7F8000FF,
    0x007FFFFF,
    0x80000001,
    0x4EFFFFFF,
    0x4F7FFFFF,
    0x5EFFFFFF,
    0x5F7FFFFF,
    0xCF000001,
    0xDF000001,
    0x3F7FFFFF,
    0x3FC00001,
    0x00C00000,
    0x01000000,
]
_F64 += [
    0xFFF0000000012345,
    0x7FF00000000000FF,
    0x000FFFFFFFFFFFFF,
    0x8000000000000001,
    0x41DFFFFFFFC00000,
    0x41EFFFFFFFE00000,
    0x43DFFFFFFFFFFFFF,
    0x43EFFFFFFFFFFFFF,
    0xC3E0000000000001,
    0xC1E0000000200000,
    0x47EFFFFFE0000000,
    0x47EFFFFFF0000000,
    0x380FFFFFF0000000,
    0x3690000000000000,
    0x36A8000000000000,
    0x3FF0000010000000,
    0x3FF0000030000000,
    0x3FEFFFFFFFFFFFFF,
]
FP_CLASSES = (
    "fp_arith",
    "fp_cvt",
    "fp_fixcvt",
    "fp_cmp",
    "simd_3same",
    "simd_2reg",
    "simd_elem",
    "simd_across",
    "fp_recip",
    "fp_narrow",
    "fp_round",
    "fp_half",
    "fp_half_misc",
    "fp_half_vec",
    "fp_across",
)  # drawn with random FPCR rounding mode, FZ and DN
# The classes of the FP gaps (lift/fp_recip.py, fp_half.py, fp_round.py) also get operands at
# their own edges in half of their vector registers: estimate overflow (|x| < 2^-128, 2^-1024) and
# flush (|x| >= 2^126, 2^1022) limits, the half-precision range (65504, 65520, 2^-24, 2^-25, AHP's
# 131008), FJCVTZS's int32 range and large values (mod 2^32), FRINT32/64 limits; lanes of half
# precision specials; and fp_narrow draws FPCR.AHP and FZ16 too.  The FP16 classes (fp_half*)
# get half-precision lanes in most vector registers and FPCR.FZ16.
EDGE_CLASSES = ("fp_recip", "fp_narrow", "fp_round")
HALF_CLASSES = ("fp_half", "fp_half_misc", "fp_half_vec", "fp_across")
_F16 = [
    0x0000,
    0x8000,
    0x3C00,
    0xBC00,
    0x7BFF,
    0xFBFF,
    0x7C00,
    0xFC00,
    0x7E00,
    0xFE00,
    0x7D01,
    0xFC01,
    0x7E55,
    0x0001,
    0x8001,
    0x03FF,
    0x0400,
    0x3555,
    0x7FFF,
    0x3800,
    0x4000,
]
_F32_EDGE = [
    0x477FE000,
    0x477FF000,
    0x477FEFFF,
    0x477FF001,
    0x33800000,
    0x33000000,
    0x33000001,
    0x38800000,
    0x387FC000,
    0x387FE000,
    0x47FFE000,
    0x47FFF000,
    0x00200000,
    0x001FFFFF,
    0x80100000,
    0x7E800000,
    0x7E7FFFFF,
    0xFE800000,
    0x3F000001,
    0x3E800000,
    0x3EFFFFFF,
    0x4EFFFFFE,
    0xCF000000,
    0x5EFFFFFF,
    0xDF000000,
    0x3FC00000,
    0xBFC00000,
    0x40200000,
]
_F64_EDGE = [
    0x41DFFFFFFFC00000,
    0xC1E0000000000000,
    0xC1E0000000100000,
    0x41E0000000000000,
    0x41EFFFFFFFE00000,
    0x41F0000000000000,
    0x41F0000000100000,
    0x4530000000000001,
    0x4540000000000003,
    0xC540000000000003,
    0x7FE0000000000000,
    0x7FD0000000000000,
    0x7FCFFFFFFFFFFFFF,
    0x0004000000000000,
    0x0003FFFFFFFFFFFF,
    0x0008000000000000,
    0x40EFFFC000000000,
    0x40EFFE0000000000,
    0x40EFFE0000000001,
    0x3E70000000000000,
    0x3E60000000000000,
    0x3E60000000000001,
    0x3FE0000000000001,
    0xBFF8000000000000,
    0x43DFFFFFFFFFFFFF,
    0xC3E0000000000000,
    0x3810000000000000,
    0x380FFFFFE0000000,
    0x36A0000000000001,
]
FPCR_BITS = 0x07FF0000  # AHP DN FZ RMode Stride FZ16 Len, as Unicorn keeps them
FPSR_BITS = 0xF800009F  # N Z C V QC IDC IXC UFC OFC DZC IOC


def rand_x(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.2:
        return rng.choice(_INTERESTING)
    if r < 0.55:
        return rng.getrandbits(64)
    if r < 0.75:
        return rng.getrandbits(32)
    return rng.randint(-64, 64) & M64


def _f32(rng: random.Random) -> int:
    if rng.random() < 0.45:
        return rng.choice(_F32)
    return struct.unpack("<I", struct.pack("<f", rng.uniform(-1, 1) * 2.0 ** rng.randint(-30, 40)))[0]


def _f64(rng: random.Random) -> int:
    if rng.random() < 0.45:
        return rng.choice(_F64)
    return struct.unpack("<Q", struct.pack("<d", rng.uniform(-1, 1) * 2.0 ** rng.randint(-80, 80)))[0]


def edge_v(rng: random.Random) -> int:
    """A vector of the FP gaps' edge operands: eight halves, four singles or two doubles."""
    r = rng.random()
    if r < 0.3:
        lanes, bits = [rng.choice(_F16) if rng.random() < 0.7 else rng.getrandbits(16) for _ in range(8)], 16
    elif r < 0.65:
        lanes, bits = [rng.choice(_F32_EDGE + _F32) if rng.random() < 0.8 else _f32(rng) for _ in range(4)], 32
    else:
        lanes, bits = [rng.choice(_F64_EDGE + _F64) if rng.random() < 0.8 else _f64(rng) for _ in range(2)], 64
    return sum(v << (bits * k) for k, v in enumerate(lanes))


def rand_v(rng: random.Random) -> int:
    out = 0
    for half in range(2):
        r = rng.random()
        if r < 0.3:
            d = rng.getrandbits(64)
        elif r < 0.65:
            d = _f32(rng) | (_f32(rng) << 32)
        else:
            d = _f64(rng)
        out |= d << (64 * half)
    return out


def scratch_ptr(rng: random.Random, base: int, align: int | None = None) -> int:
    a = base + rng.randrange(DATA_LO, DATA_HI)
    if align is None:
        align = rng.choice([16, 16, 8, 4, 1])
    return a & ~(align - 1)


# ---- per-form field samplers: uniform, except where uniform would be almost always rejected ---
def _sign(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


_SYS_OPS = [(3, 7, 11, 1), (3, 7, 10, 1), (3, 7, 14, 1), (3, 7, 5, 1), (3, 7, 4, 1), (3, 7, 12, 1)]  # DC/IC
_SYSREGS_R = [(1, 3, 4, 2, 0), (1, 3, 4, 4, 0), (1, 3, 4, 4, 1), (1, 3, 13, 0, 2), (1, 3, 13, 0, 3)]
_SYSREGS_W = [(1, 3, 4, 2, 0), (1, 3, 4, 4, 0), (1, 3, 4, 4, 1), (1, 3, 13, 0, 2)]


def sample_fields(form: Form, rng: random.Random) -> dict[str, int]:
    f = {n: rng.getrandbits(w) for n, _lsb, w in form.fields}
    n = form.name
    if form.group == "LDR_lit":  # keep the literal inside the scratch area (code sits in its middle)
        f["imm19"] = _sign(rng.randint(-0x4000, 0x4000), 19)
    elif n == "SYS":
        f["L"] = 0
        f["op1"], f["CRn"], f["CRm"], f["op2"] = rng.choice(_SYS_OPS)
    elif form.group in ("MRS", "MSR_reg"):  # the registers of the form (MRS_fpsr, MSR_fp: FPSR, FPCR)
        names = ("o0", "op1", "CRn", "CRm", "op2")
        regs = _SYSREGS_R if form.group == "MRS" else _SYSREGS_W
        ok = [t for t in regs if form.matches(form.encode(**{**f, **dict(zip(names, t))}))]
        f.update(zip(names, rng.choice(ok)))
    return f


# which fields name registers of each kind (for operand setup and failure reports)
_GP_FIELDS = ("Rd", "Rn", "Rm", "Ra", "Rt", "Rt2", "Rs")


def make_input(form: Form, insn: Insn, rng: random.Random, base: int) -> State:
    x = [rand_x(rng) for _ in range(31)]
    v = [rand_v(rng) for _ in range(32)]
    st = State(
        x=x,
        sp=scratch_ptr(rng, base, 16),
        pc=insn.addr,
        nzcv=rng.getrandbits(4) << 28,
        v=v,
        tpidr=rng.getrandbits(64),
        tpidrro=rng.getrandbits(64),
    )
    f = insn.f
    cls = form.cls
    if cls in FP_CLASSES and rng.random() < 0.6:  # RMode (RN/RP/RM/RZ), FZ, DN
        st.fpcr = rng.getrandbits(4) << 22
    if cls in EDGE_CLASSES:
        for k in range(32):
            if rng.random() < 0.5:
                v[k] = edge_v(rng)
        if cls == "fp_narrow":  # AHP, FZ16 (conversions must ignore FZ16)
            st.fpcr |= (rng.random() < 0.3) << 26 | (rng.random() < 0.2) << 19
    if cls in HALF_CLASSES:
        for k in range(32):
            if rng.random() < 0.8:
                v[k] = sum((rng.choice(_F16) if rng.random() < 0.5 else rng.getrandbits(16)) << (16 * j) for j in range(8))
        st.fpcr |= (rng.random() < 0.3) << 19  # FZ16
    if cls == "sysreg":
        st.fpcr = rng.getrandbits(32) & FPCR_BITS & ~(1 << 26 | 0x37 << 16)  # rounding/FZ/DN only
        st.fpsr = rng.getrandbits(32) & FPSR_BITS
    if cls in MEMORY_CLASSES:
        aligned = cls in ("ldst_excl", "ldst_atomic") and rng.random() < 0.9
        if "Rn" in f and f["Rn"] != 31:
            x[f["Rn"]] = scratch_ptr(rng, base, 16 if aligned else None)
        if form.name == "SYS":
            if f["Rt"] != 31:
                x[f["Rt"]] = scratch_ptr(rng, base)
        if "Rm" in f and f["Rm"] != 31 and f["Rm"] != f.get("Rn"):
            small = rng.randint(-256, 256) & M64
            if rng.random() < 0.3:  # only the low 32 bits count for UXTW/SXTW
                small = (small & 0xFFFFFFFF) | (rng.getrandbits(32) << 32)
            x[f["Rm"]] = small
    return st


# ---- Unicorn side ------------------------------------------------------------------------------
_X_REGS = [getattr(A, f"UC_ARM64_REG_X{i}") for i in range(29)] + [A.UC_ARM64_REG_X29, A.UC_ARM64_REG_X30]
_Q_REGS = [getattr(A, f"UC_ARM64_REG_Q{i}") for i in range(32)]


class UnicornCpu:
    """A Unicorn AArch64 CPU with the scratch area mapped, stepping one word at a time."""

    def __init__(self, base: int, bg: bytes, model: int) -> None:
        self.base, self.bg = base, bg
        self.uc = Uc(UC_ARCH_ARM64, UC_MODE_ARM)
        self.uc.ctl_set_cpu_model(model)
        self.uc.mem_map(base, SCRATCH_SIZE)
        self.bg_arr = np.frombuffer(bg, dtype=np.uint8)

    def clear_monitor(self) -> None:
        """CLREX, so an earlier case's LDXR leaves no reservation behind."""
        self.step_word(0xD503305F, self.base + CODE_OFF - 4)

    def step_word(self, word: int, addr: int) -> None:
        self.uc.mem_write(addr, word.to_bytes(4, "little"))
        self.uc.ctl_remove_cache(addr, addr + 4)
        self.uc.emu_start(addr, 1, count=1)

    def run(self, words: int | list[int], st: State, count: int | None = None) -> tuple[State, tuple[bytes, bytes]] | None:
        """State and memory change after stepping ``words`` (one instruction, or a short
        straight-line sequence) from ``st.pc``, or None if Unicorn raised an exception;
        ``count``: how many instructions run where a branch skips some (default: every word)."""
        uc = self.uc
        words = [words] if isinstance(words, int) else words
        code = b"".join(w.to_bytes(4, "little") for w in words)
        uc.mem_write(self.base, self.bg)
        uc.mem_write(st.pc, code)
        uc.ctl_remove_cache(st.pc, st.pc + len(code))
        for r, val in zip(_X_REGS, st.x):
            uc.reg_write(r, val)
        for r, val in zip(_Q_REGS, st.v):
            uc.reg_write(r, val)
        uc.reg_write(A.UC_ARM64_REG_SP, st.sp)
        uc.reg_write(A.UC_ARM64_REG_NZCV, st.nzcv)
        uc.reg_write(A.UC_ARM64_REG_FPCR, st.fpcr)
        uc.reg_write(A.UC_ARM64_REG_FPSR, st.fpsr)
        uc.reg_write(A.UC_ARM64_REG_TPIDR_EL0, st.tpidr)
        uc.reg_write(A.UC_ARM64_REG_TPIDRRO_EL0, st.tpidrro)
        try:
            uc.emu_start(st.pc, 1, count=count or len(words))
        except UcError as e:
            # A branch out of the mapped area completes, then the fetch of its target fails.
            if e.errno != UC_ERR_FETCH_UNMAPPED or uc.reg_read(A.UC_ARM64_REG_PC) == st.pc:
                return None
        out = State(
            x=[uc.reg_read(r) for r in _X_REGS],
            sp=uc.reg_read(A.UC_ARM64_REG_SP),
            pc=uc.reg_read(A.UC_ARM64_REG_PC),
            nzcv=uc.reg_read(A.UC_ARM64_REG_NZCV),
            v=[uc.reg_read(r) for r in _Q_REGS],
            fpcr=uc.reg_read(A.UC_ARM64_REG_FPCR),
            fpsr=uc.reg_read(A.UC_ARM64_REG_FPSR),
            tpidr=uc.reg_read(A.UC_ARM64_REG_TPIDR_EL0),
            tpidrro=uc.reg_read(A.UC_ARM64_REG_TPIDRRO_EL0),
        )
        after = np.frombuffer(bytes(uc.mem_read(self.base, SCRATCH_SIZE)), dtype=np.uint8)
        return out, mem_diff(after, self.bg_arr)


def mem_diff(after: np.ndarray, bg: np.ndarray) -> tuple[bytes, bytes]:
    """(offsets, bytes) where memory differs from the background (the case's word included)."""
    idx = np.flatnonzero(after != bg)
    return idx.astype(np.uint32).tobytes(), after[idx].tobytes()


# ---- lifted side -------------------------------------------------------------------------------
def lift_one(insn: Insn) -> tuple[str, list[str]]:
    """C of the one-instruction function at ``insn.addr`` and the lifter's internal errors (a
    Python exception in a handler, which the lifter turns into a fatal trap and a log line)."""
    return lift_seq([insn])


def lift_seq(insns: list[Insn]) -> tuple[str, list[str]]:
    """The same for a function of consecutive instructions (the LDXR + STXR pairs)."""
    # elide_saves off: the comparison reads every register and memory byte after the function,
    # so a store of a callee-saved register into a stack slot must happen (in a program, where
    # AAPCS64 holds, nothing would read it back: recompiler.elide_saves drops it)
    em = FunctionEmitter(
        FunctionPlan(insns[0].addr, insns), set(), trust_abi=True, comments=False, ret_flags=True, elide_saves=False
    )
    code = em.emit(HANDLERS)
    return code, list(getattr(em, "internal_errors", []))


def build_library(cases: list[Case], work: Path, bad: dict[int, str], opt: str = "-O2") -> tuple[Path, dict[int, str]]:
    """Compile every case's function (but those in ``bad``) into one shared library.  A function
    the C compiler rejects is a lifter bug of that case: it is added to ``bad`` (index -> first
    error) and left out."""
    bad = dict(bad)
    for _attempt in range(4):
        keep = [c for c in cases if c.index not in bad]
        src = work / "cases.c"
        lines = ['#include "lifted.h"']
        owner: list[int] = [-1]  # line number (1-based) -> case index
        for c in keep:
            body = c.c_code.rstrip("\n").split("\n")
            lines.extend(body)
            owner.extend([c.index] * len(body))
        table = ", ".join(f"[{c.index}] = {fname(c.addr)}" for c in keep)
        lines.append(f"static const NxFn nxh_cases[{len(cases)}] = {{ {table} }};")
        # the case's FPCR reaches the host's MXCSR as a guest MSR FPCR would have put it there
        lines.append(
            "void nxh_run(unsigned i, NxCpu *s) { NX_FPCR_APPLY(s->fpcr); nx_enter(s, nxh_cases[i]); NX_FPCR_APPLY(0); }"
        )
        src.write_text("\n".join(lines) + "\n")
        so = work / "cases.so"
        r = subprocess.run(
            [
                *cc.compiler(),
                "-shared",
                "-o",
                str(so),
                str(src),
                str(STUBS_C),
                opt,
                *FLAGS,
                *cc.arch_flags(),
                f"-I{RUNTIME_DIR}",
                "-ferror-limit=0",
                "-fno-caret-diagnostics",
            ],
            capture_output=True,
            text=True,
        )
        if r.returncode == 0:
            return so, bad
        found = False
        for m in re.finditer(rf"{re.escape(str(src))}:(\d+):\d+: error: (.*)", r.stderr):
            ln = int(m.group(1))
            if 0 < ln < len(owner) and owner[ln] >= 0 and owner[ln] not in bad:
                bad[owner[ln]] = f"lifted C does not compile: {m.group(2)}"
                found = True
        if not found:
            raise RuntimeError(f"C compiler failed on {src}:\n{r.stderr[-3000:]}")
    raise RuntimeError(f"C compiler keeps failing on {src}")


_L = ("size", "x", "sp", "pc", "nzcv", "fpcr", "fpsr", "tpidr", "tpidrro", "resume", "excl_size", "v", "thread")


def _host_child(conn, so_path: str, base: int, bg: bytes, jobs: list[tuple[int, list[int], State]]) -> None:
    """Runs in a forked child: map the scratch area, run each case, send its state back."""
    from cffi import FFI

    ffi = FFI()
    ffi.cdef(
        "void nxh_run(unsigned i, void *s); extern const uint64_t nxh_layout[13];"
        "void *mmap(void *addr, size_t len, int prot, int flags, int fd, long off);"
    )
    libc = ffi.dlopen(None)
    got = libc.mmap(ffi.cast("void *", base), SCRATCH_SIZE, 3, 0x22 | 0x100000, -1, 0)  # RW, PRIVATE|ANON|FIXED_NOREPLACE
    if int(ffi.cast("uintptr_t", got)) != base:
        conn.send(("error", f"cannot map the scratch area at {base:#x}"))
        return
    lib = ffi.dlopen(so_path)
    lay = dict(zip(_L, list(lib.nxh_layout)))
    raw = ffi.new("uint8_t[]", lay["size"] + 16)
    cpu_addr = (int(ffi.cast("uintptr_t", raw)) + 15) & ~15
    cpu = ffi.cast("void *", cpu_addr)
    buf = ffi.buffer(cpu, lay["size"])
    mem = ffi.buffer(ffi.cast("void *", base), SCRATCH_SIZE)
    bg_arr = np.frombuffer(bg, dtype=np.uint8)
    for k, words, st in jobs:
        conn.send(("start", k))
        mem[:] = bg
        code = b"".join(w.to_bytes(4, "little") for w in words)
        mem[st.pc - base : st.pc - base + len(code)] = code
        buf[:] = bytes(lay["size"])
        struct.pack_into("<31Q", buf, lay["x"], *st.x)
        for name, val in (
            ("sp", st.sp),
            ("pc", st.pc),
            ("nzcv", st.nzcv),
            ("fpcr", st.fpcr),
            ("fpsr", st.fpsr),
            ("tpidr", st.tpidr),
            ("tpidrro", st.tpidrro),
        ):
            struct.pack_into("<Q", buf, lay[name], val)
        vb = b"".join(q.to_bytes(16, "little") for q in st.v)
        buf[lay["v"] : lay["v"] + 512] = vb
        lib.nxh_run(k, cpu)
        g = lambda name: struct.unpack_from("<Q", buf, lay[name])[0]  # noqa: E731
        v = bytes(buf[lay["v"] : lay["v"] + 512])
        out = State(
            x=list(struct.unpack_from("<31Q", buf, lay["x"])),
            sp=g("sp"),
            pc=g("pc"),
            nzcv=g("nzcv"),
            v=[int.from_bytes(v[i * 16 : i * 16 + 16], "little") for i in range(32)],
            fpcr=g("fpcr"),
            fpsr=g("fpsr"),
            tpidr=g("tpidr"),
            tpidrro=g("tpidrro"),
            trap=g("thread"),
        )
        after = np.frombuffer(bytes(mem), dtype=np.uint8)
        conn.send(("done", k, out, mem_diff(after, bg_arr)))
    conn.send(("end",))


def run_lifted(
    so: Path, base: int, bg: bytes, cases: list[Case], timeout: float = 120.0
) -> dict[int, tuple[State, tuple[bytes, bytes]] | str]:
    """Run every case's lifted function in forked children; a case that kills its child (or
    hangs) gets a string saying so, and the cases after it run in a new child."""
    ctx = multiprocessing.get_context("fork")
    results: dict[int, tuple[State, tuple[bytes, bytes]] | str] = {}
    pending = [(c.index, c.words, c.inp) for c in cases]
    while pending:
        parent, child = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_host_child, args=(child, str(so), base, bg, pending), daemon=True)
        p.start()
        child.close()
        current = None
        try:
            while True:
                if not parent.poll(timeout):
                    results[current if current is not None else pending[0][0]] = "lifted code hung (timeout)"
                    break
                msg = parent.recv()
                if msg[0] == "start":
                    current = msg[1]
                elif msg[0] == "done":
                    results[msg[1]] = (msg[2], msg[3])
                    current = None
                elif msg[0] == "error":
                    raise RuntimeError(msg[1])
                else:
                    break
        except EOFError:
            p.join(5)
            results[current if current is not None else pending[0][0]] = (
                f"lifted code crashed the process (exit code {p.exitcode})"
            )
        finally:
            if p.is_alive():
                p.kill()
            p.join(5)
            parent.close()
        pending = [j for j in pending if j[0] not in results]
    return results


# ---- comparison --------------------------------------------------------------------------------
def compare(case: Case, got: State, got_mem: tuple[bytes, bytes]) -> list[str]:
    exp = case.expected
    assert exp is not None
    diffs = []
    if got.trap:
        diffs.append(f"reached harness stub #{got.trap} (1=unimplemented 2=bad_resume 3=svc 4=brk 5/6=sysreg)")
    for i in range(31):
        if exp.x[i] != got.x[i]:
            diffs.append(f"x{i}: expected {exp.x[i]:#x} got {got.x[i]:#x}")
    for name in ("sp", "pc", "nzcv"):
        if getattr(exp, name) != getattr(got, name):
            diffs.append(f"{name}: expected {getattr(exp, name):#x} got {getattr(got, name):#x}")
    for i in range(32):
        if exp.v[i] != got.v[i]:
            diffs.append(f"v{i}: expected {exp.v[i]:#034x} got {got.v[i]:#034x}")
    if case.form.cls == "sysreg":
        for name in ("fpcr", "fpsr", "tpidr"):
            if getattr(exp, name) != getattr(got, name):
                diffs.append(f"{name}: expected {getattr(exp, name):#x} got {getattr(got, name):#x}")
    if case.exp_mem != got_mem:
        diffs.append("memory: " + _mem_text(case.exp_mem, got_mem))
    return diffs


def _mem_text(exp: tuple[bytes, bytes], got: tuple[bytes, bytes]) -> str:
    def as_map(d):
        idx = np.frombuffer(d[0], dtype=np.uint32)
        return dict(zip(idx.tolist(), d[1]))

    e, g = as_map(exp), as_map(got)
    offs = sorted(set(e) | set(g))
    bad = [o for o in offs if e.get(o) != g.get(o)]
    parts = [f"+{o:#x}: expected {e.get(o, 'bg')} got {g.get(o, 'bg')}" for o in bad[:6]]
    return f"{len(bad)} byte(s) differ ({', '.join(parts)}{', ...' if len(bad) > 6 else ''})"


def operands_text(case: Case) -> str:
    f, st = case.insn.f, case.inp
    parts = []
    vector = case.form.cls.startswith(("fp", "simd")) and case.form.cls != "simd_ldst"
    for n in _GP_FIELDS:
        if n in f:
            r = f[n]
            if vector or (n == "Rt" and (f.get("V") or case.form.cls == "simd_ldst")):
                parts.append(f"{n}=v{r}:{st.v[r]:#034x}")
            if not vector or case.form.cls == "fp_cvt":
                parts.append(f"{n}=x{r}:{st.x[r]:#x}" if r != 31 else f"{n}=31 (sp {st.sp:#x})")
    parts.append(f"nzcv={st.nzcv >> 28:04b}")
    if st.fpcr:
        parts.append(f"fpcr={st.fpcr:#x} (RMode {'NPMZ'[st.fpcr >> 22 & 3]} FZ {st.fpcr >> 24 & 1} DN {st.fpcr >> 25 & 1})")
    return " ".join(parts)


# ---- where the oracle itself is wrong ------------------------------------------------------------
def oracle_unreliable(insn: Insn, st: State, bg: bytes, base: int) -> str:
    """Why Unicorn's answer for this case cannot be trusted, or "".

    Unicorn 2.1.4 (QEMU 5.0's translator) compares LDSMAX/LDSMIN on bytes, halfwords and words
    as unsigned: with operands of different signs it stores the unsigned max/min (seen here:
    ``ldsmaxah w12, w30, [x25]`` with memory 0x48da and w12 = 0xcb92 stores 0xcb92).  Where the
    two operands have the same sign, signed and unsigned order agree, so those cases stay."""
    f = insn.f
    if insn.group == "SIMD_scalar_shift_imm" and f["opcode"] == 31 and f["immh"] >> 1 == 1:
        # FCVTZS/FCVTZU Hd, Hn, #fbits: Unicorn 2.1.4 writes the 32-bit conversion (seen here:
        # fcvtzs h15, h31, #11 of -3.656 gives 0xffffe2c0; the architecture's result is 16 bits,
        # 0xe2c0, saturated to 16 bits); only results that fit 16 bits unsigned are comparable.
        h = st.v[f["Rn"]] & 0xFFFF
        val = struct.unpack("<e", h.to_bytes(2, "little"))[0]
        fbits = 32 - ((f["immh"] << 3) | f["immb"])
        if val == val and (h >> 15 or val * 2.0**fbits >= 65535):
            return "Unicorn 2.1.4 writes scalar FP16 FCVTZ[SU] (fixed point) as 32 bits"
    if insn.group == "LDST_atomic" and not f["V"] and not f["o3"] and f["opc"] in (4, 5) and f["size"] < 3:
        size = 1 << f["size"]
        addr = st.sp if f["Rn"] == 31 else st.x[f["Rn"]]
        off = addr - base
        if not 0 <= off <= SCRATCH_SIZE - size:
            return ""
        old = int.from_bytes(bg[off : off + size], "little")
        if insn.addr <= addr < insn.addr + 4 or addr <= insn.addr < addr + size:
            return "operand overlaps the instruction word"
        val = 0 if f["Rs"] == 31 else st.x[f["Rs"]]
        top = 8 * size - 1
        if (old >> top) & 1 != (val >> top) & 1:
            return "Unicorn 2.1.4 compares sub-64-bit LDSMAX/LDSMIN unsigned"
    return ""


# ---- one class, end to end ---------------------------------------------------------------------
@dataclass(frozen=True)
class KnownBug:
    """A lifter bug found by this test, left to the lead: its cases are counted apart and
    checked by an xfail(strict=True) test, so a fix shows up as XPASS."""

    forms: tuple[str, ...]
    reason: str
    match: Callable[[Insn, State, State], bool]  # (instruction, input, Unicorn's result)
    example_word: int


def draw(cls: str, rng: random.Random, addr: int) -> tuple[list[Insn], Insn] | None:
    """One candidate of ``cls`` at ``addr``: (instructions before it, the instruction), or None
    when the word drawn decodes to another form."""
    if cls == EXCL_PAIR:
        return _draw_excl_pair(rng, addr)
    form = rng.choice([f for f in FORMS if f.cls == cls and f.name not in SKIPPED_FORMS and not f.unlifted])
    insn = decode(form.encode(**sample_fields(form, rng)), addr)
    if insn.form is not form:
        return None
    if branch_target(insn) == addr and insn.name != "BL":  # lifted as a jump to its own label: a loop
        return None
    return [], insn


def _draw_excl_pair(rng: random.Random, addr: int) -> tuple[list[Insn], Insn] | None:
    """LDXR/LDAXR/LDXP then a STXR/STLXR/STXP of the same size and base: the store-exclusive
    that succeeds (a lone one always fails, in both).  Register choices avoid the
    CONSTRAINED UNPREDICTABLE overlaps (loaded register = base, status = data or base)."""
    pair = rng.random() < 0.35
    size = rng.choice([2, 3]) if pair else rng.randrange(4)
    acq, rel = rng.getrandbits(1), rng.getrandbits(1)
    sfx = "P" if pair else ("B", "H", "", "")[size]
    lform = BY_NAME[("LDAX" if acq else "LDX") + ("P" if pair else "R" + sfx)]
    sform = BY_NAME[("STLX" if rel else "STX") + ("P" if pair else "R" + sfx)]
    rn = rng.choice([31] + list(range(31)))
    regs = [r for r in range(31) if r != rn]
    lt, lt2 = rng.sample(regs, 2)
    st, st2, rs = rng.sample(regs, 3)
    load = lform.encode(size=size, Rs=31, Rt2=lt2 if pair else 31, Rn=rn, Rt=lt)
    store = sform.encode(size=size, Rs=rs, Rt2=st2 if pair else 31, Rn=rn, Rt=st)
    i0, i1 = decode(load, addr), decode(store, addr + 4)
    if i0.form is not lform or i1.form is not sform:
        return None
    return [i0], i1


def generate(cls: str, n: int, seed: int, base: int, bg: bytes, known: list[KnownBug] = ()) -> tuple[list[Case], int, int]:
    """Up to ``n`` accepted cases of ``cls`` (decode + lift + Unicorn filters), the number of
    candidate words tried, and how many accepted cases matched a known bug (left out)."""
    rng = random.Random(f"{cls}:{seed}")
    model = A.UC_CPU_ARM64_A57 if cls in A57_CLASSES else A.UC_CPU_ARM64_MAX
    cpu = UnicornCpu(base, bg, model)
    cases: list[Case] = []
    tried = known_n = 0
    budget = max(2000, n * 300)
    while len(cases) < n and tried < budget:
        tried += 1
        got = draw(cls, rng, base + CODE_OFF + 8 * len(cases))  # unique per accepted case
        if got is None:
            continue
        prefix, insn = got
        form = insn.form
        code, errors = lift_seq([*prefix, insn])
        if "nx_unimplemented" in code and not errors:
            continue  # a form the lifter leaves to the runtime's trap: not tested here
        inp = make_input(form, insn, rng, base)
        inp.pc = (prefix or [insn])[0].addr
        if cls in ("ldst_excl", EXCL_PAIR):
            cpu.clear_monitor()
        res = cpu.run([i.word for i in (*prefix, insn)], inp)
        if res is None or oracle_unreliable(insn, inp, bg, base):
            continue
        if any(form.name in k.forms and k.match(insn, inp, res[0]) for k in known):
            known_n += 1
            continue
        c = Case(len(cases), form, insn, inp, code, prefix=prefix)
        c.expected, c.exp_mem = res
        if errors:
            c.lift_error = "lifter raised: " + "; ".join(errors)
        cases.append(c)
    return cases, tried, known_n


def execute(cases: list[Case], base: int, bg: bytes, work: Path) -> dict[int, tuple[State, tuple[bytes, bytes]] | str]:
    """Compile and run the lifted side of ``cases``: case index -> (state, memory change) after
    the lifted function, or a string saying why it could not run (lifter raised, C does not
    compile, the function crashed or hung)."""
    bad = {c.index: c.lift_error for c in cases if c.lift_error}
    so, bad = build_library(cases, work, bad)
    results = run_lifted(so, base, bg, [c for c in cases if c.index not in bad])
    return {**results, **bad}


def run_cases(cases: list[Case], base: int, bg: bytes, work: Path) -> list[tuple[Case, list[str]]]:
    results = execute(cases, base, bg, work)
    out = []
    for c in cases:
        r = results[c.index]
        out.append((c, [r] if isinstance(r, str) else compare(c, *r)))
    return out


def background(seed: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, SCRATCH_SIZE, dtype=np.uint8).tobytes()


def run_class(cls: str, n: int, seed: int, work: Path, known: list[KnownBug] = ()) -> ClassResult:
    t0 = time.monotonic()
    base = pick_base()
    bg = background(seed)
    res = ClassResult(cls)
    cases, res.candidates, res.known = generate(cls, n, seed, base, bg, known)
    res.run = len(cases)
    if cases:
        for c, diffs in run_cases(cases, base, bg, work):
            if diffs:
                res.failures.append(f"{c.describe()}: {'; '.join(diffs)}\n      inputs: {operands_text(c)}")
            else:
                res.passed += 1
    res.seconds = time.monotonic() - t0
    return res


def run_words(words: list[int], seed: int, work: Path, regs: dict[str, int] | None = None) -> list[tuple[Case, list[str]]]:
    """Run each given instruction word once (known-bug examples), with random operands but the
    registers in ``regs`` ("x0", "v17", ...) fixed."""
    base = pick_base()
    bg = background(seed)
    rng = random.Random(seed)
    cases = []
    for k, word in enumerate(words):
        insn = decode(word, base + CODE_OFF + 4 * k)
        assert insn.form is not None, f"{word:#x} is not in the table"
        cpu = UnicornCpu(base, bg, A.UC_CPU_ARM64_MAX)
        for _ in range(50):
            inp = make_input(insn.form, insn, rng, base)
            for r, val in (regs or {}).items():
                getattr(inp, r[0])[int(r[1:])] = val
            res = cpu.run(word, inp)
            if res is not None:
                break
        else:
            raise AssertionError(f"Unicorn rejects {word:#x} with every operand tried")
        code, errors = lift_one(insn)
        c = Case(k, insn.form, insn, inp, code)
        c.expected, c.exp_mem = res
        if errors:
            c.lift_error = "lifter raised: " + "; ".join(errors)
        cases.append(c)
    return run_cases(cases, base, bg, work)


def pick_base() -> int:
    """A scratch base no mapping of this process holds (the child maps it after fork)."""
    maps = Path("/proc/self/maps").read_text().splitlines()
    spans = [tuple(int(x, 16) for x in line.split()[0].split("-")) for line in maps]
    for b in SCRATCH_BASES:
        if all(hi <= b or lo >= b + SCRATCH_SIZE for lo, hi in spans):
            return b
    raise RuntimeError("every scratch base is taken by another mapping")
