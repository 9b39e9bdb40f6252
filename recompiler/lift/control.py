"""Branches, calls, returns, exceptions and system instructions."""

from __future__ import annotations

import bisect

from recompiler.decode import Insn
from recompiler.lift.edges import SHARED_TABLE, branch_target
from recompiler.lift.emitter import FunctionEmitter
from recompiler.lift.liveness import xbit

M64 = (1 << 64) - 1


def h_b(em: FunctionEmitter, i: Insn) -> bool:
    em.out(em.goto(branch_target(i)))
    return False


def h_bl(em: FunctionEmitter, i: Insn) -> bool | None:
    em.call(branch_target(i))
    if i.addr in em.plan.noreturn_calls:
        # the callee never returns (analyse.noreturn_functions): nothing flows from the call
        # into the code after it, which belongs to other paths (Lua's luaG_runerror has a
        # loop's tail there); a return after all is a fatal error naming the call
        em.out(f"nx_noreturn_returned(s, {i.addr:#x}ull);")
        return False
    return None


def h_bcond(em: FunctionEmitter, i: Insn) -> None:
    c = i.f["cond"]
    if c >> 1 == 7:
        em.out(em.goto(branch_target(i)))
        return False
    em.out(f"if ({em.cond(c)}) {em.goto(branch_target(i))}")


