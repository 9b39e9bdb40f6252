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
from recompiler.decode import decode
from recompiler.lift import forms

LIFT = Path(recompiler.lift.__file__).parent


def test_every_form_has_rows_ending_in_one_that_takes_the_rest():
    by_form: dict[str, list[forms.Row]] = {}
    for r in forms.ROWS:
        by_form.setdefault(r.form, []).append(r)
    assert set(by_form) == {f.name for f in isa.FORMS}
    for name, rows in by_form.items():
        # the last row takes every encoding the rows before it leave; no other row does
        assert rows[-1].takes is None and all(r.takes is not None for r in rows[:-1]), name
        assert len({r.handler for r in rows}) == len(rows), name
        assert all(callable(r.handler) for r in rows)


def test_every_decodable_encoding_finds_one_handler():
    # random words of each form: each decodes to a form whose rows pick exactly one handler,
    # the one the form's entry in HANDLERS calls
    rnd = random.Random(7)
    found = set()
    for f in isa.FORMS:
        for _ in range(50):
            insn = decode(f.encode(**{n: rnd.getrandbits(w) for n, _l, w in f.fields}), 0x1000)
            if insn is None:  # an encoding of a form listed before it, or unallocated
                continue
            found.add(insn.name)
            takers = [r for r in forms.ROWS if r.form == insn.name and r.takes is not None and r.takes(insn)]
            h = forms.handler(insn)
            assert h is (
                takers[0].handler if takers else next(r.handler for r in forms.ROWS if r.form == insn.name and r.takes is None)
            )
    assert len(found) > len(isa.FORMS) // 2


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
