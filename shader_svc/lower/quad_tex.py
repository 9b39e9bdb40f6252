"""ptxas's quad loop for an explicit-gradient fetch no texture instruction takes (issue 31;
shader-ndv): CUDA ``tex3DGrad`` / ``texCubemapGrad`` (and ``texCubemapLayeredGrad``) in a kernel,
both ISAs, as nvcc 13 (sm_86) and ptxas 12.9 (sm_53) compile them.  Neither ISA has a TXD for
3D or cube textures, so ptxas runs, for each lane q of the quad whose lane is active (VOTE.ANY's
mask shifted by the quad's base), a region of the whole quad (inactive lanes included):

    SM86  BMOV.32 B15, MACTIVE ; BMOV.32.PQUAD MACTIVE, B15     SM53  SAM
          SHFL.IDX Rx, Rs, q, 0x1c03 ...     every lane takes lane q's point and gradients
          FSWZADD.NDV ...                    lane 0 P, lane 1 P + dP/dx, lane 2 P + dP/dy, lane 3 both
          TEX.NDV ...                        implicit derivatives over the quad: lane 0 samples
                                             P with the gradients dP/dx, dP/dy
          (SHFL.IDX Rr, Rt, RZ, 0x1c03)      lane 0's texel to every lane (q > 0)
          BMOV.32 MACTIVE, B15                     RAM
    then  MOV Rd, Rr, 1 << q                 only lane q keeps it (MOV's quad-lane mask)

(Mesa's nv50_ir ``GM107LoweringPass::handleManualTXD`` builds the same loop for Maxwell: QUADON /
QUADPOP, SHFL by lane, QUADOP with .ndv, the texture with derivatives over the quad, MOV with
``lanes = 1 << l``.)  An invocation of a Vulkan compute shader has no quad: a lane that has
ended or skipped the branch cannot be brought back to run the region as a helper, and the
emulated warp's exchanges need every invocation.  So the region is evaluated inside each
invocation, on a **virtual quad**: the registers the region's SHFL / FSWZADD / TEX.NDV write
are tracked as four values, one per lane of the quad (``QuadState.lanes``), beside the
invocation's own value in the register file (lane p = the invocation's index & 3, as FSWZADD
and the emulated warp number lanes):

- a register nothing in the tracked chain wrote reads the invocation's own value in all four
  lanes (ptxas shuffles the point and gradients from lane q; the texture handle it reads in
  place is the same in the quad);
- ``SHFL.IDX d, s, k, 0x1c03`` in a region (k an immediate or RZ): every lane takes lane k of
  s; the invocation's own d is that value (its predicate: in range);
- FSWZADD: each lane's field of the swizzle on its lane's operands (``swizzle_add.py``); the
  register file gets the usual FSWZADD of the invocation's lane.  .NDV (the add also runs in
  lanes the region made active) changes nothing of a lane's own arithmetic: translated;
- ``TEX.NDV`` (implicit derivatives over the quad, helper lanes included): lane v samples at
  its coordinates with dP/dx = c[v | 1] - c[v & 2] and dP/dy = c[v | 2] - c[v & 1] (the fine
  differences; lane 0's, the one ptxas keeps, are c1 - c0 and c2 - c0, the coarse ones too),
  an explicit-gradient sample (``BindlessSampleGrad3``: OpImageSampleExplicitLod with Grad)
  for each of the four lanes and one for the invocation's own lane; the rows are pure, so the
  samples nothing reads go (ptxas keeps lane 0's: one sample per region);
- the region's bracket (SM86's BMOV of MACTIVE, SM53's SAM / RAM) moves nothing here: each
  invocation already computes only its own result, and the quad-lane mask of the MOV that
  follows (``MOV Rd, Rr, 1 << q``: a lane writes where its bit is set) keeps lane q's.

So lane q ends with tex(P_q, dP/dx_q, dP/dy_q), the gradients recovered as (P + dP) - P in f32
(exactly dP/dx where the sum is exact, as in the corpus's inputs).  Registers the region writes
for other lanes' benefit differ from the hardware's in lanes other than q (there they hold this
invocation's own values, not lane q's): they are ptxas's temporaries, dead after the loop.
Other instructions in a region run as the invocation's own (-G code's spills, P2R); one that
reads a tracked register and is pure arithmetic is also evaluated again on each lane's values
(``_replay``: ptxas scales a cube direction by 1 / max |component| between the FSWZADDs and
TEX.NDV).  Refused
by name: a SHFL in a region with a register lane or another mask/clamp, a tracked register
read through a negated operand, TEX.NDV outside a region or with coordinates the region did not
build, a LOD mode other than implicit, an SM86 cube array bound without .SCR or .B with it
(not seen; cube textures are the cube pool's, set 1 binding 9, cube arrays the cube array
pool's, binding 10: ``texture.TEXTURE_POOL_CUBE``, ``TEXTURE_POOL_CUBE_ARRAY``), a predicated
SHFL / FSWZADD / TEX.NDV in a region, SM86 BMOV of a thread-state register other than this
bracket.  The tracked values are IR values of the straight line: a branch target or a branch
ends them (``QuadState.lanes`` cleared), as does any write of the register."""

