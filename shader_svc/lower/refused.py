"""Why the mnemonics still without a lowering rule are refused (issue 31, shader-rest): the text
the translator's error gives after the offset, word and form.

Every one of them was looked for in what ptxas 12.9 makes of PTX written to provoke it
(``tests/shader_svc/ptx_probes.py``, sm_86 and sm_53, -O3 and -O0; ``shader_svc/README.md``,
"The last untranslated mnemonics"): none appears, so no program the compilers we drive produce
contains them, and their behaviour could not be checked against code that uses them."""

from __future__ import annotations

_SEE = " (shader_svc/README.md, 'The last untranslated mnemonics')"

WHY: dict[int, dict[str, str]] = {
    86: {
        "B2R": "plain B2R (a barrier's state); ptxas makes B2R.RESULT of bar.red / __syncthreads_count, never the plain form",
        "CCTLT": "texture-cache control; ptxas emits CCTL / CCTLL for PTX prefetch, applypriority, discard and "
        "fence.proxy.alias, never CCTLT",
        "CLMAD": "no PTX instruction compiles to it",
        "CSMTEST": "no PTX instruction compiles to it for sm_86 (cluster state: sm_90)",
        "FOOTPRINT": "texture footprint queries have no PTX instruction",
        "GETLMEMBASE": "ptxas moves R1 itself for PTX alloca / stacksave / stackrestore and reads the local "
        "window from c[0x0] for cvta.local",
        "SETLMEMBASE": "ptxas moves R1 itself for PTX alloca / stacksave / stackrestore",
        "ISBEWR": "a tessellation stage's output write, a stage the GPU process does not have",
        "JMP": "ptxas makes CALL / BRA of direct calls and branches, CALL.REL / CALL.ABS of calls through registers",
        "JMX": "ptxas makes BRX / BRXU of PTX brx.idx and CALL.REL / CALL.ABS of calls through registers",
        "JMXU": "ptxas makes BRXU of a uniform PTX brx.idx and CALL.REL of uniform calls through registers",
        "LDTRAM": "a graphics attribute read with no PTX form",
        "RPCMOV": "ptxas emits none for calls, recursion or function pointers",
        "SETCTAID": "no PTX instruction compiles to it",
        "SUQUERY": "ptxas compiles every PTX suq query to TXQ or a load of the surface header",
        "UCLEA": "ptxas emits none for cvta.const, cvta.param or indexed constant reads",
    },
    53: {
        "B2R": "plain B2R (a barrier's state); ptxas makes B2R.RESULT of bar.red / __syncthreads_count, never the plain form",
        "CCTLT": "texture-cache control; ptxas emits CCTL / CCTLL for PTX prefetch, never CCTLT",
        "GETCRSPTR": "ptxas keeps the call-return stack itself for calls, recursion, alloca and stacksave",
        "SETCRSPTR": "ptxas keeps the call-return stack itself for calls, recursion, alloca and stackrestore",
        "GETLMEMBASE": "ptxas moves R1 itself for PTX alloca / stacksave / stackrestore and reads the local "
        "window from c[0x0] for cvta.local",
        "SETLMEMBASE": "ptxas moves R1 itself for PTX alloca / stacksave / stackrestore",
        "IDE": "no PTX instruction compiles to it (trap-handler state)",
        "RTT": "no PTX instruction compiles to it (a return from a trap handler)",
        "JMP": "ptxas makes BRA / CAL / JCAL of branches and calls, PRET + BRX / JMX of calls through registers",
        "LONGJMP": "ptxas emits none for exit, trap, brkpt or calls",
        "PLONGJMP": "ptxas emits none for exit, trap, brkpt or calls",
        "PEXIT": "ptxas makes EXIT of exit inside functions and divergent code",
        "R2B": "ptxas makes BAR with register operands of PTX barriers with register ids and counts",
        "STP": "no PTX instruction compiles to it",
        "TXA": "ptxas makes TEX / TLD / TLDS / TXQ of every PTX texture instruction tried",
    },
}


def why(isa: int, mnemonic: str) -> str:
    """The refusal's reason for a row without a rule ('not translated yet' for a form not looked
    at here)."""
    w = WHY.get(isa, {}).get(mnemonic.split(".")[0])
    return f"not translated: ptxas 12.9 emits it for no PTX tried: {w}{_SEE}" if w else "not translated yet"
