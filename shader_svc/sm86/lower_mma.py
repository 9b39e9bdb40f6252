"""SM86 warp-wide matrix instructions (issue 31; shader-mma): LDSM (PTX ``ldmatrix``), MOVM
(``movmatrix``), HMMA (``mma.sync`` with f16 / bf16 inputs, f32 or f16 accumulators, shapes
m16n8k8 = ``.1688`` and m16n8k16 = ``.16816``; tf32 inputs m16n8k8 = ``.1688`` and m16n8k4 =
``.1684`` into f32, one element a register, its low 13 significand bits not used), IMMA (s8 / u8 inputs, s32 accumulators,
m8n8k16 = ``.8816``, m16n8k16 = ``.16816``, m16n8k32 = ``.16832``; s4 / u4 inputs m8n8k32 =
``.8832``, m16n8k32 = ``.16832``, m16n8k64 = ``.16864``), DMMA.884 (m8n8k4 f64) and
BMMA (.b1 with .AND / .XOR and .POPC, m8n8k128, m16n8k128, m16n8k256), on the emulated 32-lane warp
of ``lower/memory.py``: each value a lane needs from another lane's registers comes through
``ShflWarp`` (PTX shfl.sync idx), so no subgroup operation and no device tensor unit is used.

Fragment layouts (which lane holds which element in which register) are the PTX ISA's
("Matrix Fragments for mma.m16n8k8 / mma.m16n8k16 / mma.m8n8k16 / mma.m16n8k32", "Warp-level
matrix load instruction: ldmatrix", "movmatrix"); ptxas passes the PTX fragment registers to
the machine instruction unchanged (D, A, B, C consecutive registers).  With ``g`` = lane / 4
(groupID) and ``t`` = lane % 4 (threadID_in_group), ``e`` elements per 32-bit register (2
halves, 4 bytes) and ``kg`` = 4e:

- A (row-major, ``m`` x ``K``): element (row, k) is in lane 4 (row % 8) + (k % kg) / e, register
  (row / 8) + (m / 8) (k / kg), sub-element k % e;
- B (column-major, ``K`` x 8): element (k, col) is in lane 4 col + (k % kg) / e, register k / kg,
  sub-element k % e;
- C / D (``m`` x 8, 32-bit elements): (row, col) is in lane 4 (row % 8) + col / 2, register
  2 (row / 8) + col % 2 (m8: col % 2); f16 accumulators pack the two columns of a register pair
  into one register (register row / 8, half col % 2).

Arithmetic: IMMA is exact (32-bit products and sums modulo 2^32, as s32 accumulation wraps;
.SAT is refused).  HMMA: every product of two f16 or two bf16 values is exact in f32; the sum
is C + the products in ascending k, each addition rounded to nearest even.  NVIDIA does not
document the tensor unit's summation order or internal precision, so a float result is exact
where every partial sum is representable in f32 (the corpus's exact cases) and otherwise within
the bound of a K-term f32 summation, |error| <= K u (|C| + sum |a_k b_k|), u = 2^-24; with f16
accumulators the f32 result is rounded once to f16 (nearest even), C widened exactly.

LDSM: lanes 8j..8j+7 give the row addresses of matrix j (16 bytes a row); register d+j of lane
l gets row g, halves 2t and 2t+1 (``.M88``), or with ``.MT88`` (``.trans``) the halves at column
g of rows 2t and 2t+1.  MOVM.16.MT88: the transpose of the 8x8 b16 matrix the warp holds, one
register a lane, as ``.MT88`` would have loaded it.  Every lane must reach these instructions
(ptxas's code does: ``.sync.aligned``); the forms not listed are refused with their text.
"""

from __future__ import annotations

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.lower.base import TranslateError
from shader_svc.sm86.decode import Inst
from shader_svc.sm86.lower import Lower86

MMA_RULES = {"LDSM": "op_ldsm", "MOVM": "op_movm", "HMMA": "op_hmma", "IMMA": "op_imma", "DMMA": "op_dmma", "BMMA": "op_bmma"}
CLAMP_ALL = 0x1F  # ShflWarp's clamp 31, segment mask 0: the whole warp


