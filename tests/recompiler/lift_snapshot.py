"""Before/after check of a behaviour-preserving change to the decoder table or the lifter.

``snap OUT.json [--words EARLIER.json]``: for a seeded sample of instruction words (each row of
``recompiler/isa.py`` with its non-fixed bits random, 1500 per form of ``--dense`` groups and 250
per other row, plus 20,000 uniform words; or the words of an earlier snapshot), record each
word's decoded group (``Form.group``), whether the lifter accepts it (no ``nx_unimplemented``),
whether capstone decodes it, the hash of its lifted one-instruction C and the count of the
lifter's internal errors.  ``compare BEFORE.json AFTER.json``: the differences (none expected).

Run ``snap`` on the old tree (PYTHONPATH=old tree) first, then on the new one with ``--words``
the old snapshot, so both see the same words.  A group that changed but whose word was refused
before and is now undecoded counts as refused the same way.  (Issue 33 part 1 used it for the
split of class rows into form rows: 57,105 words, identical; then, with ``--dense`` on the
Advanced SIMD groups, 131,653 words: identical but for 2,383 reserved or unallocated encodings
the lifter took and now refuses, each ``.word`` to capstone and UNDEFINED to Unicorn.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def snap(out: str, words_from: str | None, dense: set[str]) -> None:
    import unicorn_harness as H

    from recompiler.decode import decode, disasm
    from recompiler.isa import FORMS

    if words_from:
        words = [int(k) for k in json.loads(Path(words_from).read_text())]
    else:
        rng = random.Random(20261206)
        ws = set()
        for f in FORMS:
            for _ in range(1500 if getattr(f, "group", f.name) in dense else 250):
                ws.add(f.value | (rng.getrandbits(32) & ~f.mask))
        ws.update(rng.getrandbits(32) for _ in range(20000))
        words = sorted(ws)
    res = {}
    for w in words:
        i = decode(w, 0x10000)
        code, errs = H.lift_one(i)
        grp = None if i.form is None else getattr(i.form, "group", i.form.name)
        cs = not disasm(w, 0x10000).startswith(".word")
        res[str(w)] = (grp, "nx_unimplemented" not in code, cs, hashlib.sha1(code.encode()).hexdigest(), len(errs))
    Path(out).write_text(json.dumps(res))
    print(f"{len(res)} words -> {out}")


def compare(before: str, after: str) -> int:
    o, n = json.loads(Path(before).read_text()), json.loads(Path(after).read_text())
    if o.keys() != n.keys():
        print("the snapshots hold different words: take the second with --words the first")
        return 2
    diff: Counter = Counter()
    example: dict = {}
    for k, a in o.items():
        b = n[k]
        keys = []
        if a[3] != b[3]:
            keys.append(("C differs", a[0], b[0]))
        if a[1] != b[1]:
            keys.append(("acceptance differs", a[0], b[0]))
        if a[0] != b[0] and not (b[0] is None and not a[1]):
            keys.append(("group differs", a[0], b[0]))
        if a[4] != b[4]:
            keys.append(("internal errors", a[4], b[4]))
        for key in keys:
            diff[key] += 1
            example.setdefault(key, int(k))
    print(
        f"{len(o)} words, {sum(v[2] for v in o.values())} decoded by capstone, {sum(v[1] for v in o.values())} accepted, "
        f"{sum(1 for k in o if o[k][0] and n[k][0] is None)} refused before and undecoded now"
    )
    for key, c in diff.items():
        print(f"{key}: {c} words, e.g. {example[key]:#010x}")
    print("identical" if not diff else f"{sum(diff.values())} differences")
    return 1 if diff else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snap")
    s.add_argument("out")
    s.add_argument("--words", help="take the words of this earlier snapshot")
    s.add_argument("--dense", default="", help="comma-separated groups drawn 1500 times per row")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    a = ap.parse_args()
    if a.cmd == "snap":
        snap(a.out, a.words, set(filter(None, a.dense.split(","))))
        return 0
    return compare(a.before, a.after)


if __name__ == "__main__":
    sys.exit(main())