def h_cbz(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    op = "!=" if f["op"] else "=="
    em.out(f"if ({em.x(f['Rt'], f['sf'])} {op} 0) {em.goto(branch_target(i))}")


def h_tbz(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    bit = (f["b5"] << 5) | f["b40"]
    op = "!=" if f["op"] else "=="
    em.out(f"if ((({em.x(f['Rt'])} >> {bit}) & 1) {op} 0) {em.goto(branch_target(i))}")


def h_br(em: FunctionEmitter, i: Insn) -> bool:
    n = i.f["Rn"]
    table = em.plan.jump_tables.get(i.addr)
    t = em.x(n)
    if table and len(set(table)) >= SHARED_TABLE:
        # a computed goto's dispatch is repeated at the end of every handler: all of them jump
        # to one switch per distinct table (one CFG node instead of one per BR, as clang does
        # for indirectbr; 25 copies of an 83-way switch made one function take minutes to compile)
        label = em.shared_table(sorted(set(table)))
        d = em.plan.direct_tables.get(i.addr)
        direct = em.direct_goto(label, d) if d is not None and label in em.dense_gotos else ""
        if direct and em.cur is not None:  # its guards and index are read too
            for r in (d.reg, *(g for g, _v in d.guards)):
                em.cur.uses |= xbit(r) if r != 31 else 0
        em.out(f"{{ {direct}_jt = {t}; {em.goto_table(label)} }}")
        return False
    cands = em.plan.ifunc_targets.get(i.addr)
    if cands:
        # an IFUNC's PLT stub: its slot holds one of its resolver's answers, set once at
        # startup, so each is a direct tail call whose register summary its callers can use
        # (through nx_jump the stub would be opaque: stores and reloads of every register
        # around each memcpy or strlen).  Any other value is a fatal error naming the stub.
        tests = " ".join(f"if (_t == {a:#x}ull) {em.goto(a)}" for a in cands)
        em.out(f"{{ u64 _t = {t}; {tests} nx_ifunc_miss(s, {i.addr:#x}ull, _t); NX_BACK; }}")
        return False
    if table:
        cases = " ".join(f"case {a:#x}ull: {em.goto(a)}" for a in sorted(set(table)))
        em.out(f"switch ({t}) {{ {cases} default: break; }}")
    # the functions analysis guessed the register holds (analysis.call_targets): each a
    # direct tail call behind a compare, with its callee's lists as a B to it would have
    guesses = em.jump_guesses(i.addr) if not table else ()
    em.guessed_tails.update((i.addr, a) for a in guesses)
    tests = "".join(f"if (NX_GUESS(_t, {a:#x}ull)) {em.goto(a)} " for a in guesses)
    # an unknown target: the site's inline cache (lifted.h NX_IC), else the runtime's lookup
    em.out(f"{{ u64 _t = {t}; {tests}{em.jump_out()} }}")
    return False


def h_blr(em: FunctionEmitter, i: Insn) -> None:
    n = i.f["Rn"]
    # X30 is written by BLR after the target is read (BLR X30 is allowed)
    em.out(f"{{ u64 _t = {em.x(n)};")
    em.call(None, "_t")
    em.out("}")


def h_ret(em: FunctionEmitter, i: Insn) -> bool:
    em.leave(em.x(i.f["Rn"]))
    return False


# Linux AArch64 system calls that start a thread (asm-generic unistd.h: clone 220, clone3 435):
# the new thread's first instruction is the one after the SVC, entered from the run loop.
_THREAD_STARTS = (220, 435)
_MOVZ_X8 = (0x7FE0001F, 0x52800008)  # MOVZ W8/X8, #imm16 (hw 0): mask, value (sf ignored)


def _starts_thread(em: FunctionEmitter, i: Insn) -> bool:
    """``svc #0`` with X8 set to clone's or clone3's number by a MOVZ shortly before it on the
    straight-line path into it (musl's and glibc's clone wrappers: ``mov x8, #220; svc #0``)."""
    if i.f["imm16"] != 0:
        return False
    insns = em.plan.insns
    k = bisect.bisect_left(insns, i.addr, key=lambda x: x.addr)
    want = i.addr
    for j in range(k - 1, max(k - 9, -1), -1):
        want -= 4
        if insns[j].addr != want:
            return False
        w = insns[j].word
        if w & _MOVZ_X8[0] == _MOVZ_X8[1]:
            return (w >> 5) & 0xFFFF in _THREAD_STARTS
    return False


def h_svc(em: FunctionEmitter, i: Insn) -> None:
    # SP too, even where this function does not change it (STORE_ALL writes back only what it
    # changed, and a direct call passes SP as an argument, not in NxCpu): a system call may
    # read it (clone) and a signal delivered at its return builds its frame below it.  Spelt
    # "(s->sp) = sp" so that the emitter does not count it as a write of SP.  X29, also an
    # argument, STORE_ALL always writes back (wrap.Locals.w_regs): a signal frame's context
    # and a Horizon context switch read it from NxCpu.
    # A signal handler run at the call's return may have moved the interrupted pc in its
    # ucontext (musl's thread cancellation sends a cancellation point's SVC to __cp_cancel):
    # then every register is in NxCpu and control goes there as a BR would take it.  Two
    # lines: the first is the chunk's store into NxCpu (the emitter's _c), the second an exit.
    next_pc = f"{i.addr + 4:#x}ull"
    em.system_call()
    em.out(f"s->pc = {next_pc}; (s->sp) = sp; STORE_ALL; nx_svc(s, {i.f['imm16']});")
    em.out(
        f"if (UNLIKELY(s->pc != {next_pc})) MUSTTAIL return nx_jump(s, s->x[0], s->x[1], s->x[30], s->sp, s->x[29]); RELOAD_ALL;"
    )
    if _starts_thread(em, i):
        # a new thread (Linux personality, linux_threads.c) starts in the run loop at the
        # instruction after the SVC with its registers in its own NxCpu: a resume point there
        # (else it is lifted at run time, as any other miss)
        em.resume.append(i.addr + 4)
        em.labels.add(i.addr + 4)


def h_brk(em: FunctionEmitter, i: Insn) -> bool:
    em.trap(f"STORE_ALL; nx_brk(s, {i.addr:#x}ull, {i.f['imm16']}); NX_BACK;")
    return False


def h_hint(em: FunctionEmitter, i: Insn) -> None:
    # NOP, YIELD, WFE/WFI/SEV, PAC and BTI hints: pointer authentication is not reported in
    # HWCAP, so programs only meet its NOP-space forms, which do nothing here.
    em.out(";")


def h_clrex(em: FunctionEmitter, i: Insn) -> None:
    em.out("s->excl_size = 0;")


def h_barrier(em: FunctionEmitter, i: Insn) -> None:
    em.out("__atomic_thread_fence(__ATOMIC_SEQ_CST);")


def h_msr_imm(em: FunctionEmitter, i: Insn) -> None:
    em.out(";")  # PSTATE fields (DAIF, SPSel, ...) have no effect in user mode here


# FEAT_FlagM / FlagM2 (Arm ARM, CFINV, XAFLAG, AXFLAG): NZCV rewritten from its old values
def h_cfinv(em: FunctionEmitter, i: Insn) -> None:
    em.flags_touched()
    em.out("C = !C;")


def h_xaflag(em: FunctionEmitter, i: Insn) -> None:
    """External (floating-point compare) format to Arm's: N = !C & !Z, Z = Z & C, C = C | Z,
    V = !C & Z."""
    em.flags_touched()
    em.out("FLAGS_SET((u32)((!C && !Z) << 3 | (Z && C) << 2 | (C || Z) << 1 | (!C && Z)));")


def h_axflag(em: FunctionEmitter, i: Insn) -> None:
    """Arm's format to the external one: N = 0, Z = Z | V, C = C & !V, V = 0."""
    em.flags_touched()
    em.out("FLAGS_SET((u32)((Z || V) << 2 | (C && !V) << 1));")


def h_sys(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    key = (f["op1"], f["CRn"], f["CRm"], f["op2"])
    if key == (3, 7, 4, 1):  # DC ZVA: zero the 64-byte block (DCZID_EL0 reports 64)
        em.out(f"memset((void *)({em.x(f['Rt'])} & ~63ull), 0, 64);")
    else:
        em.out(";")  # cache maintenance: coherent on the host


# system registers read/written inline; others go to the runtime
_TPIDR = (3, 3, 13, 0, 2)
_TPIDRRO = (3, 3, 13, 0, 3)
_NZCV = (3, 3, 4, 2, 0)
_FPCR = (3, 3, 4, 4, 0)
_FPSR = (3, 3, 4, 4, 1)


def _sysreg(f: dict) -> tuple[int, int, int, int, int]:
    return (2 + f["o0"], f["op1"], f["CRn"], f["CRm"], f["op2"])


def h_mrs(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    r = _sysreg(f)
    if r == _TPIDR:
        e = "s->tpidr_el0"
    elif r == _TPIDRRO:
        e = "s->tpidrro_el0"
    elif r == _NZCV:
        e = "(((u64)N << 31) | ((u64)Z << 30) | ((u64)C << 29) | ((u64)V << 28))"
    elif r == _FPCR:
        e = "s->fpcr"
    else:  # (FPSR: the form MRS_fpsr, fp_fpsr.py)
        e = f"nx_sysreg_read(s, {r[0]}, {r[1]}, {r[2]}, {r[3]}, {r[4]})"
    em.setx(f["Rt"], e)


def h_msr(em: FunctionEmitter, i: Insn) -> None:
    f = i.f
    r = _sysreg(f)
    v = em.x(f["Rt"])
    if r == _TPIDR:
        em.out(f"s->tpidr_el0 = {v};")
    elif r == _NZCV:
        em.flags_touched()
        em.out(f"FLAGS_SET((u32)({v} >> 28));")
    else:  # (FPCR, FPSR: the form MSR_fp, fp_fpsr.py)
        em.out(f"nx_sysreg_write(s, {r[0]}, {r[1]}, {r[2]}, {r[3]}, {r[4]}, {v});")
