"""Developer tool: list the instructions of a program that the lifter would turn into a fatal
``nx_unimplemented`` trap, grouped by capstone mnemonic with a count and one example address.

    .venv/bin/python tests/realprogs/scan_unimplemented.py PROGRAM.elf

Only instructions inside the functions the analysis finds are looked at (what a recompile
lifts); a trap in a function a program never runs is harmless, so this is a to-do list, not a
verdict."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from recompiler.analyse import analyse  # noqa: E402
from recompiler.decode import disasm  # noqa: E402
from recompiler.lift import HANDLERS  # noqa: E402
from recompiler.lift.emitter import FunctionEmitter, LiftError  # noqa: E402
from recompiler.link import link_program  # noqa: E402
from recompiler.pipeline import eh_frames, ifunc_slots, image_memory  # noqa: E402


def scan(path: str) -> Counter:
    image = link_program(path)
    program = analyse(image_memory(image), image.entry, image.func_hints, eh_frames(image), ifunc_slots(image))
    missing: Counter = Counter()
    example: dict[str, int] = {}
    for entry, plan in program.functions.items():
        em = FunctionEmitter(plan, set(program.functions))
        for insn in plan.insns:
            em.insn = insn
            h = HANDLERS.get(insn.name)
            try:
                if h is None:
                    raise LiftError("no handler")
                h(em, insn)
            except Exception as e:  # noqa: BLE001 - LiftError or a lifter bug, both are to-dos
                text = disasm(insn.word, insn.addr)
                key = f"{text.split()[0]:10} {insn.name:24} {type(e).__name__}"
                missing[key] += 1
                example.setdefault(key, (insn.addr, insn.word, text))
    for key, n in missing.most_common():
        a, w, text = example[key]
        print(f"{n:6}  {key}  e.g. {a:#x} {w:#010x} {text}")
    return missing


if __name__ == "__main__":
    scan(sys.argv[1])
