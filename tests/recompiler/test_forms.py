"""The lifter's form table (recompiler/lift/forms.py): every form the decoder knows
(recompiler/isa.py) has rows, each encoding exactly one handler, and no handler is chosen by
the order in which modules are merged or by a predicate, or hands an encoding on to another
handler; the handler a form's row names lifts every encoding of the form."""

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
from recompiler.lift.emitter import FunctionEmitter, FunctionPlan

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
        # no predicate over a decoded instruction picks a handler (the takes_* of simd_vec and
        # simd_int did, through forms._route, until the rows named each handler's forms)
        assert not [n for n in vars(mod) if n.startswith("takes_")], m.name
        assert not hasattr(mod, "_route"), m.name


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


# The words a handler may still refuse: none is a field value (those are ``!`` clauses, the
# ``_unlifted`` rows'), and a form the lifter does not implement (SYSL) has a refusing row of its
# own; a load whose Rt is Rt2 or its written-back base is CONSTRAINED UNPREDICTABLE, a relation
# between register fields no row can say.
_REFUSING = (forms.h_unallocated, forms.h_not_lifted)


def _register_relation(fields: dict[str, int]) -> bool:
    return "Rt" in fields and fields["Rt"] in (fields.get("Rt2"), fields.get("Rn"))


def test_every_form_s_handler_lifts_every_encoding_of_its_form():
    # the rows alone route a word: the handler a form's row names lifts each of the form's
    # encodings, with no refusal ("not my form") and no Python error (a handler given a form it
    # does not know, e.g. one routed to the wrong handler, fails with a KeyError or a refusal)
    rnd = random.Random(33)
    bad = []
    for f in isa.FORMS:
        if forms.HANDLERS[f.name] in _REFUSING:
            continue
        for _ in range(4):
            insn = decode(f.encode(**{n: rnd.getrandbits(w) for n, _l, w in f.fields}), 0x1000)
            if insn is None or insn.form is not f:  # an encoding of a form listed before it
                continue
            em = FunctionEmitter(
                FunctionPlan(insn.addr, [insn]), set(), trust_abi=True, comments=False, ret_flags=True, elide_saves=False
            )
            code = em.emit(forms.HANDLERS)
            if em.internal_errors or ("nx_unimplemented" in code and not _register_relation(insn.f)):
                bad.append(f"{f.name} {insn.word:#010x} {disasm(insn.word, insn.addr)}: {em.internal_errors or 'refused'}")
    assert not bad, bad[:20]