def _lane(b: Block) -> tuple[Value, Value, Value]:
    """(lane, g = lane / 4, t = lane % 4) of this invocation in the emulated warp."""
    lane = b.op("IAnd32", b.emit("LocalIndex"), b.const_u32(31))
    return lane, b.op("IShr32", lane, b.const_u32(2)), b.op("IAnd32", lane, b.const_u32(3))


def _from(b: Block, v: Value, lane: Value) -> Value:
    """``v`` as lane ``lane`` holds it (shfl.sync idx over the whole warp)."""
    return b.emit("ShflWarp", v, lane, b.const_u32(CLAMP_ALL), mode=0)


class Mma86(Lower86):
    """Mixin of ``to_spirv.Compute86`` (module docstring)."""

    def _regs(self, b: Block, inst: Inst, name: str, n: int) -> list[Value]:
        """Registers name, name+1, ... (n of them; RZ: zeros)."""
        r = inst.ops[name]["reg"]
        return [b.const_u32(0) if r == 255 else b.get_reg(r + i) for i in range(n)]

    def _put(self, b: Block, inst: Inst, vals: list[Value]) -> None:
        d = inst.ops["d"]["reg"]
        if d != 255:
            for i, v in enumerate(vals):
                b.set_reg(d + i, v)

    # --- LDSM / MOVM ----------------------------------------------------------------------------
    def op_ldsm(self, inst: Inst) -> None:
        mode, n = inst.mods["mode"], (1, 2, 4, None)[inst.mods["n"]]
        if mode not in (0, 1) or n is None:
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): form not translated", offset=inst.addr)
        a = inst.ops["addr"]
        b = Block()
        own = b.op("IAdd32", b.get_reg(a["reg"]) if a["reg"] != 255 else b.const_u32(0), b.const_u32(a["off"] & 0xFFFFFFFF))
        _, g, t = _lane(b)
        out = []
        for j in range(n):
            if mode == 0:  # row g of matrix j, halves 2t, 2t+1
                row = _from(b, own, b.op("IAdd32", b.const_u32(8 * j), g))
                out.append(b.op("LoadShared32", b.op("SharedPtr", b.op("IAdd32", row, b.op("IShl32", t, b.const_u32(2))))))
            else:  # .trans: column g of rows 2t and 2t+1
                halves = []
                for s in (0, 1):
                    src = b.op("IAdd32", b.const_u32(8 * j + s), b.op("IShl32", t, b.const_u32(1)))
                    row = _from(b, own, src)
                    at = b.op("IAdd32", row, b.op("IShl32", g, b.const_u32(1)))
                    halves.append(b.emit("LoadSub", at, space="shared", bytes=2, signed=False))
                out.append(b.op("IOr32", halves[0], b.op("IShl32", halves[1], b.const_u32(16))))
        self._put(b, inst, out)
        ir_spirv.emit(self, b)

    def op_movm(self, inst: Inst) -> None:
        if inst.mods["mode"] != 0:
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): form not translated", offset=inst.addr)
        b = Block()
        (a,) = self._regs(b, inst, "a", 1)
        _, g, t = _lane(b)
        # element (r, c) of the source is half c % 2 of lane 4r + c / 2; this lane's result holds
        # (2t, g) and (2t + 1, g) of the source (its row g, columns 2t, 2t + 1 of the transpose)
        shift = b.op("IShl32", b.op("IAnd32", g, b.const_u32(1)), b.const_u32(4))
        halves = []
        for s in (0, 1):
            src = b.op(
                "IAdd32",
                b.op("IShl32", b.op("IAdd32", b.op("IShl32", t, b.const_u32(1)), b.const_u32(s)), b.const_u32(2)),
                b.op("IShr32", g, b.const_u32(1)),
            )
            v = _from(b, a, src)
            halves.append(b.op("IAnd32", b.op("IShr32", v, shift), b.const_u32(0xFFFF)))
        self._put(b, inst, [b.op("IOr32", halves[0], b.op("IShl32", halves[1], b.const_u32(16)))])
        ir_spirv.emit(self, b)

    # --- HMMA / IMMA ---------------------------------------------------------------------------
    def _mma_checks(self, inst: Inst) -> None:
        up = inst.ops["up"]
        if not (up["pred"] == 7 and not up["not"]):
            raise TranslateError(
                f"{inst.text()} (word {inst.word:#x}): predicated matrix multiply not translated", offset=inst.addr
            )
        if inst.ops["a"].get("neg") or inst.ops["b"].get("neg"):
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): negated matrix operand not translated", offset=inst.addr)

    def _fragments(self, b: Block, inst: Inst, m: int, k_dim: int, e: int, g: Value, t: Value):
        """A's rows g and g+8 and B's columns 2t, 2t+1 as fetched registers: functions
        (row half h, k) -> (register value, sub-element) and (column j, k) -> the same."""
        kg = 4 * e
        na, nb = (m // 8) * (k_dim // kg), k_dim // kg
        a_regs, b_regs = self._regs(b, inst, "a", na), self._regs(b, inst, "b", nb)
        a_got: dict[tuple[int, int], Value] = {}
        b_got: dict[tuple[int, int, int], Value] = {}
        g4 = b.op("IShl32", g, b.const_u32(2))
        for tp in range(4):  # A: every register of lanes 4g + t'
            src = b.op("IAdd32", g4, b.const_u32(tp))
            for r in range(na):
                a_got[tp, r] = _from(b, a_regs[r], src)
        for j in range(2):  # B: column 2t + j, lanes 4 (2t + j) + t'
            col4 = b.op("IShl32", b.op("IAdd32", b.op("IShl32", t, b.const_u32(1)), b.const_u32(j)), b.const_u32(2))
            for tp in range(4):
                src = b.op("IAdd32", col4, b.const_u32(tp))
                for r in range(nb):
                    b_got[j, tp, r] = _from(b, b_regs[r], src)

        def a_el(h: int, k: int) -> tuple[Value, int]:
            return a_got[(k % kg) // e, h + (m // 8) * (k // kg)], k % e

        def b_el(j: int, k: int) -> tuple[Value, int]:
            return b_got[j, (k % kg) // e, k // kg], k % e

        return a_el, b_el

    def op_hmma(self, inst: Inst) -> None:
        self._mma_checks(inst)
        src = inst.mods["src"]  # 0 f16, 1 bf16, 2 tf32
        k_dim = 4 if inst.row.mnemonic == "HMMA.1684" else 16 if inst.mods["shape"] else 8
        f32acc = inst.mods["acc"] == 1
        if src == 2 and (k_dim == 16 or not f32acc):  # PTX has tf32 only as m16n8k8 / k4 into f32
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): form not translated", offset=inst.addr)
        b = Block()
        _, g, t = _lane(b)
        a_el, b_el = self._fragments(b, inst, 16, k_dim, 1 if src == 2 else 2, g, t)

        def widen(v: Value, sub: int) -> Value:
            if src == 0:
                return b.emit("UnpackF16", v, lane=sub)
            if src == 2:  # tf32: an f32 register whose low 13 significand bits are not used
                return b.op("BitcastF32", b.op("IAnd32", v, b.const_u32(0xFFFFE000)))
            hi = b.op("IShl32", v, b.const_u32(16)) if sub == 0 else b.op("IAnd32", v, b.const_u32(0xFFFF0000))
            return b.op("BitcastF32", hi)

        c = self._regs(b, inst, "c", 4 if f32acc else 2)
        out = []
        for h in range(2):
            row = []
            for j in range(2):
                if f32acc:
                    acc = b.op("BitcastF32", c[2 * h + j])
                else:
                    acc = b.emit("UnpackF16", c[h], lane=j)
                for k in range(k_dim):
                    x, y = widen(*a_el(h, k)), widen(*b_el(j, k))
                    acc = b.op("FAdd32", acc, b.op("FMul32", x, y))
                row.append(acc)
            if f32acc:
                out += [b.op("BitcastU32", v) for v in row]
            else:
                lo, hi = (b.emit("F16FromF32", v, rnd=0) for v in row)
                out.append(b.op("IOr32", lo, b.op("IShl32", hi, b.const_u32(16))))
        self._put(b, inst, out)
        ir_spirv.emit(self, b)

    def op_imma(self, inst: Inst) -> None:
        self._mma_checks(inst)
        if inst.mods["SAT"]:
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): .SAT not translated", offset=inst.addr)
        shape = inst.row.mnemonic.split(".")[1]
        nib = bool(inst.row.base >> 83 & 1)  # .U4/.S4: eight elements a register
        m, k_dim = {"8816": (8, 16), "16816": (16, 16), "16832": (16, 32), "8832": (8, 32), "16864": (16, 64)}[shape]
        sa, sb = inst.mods["atype"] == 1, inst.mods["btype"] == 1
        e = 8 if nib else 4
        b = Block()
        _, g, t = _lane(b)
        a_el, b_el = self._fragments(b, inst, m, k_dim, e, g, t)

        def byte(v: Value, sub: int, signed: bool) -> Value:
            w = 32 // e
            return b.op("SBitExtract32" if signed else "UBitExtract32", v, b.const_u32(w * sub), b.const_u32(w))

        c = self._regs(b, inst, "c", m // 4)
        out = []
        for h in range(m // 8):
            for j in range(2):
                acc = c[2 * h + j]
                for k in range(k_dim):
                    acc = b.op("IAdd32", acc, b.op("IMul32", byte(*a_el(h, k), sa), byte(*b_el(j, k), sb)))
                out.append(acc)
        self._put(b, inst, out)
        ir_spirv.emit(self, b)

    def op_dmma(self, inst: Inst) -> None:
        """DMMA.884 (m8n8k4 f64): A's element (g, t) and B's (t, g) one register pair a lane,
        C / D (g, 2t + j) pairs j = 0, 1; each d = C then fused a_k b_k + d for k ascending
        (``FFma64``, each rounded once to nearest even)."""
        self._mma_checks(inst)
        if any(inst.ops[n].get("abs") or inst.ops[n].get("neg") for n in "abc") or inst.mods["rnd"]:
            raise TranslateError(f"{inst.text()} (word {inst.word:#x}): form not translated", offset=inst.addr)
        b = Block()
        _, g, t = _lane(b)
        a2, b2, c = self._regs(b, inst, "a", 2), self._regs(b, inst, "b", 2), self._regs(b, inst, "c", 4)

        def f64_from(pair: list[Value], lane: Value) -> Value:
            return b.op("PackF64", _from(b, pair[0], lane), _from(b, pair[1], lane))

        g4 = b.op("IShl32", g, b.const_u32(2))
        a_k = [f64_from(a2, b.op("IAdd32", g4, b.const_u32(k))) for k in range(4)]
        out = []
        for j in range(2):
            col4 = b.op("IShl32", b.op("IAdd32", b.op("IShl32", t, b.const_u32(1)), b.const_u32(j)), b.const_u32(2))
            acc = b.op("PackF64", c[2 * j], c[2 * j + 1])
            for k in range(4):
                acc = b.op("FFma64", a_k[k], f64_from(b2, b.op("IAdd32", col4, b.const_u32(k))), acc)
            bits = b.op("BitcastU64", acc)
            out += [b.op("Trunc32", bits), b.op("Trunc32", b.op("Shr64", bits, b.const_u64(32)))]
        self._put(b, inst, out)
        ir_spirv.emit(self, b)

    def op_bmma(self, inst: Inst) -> None:
        """BMMA (.b1, s32 accumulators): d = C + the population count of (A's row AND / XOR B's
        column) over K bits; A's and B's fragments are IMMA's with 32-bit elements (one a
        register): m8n8k128 (.88128), m16n8k128 (.168128), m16n8k256 (.168256)."""
        self._mma_checks(inst)
        shape = inst.row.mnemonic.split(".")[1] if "." in inst.row.mnemonic else ("88128", "168128")[inst.mods["shape"]]
        m, kw = {"88128": (8, 4), "168128": (16, 4), "168256": (16, 8)}[shape]
        b = Block()
        _, g, t = _lane(b)
        a_el, b_el = self._fragments(b, inst, m, kw, 1, g, t)
        c = self._regs(b, inst, "c", m // 4)
        op = "IAnd32" if inst.mods["op"] else "IXor32"
        out = []
        for h in range(m // 8):
            for j in range(2):
                acc = c[2 * h + j]
                for k in range(kw):
                    acc = b.op("IAdd32", acc, b.op("BitCount32", b.op(op, a_el(h, k)[0], b_el(j, k)[0])))
                out.append(acc)
        self._put(b, inst, out)
        ir_spirv.emit(self, b)
