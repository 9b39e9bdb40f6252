"""The C function around a lifted body: the register locals' declarations, the store and reload
lists of calls, exits and returns (``STORE_ALL``, ``STORE_CALL``, ``RELOAD_CALL``... as macros
per function), the resume switch, and a function with resume points' twin (``R_x``) and catch
(``C_x``) for a return to somewhere else (docs/ARCHITECTURE.md, "Returns to somewhere else").
A mixin of ``FunctionEmitter`` (``emitter.py``), run once its body and facts are complete.

The locals (X, V registers, flags) and what is written back come from the instructions' records
(``result.Lifted.named``, ``.writes``, ``.names_flags``: the declared effects, Unicorn-checked),
not from the C; SP also where an exit passes it.  Nothing here reads the body's C: handlers
name the V registers' locals and write them in their vector-typed forms themselves
(``vector.py``, whose writes the records note in ``result.Lifted.vec_writes``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nxrecomp.common import settings
from recompiler.lift import interproc
from recompiler.lift.liveness import GO_RET_HANDED
from recompiler.lift import template as T
from recompiler.lift.signature import ARG_REGS, CALLER_SAVED, SIG, fname, rname

# a tail exit of the body (a direct tail call, a jump out through an inline cache or nx_jump):
# the callee and its six arguments
_TAIL_EXIT = re.compile(
    r"MUSTTAIL return ([A-Za-z_]\w*(?:->\w+)?)\(s, ([^,;()]+), ([^,;()]+), ([^,;()]+), ([^,;()]+), ([^,;()]+)\);"
)
# a tail exit in a resume twin: a call, then SP and X29 as passed where the callee came back to
# the X30 passed (a normal return, AAPCS64: its own returns do not write them back)
_TWIN_TAIL = (
    "#define NX_TTAIL(f, a, b, c, d, e) do { u64 _tl = (c), _ts = (d), _tf = (e); "
    "NxRet _tr = f(s, (a), (b), _tl, _ts, _tf); if (_tr.pc == _tl) { s->sp = _ts; s->x[29] = _tf; } "
    "return _tr; } while (0)\n"
)

# s->resume of a cold exit's tail call of the twin (lift/cold.py): its switch goes to the cold path
COLD_RESUME = 3

# X0 after a call is the callee's NxRet.x0, X30 the return address it came back to: the locals
# hold them, NxCpu may not, so a call never reloads them
_NOT_RELOADED = (0, 30)


@dataclass
class Locals:
    """The guest registers a function's body names, as C locals."""

    regs: list[int]  # X registers it uses (X0, X1, X29, X30 always: they arrive as arguments)
    uses_sp: bool
    v_used: list[int]
    v_written: list[int]
    # X registers it may write (X0, X1, X29, X30 always: a write-back of every local, STORE_ALL,
    # so also stores X29, whose NxCpu slot may be stale, for the runtime that reads NxCpu whole)
    w_regs: list[int]
    w_sp: bool
    uses_flags: bool