from __future__ import annotations

from dataclasses import dataclass, field

from shader_svc.ir import to_spirv as ir_spirv
from shader_svc.ir.block import Block, Value
from shader_svc.isa.inst import Inst
from shader_svc.lower.base import TranslateError
from shader_svc.lower.indirect import ENDS
from shader_svc.ir.optimize import CONSTS, PURE
from shader_svc.lower.swizzle_add import fswzadd_lane_ir

MACTIVE = 26  # SM86 BMOV's thread-state register (sm86/table.py BMOV_STATE)
QUAD_SHFL = 0x1C03  # SHFL's c: segment mask 0x1c, clamp 3 (lanes of the quad)
# the region's bracket (lowering keys): SM86 BMOV of a thread-state register, SM53 SAM / RAM
# IR rows ``QuadTex._replay`` evaluates again per lane (no effect, nothing refused when lowered)
CLONABLE = (PURE | CONSTS) - {"LoadVarU32", "LoadVarBool", "LocalIndex"}
QUAD_KEYS = frozenset({"BMOV.STATE", "SAM", "RAM", "TEX.U"})  # (TEX.U: SM86 0xF60, .NDV only)


@dataclass
class QuadState:
    active: bool = False  # inside a region (after PQUAD / SAM, before the restore / RAM)
    lanes: dict = field(default_factory=dict)  # register -> [Value] * 4 (the virtual quad)


def _refuse(inst: Inst, what: str) -> None:
    raise TranslateError(f"{inst.text()} (word {inst.word:#x}): {what} not translated", offset=inst.addr)


def _pick(b: Block, vals: list[Value], idx: Value) -> Value:
    """vals[idx] for a run-time idx in 0..3 (u32 values)."""
    r = vals[3]
    for k in (2, 1, 0):
        r = b.op("Select32", b.op("IEq32", idx, b.const_u32(k)), vals[k], r)
    return r


def _fsub(b: Block, x: Value, y: Value) -> Value:
    """x - y on the f32 bits of u32 values."""
    return b.op("FAdd32", b.op("BitcastF32", x), b.op("FNeg32", b.op("BitcastF32", y)))


def mask_lanes_ir(lw, b: Block, inst: Inst, v: Value) -> Value:
    """MOV's value under its quad-lane mask (shader-ndv; both ISAs: NAK's OpMov quad_lanes, Mesa
    nv50_ir's ``lanes``): lane (id & 3) k writes where bit k of the mask is set, else d keeps
    its value; the lane is the emulated warp's (the invocation's index & 3)."""
    mask = inst.ops.get("mask", {}).get("sym", 15)
    if mask == 15:
        return v
    if getattr(getattr(lw, "spec", None), "local_size", None) is None:
        _refuse(inst, "MOV with a quad-lane mask in a graphics stage (its quad's lane order is not established here)")
    lane = b.op("IAnd32", b.emit("LocalIndex"), b.const_u32(3))
    on = b.op("INe32", b.op("IAnd32", b.op("IShr32", b.const_u32(mask), lane), b.const_u32(1)), b.const_u32(0))
    return b.op("Select32", on, v, b.get_reg(inst.ops["d"]["reg"]))


