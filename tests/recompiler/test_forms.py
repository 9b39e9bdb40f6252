"""The lifter's form table (recompiler/lift/forms.py): every form the decoder knows
(recompiler/isa.py) has exactly one handler, and no handler is chosen by the order in which
modules are merged (no lifter module keeps a table of its own)."""
from __future__ import annotations

import importlib
import pkgutil

import recompiler.lift
from recompiler import isa
from recompiler.decode import decode
from recompiler.lift import forms


def test_every_form_has_exactly_one_row():
    names = [name for name, _h in forms.ROWS]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    assert set(names) == {f.name for f in isa.FORMS}
    assert all(callable(h) for _n, h in forms.ROWS)


def test_every_decodable_form_finds_its_handler():
    # a word of each form (its fixed bits, fields zero) decodes to some form, whose row exists
    found = set()
    for f in isa.FORMS:
        insn = decode(f.encode(), 0x1000)
        if insn is None:    # an encoding the decoder leaves to a form listed before it
            continue
        found.add(insn.name)
        assert forms.handler(insn) is forms.HANDLERS[insn.name], f.name
    assert len(found) > len(isa.FORMS) // 2


def test_no_module_keeps_its_own_table():
    for m in pkgutil.iter_modules(recompiler.lift.__path__):
        mod = importlib.import_module(f"recompiler.lift.{m.name}")
        if m.name != "forms":
            assert not hasattr(mod, "HANDLERS") or mod.HANDLERS is forms.HANDLERS, m.name


def test_delegating_rows_are_rows():
    assert set(forms.DELEGATES) <= set(forms.HANDLERS)
