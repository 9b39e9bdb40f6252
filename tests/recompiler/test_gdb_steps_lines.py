"""bench/gdb_steps.py --lines: the per-C-line report of a stepped cycle; --memops: which
instructions write or read memory (``memop``, on gdb's AT&T text).

gdb itself is a developer tool the test machines need not have; the stepping is checked by
hand (docs/PERFORMANCE.md has the runs).  Here the report over the counts it collects: the
lines ranked by instructions per cycle, each shown with the line above it (the guest
instruction's comment in a build with recompiler.comments), and the share of instructions
that had no line of their own (counted after the line stepped before them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location("gdb_steps", Path(__file__).resolve().parents[2] / "bench" / "gdb_steps.py")
gdb_steps = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gdb_steps)


def test_lines_are_ranked_with_their_guest_instruction(tmp_path: Path, capsys) -> None:
    c = tmp_path / "shard_00001_0.c"
    c.write_text(
        "NxRet F_400000(NxCpu *s, u64 a0, u64 a1, u64 a30) {\n"
        "  /* 400000: add x0, x0, #1 */\n"
        "  x0 = (u64)(x0) + (u64)(0x1);\n"
        "  /* 400004: ret */\n"
        "  do {   } while (0); return (NxRet){ x30, x0 };\n"
        "}\n"
    )
    lines = {f"{c}:3": 40, f"after {c}:3": 30, f"{c}:5": 10}
    gdb_steps.print_lines(lines, cycles=2, top=2)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("lifted C lines: 50 instructions on a line of their own, 30 (38 %)")
    assert out[1].split()[0] == "20.0" and "shard_00001_0.c:3" in out[1] and "400000: add x0, x0, #1" in out[1]
    assert out[2].split()[:2] == ["15.0", "after"] and "x0 = (u64)(x0)" in out[2]
    assert len(out) == 3


def test_a_bundle_without_line_tables_is_named(capsys) -> None:
    gdb_steps.print_lines({"after None": 100}, cycles=1, top=5)
    assert "NXRECOMP_RECOMPILER_DEBUG_INFO=1" in capsys.readouterr().out


def test_memory_operations_are_told_apart_in_att_text() -> None:
    cases = {
        "mov    %rax,0x8(%rbx)": (1, 0),  # a memory destination
        "mov    0x8(%rsi),%r11": (0, 1),
        "vpcmpeqb (%rdi),%ymm16,%k0": (0, 1),
        "add    %r8,0x10(%rdi)": (1, 0),  # read-modify-write: once, as a write
        "cmpq   $0x0,0x130(%rdi)": (0, 1),  # a compare only reads its last operand
        "push   %rbp": (1, 0),
        "call   0x1d7f40 <F_401b80>": (1, 0),  # the return address
        "lea    -0x40(%r13),%r11": (0, 0),
        "nopw   0x0(%rax,%rax,1)": (0, 0),
        "jmp    *0x8(%rax)": (0, 1),
        "jne    0x2893a1 <F_41b650+2593>": (0, 0),  # a target, not an operand
        "mov    0x5cfae0,%rdx": (0, 1),  # an absolute address
        "sub    %fs:0x28,%rdx": (0, 1),
        "movzbl (%rdi,%rcx,1),%eax": (0, 1),  # commas inside the parentheses
        "pop    %rbx": (0, 1),
        "ret": (0, 1),
    }
    got = {k: gdb_steps.memop(k) for k in cases}
    assert got == cases