class FunctionWrapper:
    """The function's C around its body (mixed into ``FunctionEmitter``)."""

    def _wrap(self, body: str, hot: str | None = None) -> str:
        """The function's C around ``body``; ``hot``: ``F_x``'s body where its cold paths go to
        the twin (cold.py), which then holds ``body``."""
        loc = self._locals(body)
        lists = self._lists(loc)
        decl = self._decl(loc)
        self.resume = [a for a in self.resume if a in self.addrs]
        # A function with resume points gets a twin that holds them (see below), and with an SP
        # a catch (C_x) that also knows the SP of its last setjmp call (_sjsp: a VLA or alloca
        # may move SP between it and the call a longjmp comes back through)
        twin = bool(self.resume or self.cold_entries) and not self.trace and "twins" not in self.no_opt
        catches = twin and loc.uses_sp
        # the entry's own declarations (not a resume switch's: a frame re-entered from NxCpu
        # there loads what is live): code compiled from Go reads no register at its entry but
        # its arguments (``_undefined_at_entry``)
        undef = self._undefined_at_entry() if not self.resume or twin else 0
        entry_decl = self._decl(loc, undef) if undef else decl
        if catches:
            decl.append("u64 _sjsp = 0;")
            if entry_decl is not decl:
                entry_decl.append("u64 _sjsp = 0;")
        else:
            for n, slot in enumerate(self.slots.all):  # no frame to note the SP of
                if slot.kind == T.NOTE_SP:
                    body = body.replace(f"\x00{n}\x00", "")
        if self.live:  # AAPCS64: a return hands no flags back
            self._tag_sites(loc.regs, loc.v_used, loc.w_regs, loc.w_sp, loc.v_written, loc.uses_flags)
            # what interproc.frame_stores needs: SP and X29 at the exits
            self.facts.twin, self.facts.sp_local = twin, loc.uses_sp
            self.facts.frame_ok = self.trust_abi and not self.trace
        resume = self._resume_switch()
        self.plan.resume_points = sorted(set(self.resume))
        # A function with resume points gets a twin that holds them: where every return
        # address can also be entered from the start, each value live there merges with one
        # loaded from NxCpu, so clang can keep nothing in a constant or a register it would not
        # spill (Lua's luaV_execute: ~20 % of its time; busybox sort's key compare, which calls
        # get_key twice: 8 %).  The function itself then has no resume switch.  A twin runs
        # only in a frame re-entered after a return to somewhere else (a longjmp below it), and
        # there only until that frame returns, except in a loop that dispatches through a jump
        # table (an interpreter after a caught error runs on in its twin): the twins of other
        # functions are compiled as cold code (smaller, ~half the compile time of a copy).
        self.plan.resume_twin = twin
        catch, prelude = self._catch(catches)
        if hot is not None and not catches:  # (F_x's cold exits tail-call the twin)
            prelude = f"NxRet {rname(self.plan.entry)}{SIG};\n"
        name = fname(self.plan.entry)
        if not getattr(self, "whole_program", True):
            # a function lifted alone (lift on miss): no whole-program facts say where its tail
            # exits go, and the functions they reach may leave SP and X29 out of their returns
            # (interproc.frame_stores), so its tail exits write them back as a twin's do
            body, tails = self._ttail(body), self._ttail_macro()
        else:
            tails = ""
        if not twin:
            return self._function(name, resume, "", loc, lists, entry_decl, catch, body, tails)
        # The function itself has no check of s->resume: the entry table holds it for its own
        # address only (kind 1, build._table_source), and every way in (nx_run, nx_call_ind,
        # nx_jump, an inline cache, a direct call from lifted code, whose frame consumed any
        # resume in its own twin's switch) enters it with s->resume 0.  Two instructions at
        # each call, in each inlined copy too (sort's key compare: three a comparison).
        # SP and X29 at the exits (interproc.frame_stores): F_x's returns that surely go back to
        # their caller leave them out (NX_RF), and the caller, which has them, stores them if it
        # is the runtime (nx_enter).  The twin runs in a frame re-entered from NxCpu, whose
        # caller is the run loop, so it writes them back at each return (NX_RF), and its tail
        # calls and jumps out are calls that write back the SP and X29 they passed where the
        # callee came back to the X30 they passed (NX_TTAIL): that callee's own returns
        # leave them out.
        return (
            prelude
            + self._function(name, "", "", loc, lists, entry_decl, catch, hot or body, "#define NX_RF(...)\n" + tails)
            + self._function(
                rname(self.plan.entry),
                resume,
                "" if self.plan.jump_tables else "__attribute__((cold)) ",
                loc,
                lists,
                decl,
                catch,
                self._ttail(body),
                "#define NX_RF(...) __VA_ARGS__\n" + self._ttail_macro(),
            )
        )

    def _ttail(self, body: str) -> str:
        """``body`` with its tail exits as ``NX_TTAIL`` calls, where a callee's normal return may
        leave SP and X29 out of ``NxCpu``.  Without ``trust_abi`` (Go) every return stores them and
        every call reloads them, so the tail exits stay tail calls: a write-back of the SP passed
        would be wrong where a goroutine switch hands the frame below to another goroutine (or to
        one whose stack moved) that returns to the same X30 (``build._table_source``)."""
        return _TAIL_EXIT.sub(r"NX_TTAIL(\1, \2, \3, \4, \5, \6);", body) if self.trust_abi else body

    def _ttail_macro(self) -> str:
        return _TWIN_TAIL if self.trust_abi else ""

    def _locals(self, body: str) -> Locals:
        # The X registers and SP the body names and writes, from its records' declared effects
        # (result.Lifted.named, .writes: the form's operands and the registers the lifter's own
        # C reads for it), not from the C.  A call's write of X0 (the callee's result) is no
        # form's: X0, X1, X29 and X30 arrive as arguments, not in NxCpu (SP too, where it is used):
        # every function has them and writes them back where it writes back what it changed
        named = writes = 0
        flags = self.flags_written  # (an instruction that writes NZCV: FunctionEmitter.flags_touched)
        for rec in self.records:
            named |= rec.named
            writes |= rec.writes
            flags |= rec.names_flags
        # SP, besides where a form names it: every call, system call, direct tail call, jump out
        # (a table's miss too) and fall out of the function passes it (signature.ARGS), as the
        # emitter's own C, which the records note as the exits they are
        recs = self.records
        uses_sp = (
            bool(named >> 31 & 1)
            or any(r.call is not None or r.svc or r.tails or r.jump_out or r.exit_all or r.tables for r in recs)
            or any(
                r.falls
                and not r.fatal
                and (j + 1 == len(recs) or recs[j + 1].addr != r.addr + 4)
                and r.addr + 4 not in self.addrs
                for j, r in enumerate(recs)
            )
        )
        return Locals(
            sorted({r for r in range(31) if named >> r & 1} | set(ARG_REGS)),
            uses_sp,
            [r for r in range(32) if named >> (32 + r) & 1],
            [r for r in range(32) if writes >> (32 + r) & 1],
            sorted({r for r in range(31) if writes >> r & 1} | set(ARG_REGS)),
            uses_sp and bool(writes >> 31 & 1),  # (a declaration that failed says "all")
            flags,
        )

    def _undefined_at_entry(self) -> int:
        """The X registers whose value at the function's entry means nothing (bits): for a
        function compiled from Go whose arguments are known (``FunctionPlan.input_regs``: its
        stack check's spills, or none; with g, R26, X29, X30 and SP), every other one.  Go's
        ABIInternal hands a function its arguments alone and its compiler reads no other
        register before writing it; the worst case of an unknown callee (a closure, a deferred
        call) or of a return's store list may still name one, whose value then is anything:
        its local starts as 0 instead of a load from ``NxCpu`` (whose slot its callers do not
        store: ``interproc.summarize`` caps USES to the same registers).  Not the runtime's
        assembly (its own conventions), nor a jump-table label (entered with live registers)."""
        p = self.plan
        if not self.live or p.hands_back != GO_RET_HANDED or p.input_regs is None:
            return 0
        return ((1 << 31) - 1) & ~p.input_regs & ~sum(1 << r for r in ARG_REGS)

    def _decl(self, loc: Locals, undefined: int = 0) -> list[str]:
        """The locals' declarations, loaded from the arguments and ``NxCpu`` (0 for the
        registers ``undefined`` names: bits)."""
        decl = []
        mem = [r for r in self.mem_regs if r in loc.regs]  # kept in NxCpu (mem_regs.py)
        regs = [r for r in loc.regs if r not in mem]
        if regs:
            decl.append(
                "u64 "
                + ", ".join(
                    f"x{r} = a{r}" if r in ARG_REGS else f"x{r} = 0" if undefined >> r & 1 else f"x{r} = s->x[{r}]" for r in regs
                )
                + ";"
            )
        if mem:
            decl.append("\n" + "".join(f"#define x{r} (s->x[{r}])\n" for r in mem))
        if loc.uses_sp:
            decl.append("u64 sp = asp;")
        if loc.v_used:
            decl.append(
                "NxVec "
                + ", ".join(f"v{r}" for r in loc.v_used)
                + "; "
                + " ".join(interproc.vcopy(f"v{r}", f"s->v[{r}]") for r in loc.v_used)
            )
        decl.append("FLAGS_DECL;" if loc.uses_flags else "")
        if loc.uses_flags:
            decl.append("FLAGS_LOAD;")
        if self.events:  # set once the function wrote its own values into NxCpu (result.Lifted.overwrites_nxcpu)
            decl.append("u8 _c = 0;")
        if self.call_rets:
            decl.append("NxRet _r;")
        return decl

    def _lists(self, loc: Locals) -> dict[str, list[str]]:
        """The statements of each store and reload macro (STORE_ALL, STORE_CALL, RELOAD_CALL,
        RELOAD_ALL, RELOAD_V, STORE_INDIRECT)."""
        regs, v_used, uses_sp, uses_flags = loc.regs, loc.v_used, loc.uses_sp, loc.uses_flags
        store = [f"s->x[{r}] = x{r};" for r in loc.w_regs]
        if loc.w_sp:
            store.append("s->sp = sp;")
        store += [interproc.vcopy(f"s->v[{r}]", f"v{r}") for r in loc.v_written]
        if uses_flags and self.flags_written:
            store.append("FLAGS_STORE;")
        # An indirect jump out (BR to a register, a computed goto's miss) reaches a function
        # entry or a call's return address, where AAPCS64 leaves the flags undefined, so with
        # trust_abi it does not write them back: else every flag an interpreter loop computes
        # stays live across its dispatch (Lua n-body 10-25 % faster).  Trace builds keep them,
        # and so does Go code: its runtime's asyncPreempt restores NZCV and jumps back to the
        # instruction it interrupted
        store_indirect = [x for x in store if x != "FLAGS_STORE;" or not self.live or self.go]
        if self.tail_jumps:  # every jump out is a tail call (facts._tail_jumps): no callee-saved register
            saved = {f"s->x[{r}] = x{r};" for r in range(19, 29)}
            saved |= {interproc.vcopy(f"s->v[{r}]", f"v{r}") for r in range(8, 16)}
            store_indirect = [x for x in store_indirect if x not in saved]
        reload_regs = [r for r in regs if (r in CALLER_SAVED or not self.trust_abi) and r not in _NOT_RELOADED]
        reload = [f"x{r} = s->x[{r}];" for r in reload_regs]
        if not self.trust_abi and 30 in regs:
            # without trust_abi a call may come back by a jump to its return address from
            # elsewhere (Go's gogo resuming a goroutine at a morestack or mcall call, with the
            # LR it saved), not by the callee's return: X30 is then NxCpu's, which every exit
            # and jump stores (a normal return leaves the return address there too)
            reload.append("x30 = s->x[30];")
        # AAPCS64: a callee may change V0-V7 and V16-V31, and the upper halves of V8-V15
        reload_v_all = [interproc.vcopy(f"v{r}", f"s->v[{r}]") for r in v_used]
        reload += reload_v_all if not self.trust_abi else [interproc.reload_v(r) for r in v_used]
        reload_all = [f"x{r} = s->x[{r}];" for r in regs] + (["sp = s->sp;"] if uses_sp else []) + reload_v_all
        if uses_flags:
            reload_all.append("FLAGS_LOAD;")
        if uses_sp and not self.trust_abi:
            reload.append("sp = s->sp;")
        # AAPCS64: NZCV are neither arguments nor preserved by a call, so with trust_abi a call
        # neither writes the flags back nor reloads them (~12 instructions a call).  Trace
        # builds keep them: lockstep compares NZCV at every function entry.
        flags_at_calls = uses_flags and (not self.trust_abi or self.trace or "flags" in self.no_opt)
        if flags_at_calls:
            reload.append("FLAGS_LOAD;")
        store_call = [x for x in store if x != "FLAGS_STORE;" or flags_at_calls]
        # at a C++ landing pad (emitter.call): the caller-saved registers as the unwinder
        # installed them (X0 and X30 come with the return); the callee-saved ones stay
        lp = [f"x{r} = s->x[{r}];" for r in regs if r in CALLER_SAVED and r not in _NOT_RELOADED]
        lp += [interproc.reload_v(r) for r in v_used]
        if uses_flags:
            lp.append("FLAGS_LOAD;")
        if self.events:
            lp.append("_c = 1;")  # (as after the call: it stored this function's values)
        return {
            "RELOAD_LP": lp,
            "STORE_ALL": store,
            "STORE_CALL": store_call,
            "RELOAD_CALL": reload,
            "RELOAD_ALL": reload_all,
            "RELOAD_V": reload_v_all,
            "STORE_INDIRECT": store_indirect,
        }

    def _resume_switch(self) -> str:
        """The check of ``s->resume`` at the entry of a function with resume points: a frame
        re-entered at one of its return addresses goes there."""
        if not self.resume and not self.cold_entries:
            return ""
        # a resume point at a call site that did not store the callee-saved registers live
        # after it is a fatal error (a RESUME_CHECK slot, filled by interproc.place: elide_saves)
        site: dict[int, int] = {}
        for k, a in enumerate(self.call_rets):  # (a BLR's site, not its guessed direct calls': emitter.call)
            site.setdefault(a, k)
        cases = " ".join(
            f"case {a:#x}ull: {self.slot(T.RESUME_CHECK, site[a]) if self.live and a in site else ''}goto L_{a:x};"
            for a in sorted(set(self.resume))
        )
        # s->resume 3: a cold path's entry (cold.py), where F_x's cold exit stored what is live
        # (its address may also be a resume point, whose case checks the call site's stores)
        cold = "".join(f"case {self.records[j].addr:#x}ull: goto L_{self.records[j].addr:x}; " for j in self.cold_entries)
        cold = f"if (_m == {COLD_RESUME}) switch (s->pc) {{ {cold}default: break; }} " if cold else ""
        c_set = "_c = 1; " if self.events else ""  # a resumed frame may have stored anything
        # s->resume 2: a frame's own try (NX_CATCH); a pc that is not its own goes on up
        return (
            f"  if (UNLIKELY(s->resume)) {{ u64 _m = s->resume; s->resume = 0; {c_set}{cold}switch (s->pc) {{ {cases} "
            f"default: if (_m == 2) NX_BACK; nx_bad_resume(s); NX_BACK; }} }}\n"
        )

    def _catch(self, catches: bool) -> tuple[str, str]:
        """What a call site does with a return to somewhere else (``NX_CATCH``), and the catch
        function (C_x) that goes before the function where it has one.

        A return to somewhere else that comes up to a call site of a function with a twin
        tries that frame first (C_x): if the guest SP is this frame's, the pc may be one of
        its resume points (a longjmp to the setjmp of this frame), and the twin runs on from
        NxCpu in this frame's place, so the C frames of its callers, which hold registers in
        their locals only (elide_saves), stay as they are.  Else it goes on up, to nx_run."""
        if not catches:
            return "return _r", ""
        cname = f"C_{self.plan.entry:x}"
        catch = f"MUSTTAIL return {cname}(s, _r.x0, _r.pc, s->sp == _sjsp ? _sjsp : sp, sp, x29)"
        prelude = (
            f"NxRet {rname(self.plan.entry)}{SIG};\n"
            f"static __attribute__((noinline, cold)) NxRet {cname}{SIG} {{\n"
            "  if (s->sp != a30) return (NxRet){ a1, a0 };   /* a0: X0, a1: the pc, a30: the frame's SP */\n"
            "  s->x[0] = a0; s->pc = a1; s->resume = 2;\n"
            f"  MUSTTAIL return {rname(self.plan.entry)}(s, a0, s->x[1], s->x[30], s->sp, s->x[29]);\n}}\n"
        )
        return catch, prelude

    def _function(
        self,
        fn: str,
        entry_check: str,
        attrs: str,
        loc: Locals,
        lists: dict[str, list[str]],
        decl: list[str],
        catch: str,
        body: str,
        frame_macros: str = "",
    ) -> str:
        """One C function of the body: its macros, declarations, entry check and body."""
        # a signal delivered at a backward branch (recompiler.signal_polls): runs its handler
        # nested on NxCpu and puts everything back, so the locals are reloaded unchanged;
        # liveness does not see it (no register is read or written in effect)
        sigpoll = (
            "#define NX_SIGPOLL(t) do { if (UNLIKELY(nx_signal_flag)) { s->pc = (t); "
            f"(s->sp) = {'sp' if loc.uses_sp else 'asp'}; STORE_ALL; nx_signal_poll(s); RELOAD_ALL; }} }} while (0)\n"
            if self.signal_polls
            else ""
        )
        # recompiler.entry_log: the arguments logged at the entry, NxCpu left as it was (its
        # slots of X0, X1, X30, SP and X29 may be stale here by design: a log that kept them
        # would hide a read of a stale slot)
        entry_log = (
            "  if (!s->resume) { u64 _o[5] = { s->x[0], s->x[1], s->x[30], s->sp, s->x[29] }; s->x[0] = a0; "
            f"s->x[1] = a1; s->x[30] = a30; s->sp = asp; s->x[29] = a29; nx_trace_entry(s, {self.plan.entry:#x}ull); "
            "s->x[0] = _o[0]; s->x[1] = _o[1]; s->x[30] = _o[2]; s->sp = _o[3]; s->x[29] = _o[4]; }"
            if settings.get("recompiler", "entry_log")
            else ""
        )
        trace = (
            "  s->x[0] = a0; s->x[1] = a1; s->x[30] = a30; s->sp = asp; s->x[29] = a29; if (!s->resume) "
            f"nx_trace_entry(s, {self.plan.entry:#x}ull);"
        )
        # the body is in address order; the entry may lie above code it branches back to
        first_jump = "" if self.plan.insns and self.plan.insns[0].addr == self.plan.entry else f"  goto L_{self.plan.entry:x};\n"

        lp = bool(self.plan.landing_pads)

        def macro(name: str) -> str:
            return f"#define {name} do {{ {' '.join(lists[name])} }} while (0)\n"

        return (
            f"{attrs}NxRet {fn}{SIG} {{\n"
            f"#define NX_CATCH {catch}\n"
            + "".join(macro(m) for m in ("STORE_ALL", "STORE_CALL", "RELOAD_CALL", "RELOAD_ALL", "RELOAD_V"))
            # (only where a call goes on at a landing pad: every other function's C stays as it
            # was, and so its objects' cache keys)
            + (macro("RELOAD_LP") if lp else "")
            + sigpoll
            + frame_macros
            + macro("STORE_INDIRECT")
            + f"  {' '.join(d for d in decl if d)}\n"
            f"{trace if self.trace else entry_log}\n{entry_check}"
            f"{first_jump}{body}\n"
            f"#undef STORE_ALL\n#undef STORE_CALL\n#undef RELOAD_CALL\n#undef RELOAD_ALL\n#undef RELOAD_V\n#undef STORE_INDIRECT\n#undef NX_CATCH\n"
            f"{'#undef RELOAD_LP' + chr(10) if lp else ''}"
            f"{'#undef NX_SIGPOLL' + chr(10) if self.signal_polls else ''}"
            f"{'#undef NX_RF' + chr(10) if 'NX_RF' in frame_macros else ''}"
            f"{'#undef NX_TTAIL' + chr(10) if 'NX_TTAIL' in frame_macros else ''}"
            + "".join(f"#undef x{r}\n" for r in self.mem_regs if r in loc.regs)
            + "}\n"
        )