class QuadTex:
    """Mixin of both ISAs' compute lowering (before the class defining ``lower``): the quad
    region (module docstring).  The ISA gives ``QUAD_ISA`` (86 or 53) and the handlers the
    module calls for the invocation's own values (``op_fswzadd``)."""

    QUAD_ISA = 86

    def lowered(self, ir: str) -> bool:
        return ir in QUAD_KEYS or super().lowered(ir)

    def _quad(self) -> QuadState:
        st = self.__dict__.get("_quad_state")
        if st is None:
            st = self.__dict__["_quad_state"] = QuadState()
        return st

    def _quad_breaks(self) -> set[int]:
        """Addresses where another path may enter: branch targets (SM53: also the instruction
        after a group's control word, as ``indirect.last_writer`` reads them)."""
        got = self.__dict__.get("_quad_entered")
        if got is None:
            got = {
                t["target"] + e
                for i in getattr(self, "insts", ())
                for t in i.ops.values()
                if isinstance(t, dict) and "target" in t
                for e in (0, 8)
            }
            self.__dict__["_quad_entered"] = got
        return got

    def _quad_marker(self, inst: Inst) -> str | None:
        """'save' / 'enter' / 'leave' for the region's bracket, None for other instructions."""
        ir = inst.row.ir
        if self.QUAD_ISA == 53:
            return {"SAM": "enter", "RAM": "leave"}.get(ir)
        if ir != "BMOV.STATE":
            return None
        if inst.ops["state"]["sym"] != MACTIVE:
            _refuse(inst, "a move of a thread-state register other than MACTIVE")
        if inst.row.opcode == 0xF55:  # BMOV.32 Bn, MACTIVE: the save before .PQUAD
            i = self.insts.index(inst)
            nxt = self.insts[i + 1] if i + 1 < len(self.insts) else None
            if not (
                nxt is not None
                and nxt.row.ir == "BMOV.STATE"
                and nxt.row.opcode == 0xF56
                and nxt.mods.get("PQUAD")
                and nxt.ops["b"]["reg"] == inst.ops["d"]["reg"]
            ):
                _refuse(inst, "MACTIVE saved other than before BMOV.32.PQUAD (the quad loop's bracket)")
            return "save"
        return "enter" if inst.mods.get("PQUAD") else "leave"

    def lower(self, inst: Inst) -> None:
        st = self._quad()
        if st.lanes:
            i = self.insts.index(inst)
            if inst.addr in self._quad_breaks() or (i > 0 and self.insts[i - 1].row.ir in ENDS):
                st.lanes.clear()  # another path may join: the tracked values are not its
        mark = self._quad_marker(inst)
        if mark is not None:
            if mark == "enter":
                st.active = True
            elif mark == "leave":
                st.active = False
            return
        ir = inst.row.ir
        guarded = not (inst.pred == 7 and not inst.pred_not)
        if ir == "SHFL" and st.active:
            if guarded:
                _refuse(inst, "a predicated SHFL in a quad region")
            self._quad_shfl(inst)
            return
        if ir == "FSWZADD" and (st.active or st.lanes):
            if guarded:
                _refuse(inst, "a predicated FSWZADD in a quad region")
            self._quad_fswzadd(inst)
            return
        if ir in ("TEX", "TEX.B", "TEX.U") and inst.mods.get("NDV"):
            if guarded:
                _refuse(inst, "a predicated TEX.NDV")
            self._quad_tex(inst)
            return
        if not st.lanes:
            super().lower(inst)
            return
        # any other instruction: the invocation's own; in a region, replayed on the four lanes
        # where it reads a tracked register and is pure arithmetic (``_replay``), else the
        # registers it writes leave the quad
        cur, n0 = self.fn.current, len(self.fn.current.items)
        super().lower(inst)
        if self.fn.current is not cur:
            st.lanes.clear()
            return
        items = cur.items[n0:]
        lanes = self._replay(items) if st.active and not guarded else None
        for it in items:
            if it.op.name == "SetReg" and it.attrs.get("file", "R") == "R":
                st.lanes.pop(it.attrs["reg"], None)
        if lanes:
            st.lanes.update(lanes)

    def _replay(self, items: list) -> dict | None:
        """The four lanes of the registers an instruction's IR ``items`` write, evaluated again
        with each lane's values of the tracked registers it reads (cube coordinates are scaled
        by ptxas between the FSWZADDs and TEX.NDV: FMNMX, MUFU.RCP, FMUL); None where it reads
        no tracked register or holds anything but pure operations and register writes."""
        st = self._quad()
        reads = [it for it in items if it.op.name == "GetReg" and it.attrs.get("file", "R") == "R"]
        if not any(it.attrs["reg"] in st.lanes for it in reads):
            return None
        for it in items:
            name = it.op.name
            if name == "SetReg":
                if it.attrs.get("file", "R") != "R":
                    return None
            elif not (name in CLONABLE and "inst" not in it.attrs):
                return None
        b, out = Block(), {}
        for v in range(4):
            env: dict[int, Value] = {}
            for it in items:
                name = it.op.name
                if name == "GetReg" and it.attrs.get("file", "R") == "R" and it.attrs["reg"] in st.lanes:
                    env[it.result.index] = st.lanes[it.attrs["reg"]][v]
                elif name == "SetReg":
                    out.setdefault(it.attrs["reg"], [None] * 4)[v] = env.get(it.args[0].index, it.args[0])
                elif it.result is not None:
                    args = [env.get(a.index, a) for a in it.args]
                    if any(x is not a for x, a in zip(args, it.args)):
                        env[it.result.index] = b.emit(name, *args, **it.attrs)
        ir_spirv.emit(self, b)
        return {r: lanes for r, lanes in out.items() if r != 255 and None not in lanes}

    # --- the tracked values ----------------------------------------------------------------
    def _lanes_of(self, b: Block, reg: int) -> list[Value]:
        """The four lanes of R``reg`` (RZ: zeros; untracked: the invocation's own value)."""
        if reg == 255:
            return [b.const_u32(0)] * 4
        got = self._quad().lanes.get(reg)
        if got is not None:
            return got
        own = b.get_reg(reg)
        return [own] * 4

    def _track(self, b: Block, reg: int, lanes: list[Value], own: Value | None) -> None:
        """R``reg`` := ``own`` (the invocation's lane; None: already written), tracked as ``lanes``."""
        if reg == 255:
            return
        if own is not None:
            b.set_reg(reg, own)
        self._quad().lanes[reg] = lanes

    # --- the instructions --------------------------------------------------------------------
    def _quad_shfl(self, inst: Inst) -> None:
        ops = inst.ops
        if inst.mods.get("mode") != 0 or ops["c"].get("imm") != QUAD_SHFL:
            _refuse(inst, "a SHFL in a quad region other than SHFL.IDX ..., 0x1c03")
        if "imm" in ops["b"]:
            k = ops["b"]["imm"]
        elif ops["b"].get("reg") == 255:
            k = 0
        else:
            _refuse(inst, "a SHFL in a quad region from a lane in a register")
        if not 0 <= k <= 3:
            _refuse(inst, f"a SHFL in a quad region from lane {k}")
        b = Block()
        v = self._lanes_of(b, ops["a"]["reg"])[k]
        self._track(b, ops["d"]["reg"], [v] * 4, v)
        p = ops["p" if self.QUAD_ISA == 86 else "pd"]["pred"]
        if p != 7:
            b.set_pred(p, b.const_bool(True))
        ir_spirv.emit(self, b)

    def _quad_fswzadd(self, inst: Inst) -> None:
        """The invocation's own FSWZADD (its handler), and the four lanes' (module docstring)."""
        self.op_fswzadd(inst)
        ops, st = inst.ops, self._quad()
        b = Block()
        srcs = []
        for name in ("a", "b"):
            v = ops[name]
            reg = v.get("reg")
            if reg is not None and reg in st.lanes and not (v.get("neg") or v.get("abs")):
                srcs.append([b.op("BitcastF32", x) for x in st.lanes[reg]])
            elif reg is not None and reg in st.lanes:
                _refuse(inst, "a tracked quad register read negated or absolute")
            else:
                own = self.src_ir(b, inst, name, True) if self.QUAD_ISA == 86 else self.val_ir(b, inst, name, True)
                srcs.append([b.op("BitcastF32", own)] * 4)
        letters = self.FSWZ_LETTERS
        lanes = [
            fswzadd_lane_ir(b, srcs[0][v], srcs[1][v], ops["swz"]["sym"], letters, bool(inst.mods["FTZ"]), v) for v in range(4)
        ]
        self._track(b, ops["d"]["reg"], lanes, None)
        ir_spirv.emit(self, b)

    def _ndv_operands(self, inst: Inst) -> tuple[list[int], int | None, tuple[int, int] | None, str]:
        """TEX.NDV's coordinate registers, its handle register (.B), constant-bank word (bound) or
        uniform register pair (SM86 0xF60: ("ur", n)) and the dimension ('3d'), as ptxas packs
        them (read off nvcc 13 sm_86, ptxas 12.9 sm_86 and sm_53 tex3DGrad code): SM86 .SCR,
        bound and UR: Ra = (x, y), Rb = (z, handle (.B)); SM86 .B without .SCR and SM53 (.B or
        bound): Ra = (x, y, z), Rb = the handle (.B)."""
        ops, mods = inst.ops, inst.mods
        a, b = ops["a"]["reg"], ops["b"]["reg"] if "b" in ops else 255
        bindless = inst.row.ir.endswith(".B")
        sym = ops["dim"]["sym"]
        dim = ({2: "3d", 3: "cube", 7: "cube_array"} if self.QUAD_ISA == 86 else {4: "3d", 6: "cube", 7: "cube_array"}).get(sym)
        # a cube array's .SCR split (SM86): with a uniform-register handle (ptxas 12.9) or a bound
        # one (gpu-pools: nvcc 13's bound texCubemapLayeredGrad, ``TEX.SCR.NDV RZ, R10, R2, R10,
        # 0x0, 0x5a, ARRAY_CUBE``): Ra = (layer, x), Rb = (y, z)
        ur_scr = mods.get("SCR") and ("ur" in ops or not bindless)
        # the unsplit form, Ra = (layer, x, y, z): SM86 .B, SM53 .B or bound (gpu-pools: ptxas 12.9's
        # bound ``TEX.NDV.P R6, R4, 0x52, ARRAY_CUBE``)
        whole = not mods.get("SCR") and (bindless or self.QUAD_ISA == 53)
        if dim == "cube_array" and not whole and not ur_scr:
            _refuse(
                inst, "TEX.NDV on a cube array texture other than .B, SM53 bound or .SCR with a bound or uniform-register handle"
            )
        if dim is None:
            _refuse(inst, "TEX.NDV on this dimension")
        if mods.get("lod", 0) != 0 or mods.get("DC") or mods.get("AOFFI") or mods.get("LC"):
            _refuse(inst, "TEX.NDV with a LOD mode, .DC, .AOFFI or .LC")
        pred = ops.get("fault" if self.QUAD_ISA == 86 else "pd", {"pred": 7})["pred"]
        if pred != 7:
            _refuse(inst, "TEX.NDV with a predicate result")

        def reg(r: int, k: int) -> int:
            return 255 if r == 255 else r + k

        self._ndv_layer = None
        if dim == "cube_array" and ur_scr:  # (ptxas 12.9 sm_86) Ra = (layer, x), Rb = (y, z)
            self._ndv_layer = reg(a, 0)
            coords, hreg = [reg(a, 1), reg(b, 0), reg(b, 1)], None
        elif dim == "cube_array":  # (both ISAs, .B; SM53 bound) Ra = (layer, x, y, z), Rb = the handle (.B)
            self._ndv_layer = reg(a, 0)
            coords, hreg = [reg(a, 1), reg(a, 2), reg(a, 3)], b
        elif self.QUAD_ISA == 86 and (mods.get("SCR") or not bindless):
            coords, hreg = [reg(a, 0), reg(a, 1), reg(b, 0)], reg(b, 1)
        else:
            coords, hreg = [reg(a, 0), reg(a, 1), reg(a, 2)], b
        if "ur" in ops:  # SM86 0xF60: the handle in a uniform register pair (texture, sampler)
            if ops["uoff"]["imm"] or ops["ur"]["reg"] >= 62:
                _refuse(inst, "TEX with a uniform-register handle and an offset (or URZ)")
            return coords, None, ("ur", ops["ur"]["reg"]), dim
        if not bindless:
            if self.QUAD_ISA == 86:
                return coords, None, (ops["bank"]["imm"], ops["slot"]["imm"] * 4), dim
            return coords, None, (0, ops["tid"]["imm"] * 4), dim
        if hreg == 255:
            _refuse(inst, "a bindless handle of RZ")
        return coords, hreg, None, dim

    def _ndv_dests(self, inst: Inst) -> list[tuple[int, int]]:
        """(register, component) of each enabled component (SM86: the pairs d, d2; SM53: d, d+1...)."""
        ops = inst.ops
        mask = ops["mask"]["sym" if self.QUAD_ISA == 86 else "imm"]
        if self.QUAD_ISA == 86:
            d, d2 = ops["d"]["reg"], ops["d2"]["reg"]
            regs = [r + i if r != 255 else 255 for r in (d, d2) for i in (0, 1)]
        else:
            d = ops["d"]["reg"]
            regs = [d + i if d != 255 else 255 for i in range(4)]
        out, k = [], 0
        for c in range(4):
            if mask >> c & 1:
                out.append((regs[k], c))
                k += 1
        return out

    def _quad_tex(self, inst: Inst) -> None:
        st = self._quad()
        if not st.active:
            _refuse(inst, "TEX.NDV outside a quad region (implicit derivatives in a kernel)")
        self._tex_types()
        coords, hreg, cb, dim = self._ndv_operands(inst)
        for r in coords:
            if r != 255 and r not in st.lanes:
                _refuse(inst, f"TEX.NDV whose coordinate R{r} the quad region did not build")
        b = Block()
        if hreg is not None:
            handle = b.get_reg(hreg)
        elif cb[0] == "ur":  # URn the texture (low 20 bits), URn+1 the sampler: ptxas writes UR7 = UR6 >> 20
            tex = b.op("IAnd32", b.get_reg(cb[1], "UR"), b.const_u32(0xFFFFF))
            handle = b.op("IOr32", b.op("IShl32", b.get_reg(cb[1] + 1, "UR"), b.const_u32(20)), tex)
        else:
            handle = b.emit("CBankU32", bank=cb[0], offset=cb[1], inst=inst)
        c = [self._lanes_of(b, r) for r in coords]  # c[axis][lane]
        # a cube array's layer: read in place (ptxas clamps it before the loop, unshuffled: the
        # invocation's own, as the handle)
        layer = (
            b.const_u32(0)
            if self._ndv_layer is None
            else (b.const_u32(0) if self._ndv_layer == 255 else b.get_reg(self._ndv_layer))
        )

        def sample(pt: list[Value], dx: list[Value], dy: list[Value]) -> Value:
            return b.emit("BindlessSampleGrad3", handle, *pt, layer, *dx, *dy, dim=dim)

        vecs = []
        for v in range(4):
            pt = [c[k][v] for k in range(3)]
            dx = [b.op("BitcastU32", _fsub(b, c[k][v | 1], c[k][v & 2])) for k in range(3)]
            dy = [b.op("BitcastU32", _fsub(b, c[k][v | 2], c[k][v & 1])) for k in range(3)]
            vecs.append(sample(pt, dx, dy))
        p = b.op("IAnd32", b.emit("LocalIndex"), b.const_u32(3))
        hx, lx = b.op("IOr32", p, b.const_u32(1)), b.op("IAnd32", p, b.const_u32(2))
        hy, ly = b.op("IOr32", p, b.const_u32(2)), b.op("IAnd32", p, b.const_u32(1))
        own_pt = [_pick(b, c[k], p) for k in range(3)]
        own_dx = [b.op("BitcastU32", _fsub(b, _pick(b, c[k], hx), _pick(b, c[k], lx))) for k in range(3)]
        own_dy = [b.op("BitcastU32", _fsub(b, _pick(b, c[k], hy), _pick(b, c[k], ly))) for k in range(3)]
        own = sample(own_pt, own_dx, own_dy)
        for r, comp in self._ndv_dests(inst):
            lanes = [b.emit("TexelWord", vecs[v], comp=comp, float=True) for v in range(4)]
            self._track(b, r, lanes, b.emit("TexelWord", own, comp=comp, float=True))
        ir_spirv.emit(self, b)
