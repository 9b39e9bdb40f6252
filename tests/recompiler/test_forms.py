"""The lifter's form table (recompiler/lift/forms.py): every form the decoder knows
(recompiler/isa.py) has rows, each encoding exactly one handler, and no handler is chosen by
the order in which modules are merged or hands an encoding on to another handler."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import random
from pathlib import Path

import recompiler.lift
from recompiler import isa
from recompiler.decode import decode, disasm
from recompiler.lift import forms

LIFT = Path(recompiler.lift.__file__).parent


def test_every_form_has_exactly_one_row():
    rows = [r.form for r in forms.ROWS]
    assert sorted(rows) == sorted(f.name for f in isa.FORMS)  # each form once, no other
    assert all(callable(r.handler) for r in forms.ROWS)
    assert not any(hasattr(r, "takes") for r in forms.ROWS)  # no row chosen by a predicate


def test_every_decodable_encoding_finds_one_handler():
    # random words of each form: each decodes to a form whose one row's handler lifts it, the
    # one the form's entry in HANDLERS calls
    rnd = random.Random(7)
    found = set()
    for f in isa.FORMS:
        for _ in range(50):
            insn = decode(f.encode(**{n: rnd.getrandbits(w) for n, _l, w in f.fields}), 0x1000)
            if insn is None:  # an encoding of a form listed before it, or unallocated
                continue
            found.add(insn.name)
            (row,) = [r for r in forms.ROWS if r.form == insn.name]
            assert forms.handler(insn) is row.handler is forms.HANDLERS[insn.name]
    assert len(found) > len(isa.FORMS) // 2


def test_fp_system_registers_are_forms_of_their_own():
    # FPCR is S3_3_C4_C4_0 and FPSR S3_3_C4_C4_1 (Arm ARM; capstone prints the words with these
    # names): MRS of FPSR and MSR of either decode to the fp_fpsr forms, other registers do not
    cases = {
        0xD53B4420: ("mrs x0, fpsr", "MRS_fpsr"),  # mrs x0, fpsr
        0xD53B4400: ("mrs x0, fpcr", "MRS"),
        0xD51B4420: ("msr fpsr, x0", "MSR_fp"),
        0xD51B4400: ("msr fpcr, x0", "MSR_fp"),
        0xD53BD040: ("mrs x0, tpidr_el0", "MRS"),
        0xD51B4200: ("msr nzcv, x0", "MSR_reg"),
    }
    for word, (text, form) in cases.items():
        assert disasm(word, 0).lower() == text, hex(word)
        assert decode(word, 0).name == form, hex(word)


def test_no_module_keeps_its_own_table():
    for m in pkgutil.iter_modules(recompiler.lift.__path__):
        mod = importlib.import_module(f"recompiler.lift.{m.name}")
        if m.name != "forms":
            assert not hasattr(mod, "HANDLERS") or mod.HANDLERS is forms.HANDLERS, m.name


def test_no_handler_hands_an_encoding_to_another_module():
    # a call like ``simd_int.h_three_same(em, i)`` inside a handler is a hand-back chain; the
    # table's rows say which handler takes which encodings instead
    modules = {m.name for m in pkgutil.iter_modules(recompiler.lift.__path__)} | {"core"}
    for path in sorted(LIFT.glob("*.py")):
        if path.name == "forms.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in modules
            ):
                assert not node.func.attr.startswith("h_"), f"{path.name}: {node.func.value.id}.{node.func.attr}"
