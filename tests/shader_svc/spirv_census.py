"""SPIR-V census of the shader translator (a tool, not a test): the hash of each program's
SPIR-V and the IR rows its function holds after the optimiser, to compare two trees (a change of
the lowering that must keep the output byte-identical, or explain each difference).

1. Capture the programs a test run builds (this file as a pytest plugin: every lowering's
   inputs pickled into $SPIRV_CENSUS_DIR)::

       SPIRV_CENSUS_DIR=/tmp/cap PYTHONPATH=$PWD:tests/shader_svc python -m pytest -p spirv_census \\
           tests/shader_svc/test_sm53_gfx.py tests/shader_svc/test_bindless.py ...

2. Replay them on a tree (its code on PYTHONPATH), with the demo's programs of both ISAs::

       PYTHONPATH=$TREE python tests/shader_svc/spirv_census.py /tmp/cap out.json [spv-dir]

   out.json: per program its class, IR row count and SPIR-V hash; with ``spv-dir``
   each module is written there (for spirv-val and diffs of the programs whose hash changed).
"""

from __future__ import annotations

import collections
import hashlib
import importlib
import inspect
import json
import os
import pickle
import sys

from shader_svc.lower import base

_emit = base.LowerBase._emit_function


def _rows(lw) -> int:
    return sum(len(b.items) for b in lw.fn.blocks)


def pytest_configure(config) -> None:
    """Plugin mode: record each lowering's inputs (instructions, header, features, spec)."""
    out = os.environ["SPIRV_CENSUS_DIR"]
    os.makedirs(out, exist_ok=True)

    def capture(self, entry, body):
        cls = type(self)
        inputs = dict(
            insts=self.insts, header=getattr(self, "header", None), features=getattr(self, "features", 0), spec=self.spec
        )
        blob = pickle.dumps((cls.__module__, cls.__qualname__, inputs))
        path = os.path.join(out, hashlib.sha1(blob).hexdigest()[:16] + ".pkl")
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(blob)
        return _emit(self, entry, body)

    base.LowerBase._emit_function = capture


def replay(cap: str, spv_dir: str | None) -> dict:
    seen: dict = {}

    def count(self, entry, body):
        seen["rows"] = _rows(self)
        return _emit(self, entry, body)

    base.LowerBase._emit_function = count
    res: dict = {}

    def record(key: str, cls: str, spv: bytes) -> None:
        res[key] = dict(cls=cls, rows=seen.get("rows", 0), h=hashlib.sha1(spv).hexdigest()[:16])
        if spv_dir:
            with open(os.path.join(spv_dir, key + ".spv"), "wb") as f:
                f.write(spv)

    for name in sorted(os.listdir(cap)):
        if not name.endswith(".pkl"):
            continue
        with open(os.path.join(cap, name), "rb") as f:
            mod, qn, d = pickle.load(f)
        cls = getattr(importlib.import_module(mod), qn)
        try:
            # a compute lowering also has a ``header`` attribute: pick by the constructor's parameters
            compute = "spec" in inspect.signature(cls).parameters
            lw = cls(d["insts"], d["spec"]) if compute else cls(d["insts"], d["header"], d["features"])
            record(name[:-4], qn, lw.build())
        except Exception as e:  # a program this tree refuses: reported, the census goes on
            res[name[:-4]] = dict(cls=qn, err=f"{type(e).__name__}: {e}"[:200])
    from examples.demo.shaders import build as shaders
    from shader_svc import translate as tr

    for n in shaders.PROGRAMS:
        for stage, code in (("vertex", 2), ("fragment", 3)):
            for isa, make in ((53, shaders.sm53_program), (86, shaders.sm86_program)):
                record(f"demo-{n}-{stage}-{isa}", f"demo{isa}", tr.translate(tr.make_program(isa, code, make(n, stage))))
    return res


def main(argv: list[str]) -> None:
    spv_dir = argv[3] if len(argv) > 3 else None
    if spv_dir:
        os.makedirs(spv_dir, exist_ok=True)
    res = replay(argv[1], spv_dir)
    with open(argv[2], "w") as f:
        json.dump(res, f, indent=0)
    by = collections.defaultdict(lambda: [0, 0])
    for r in res.values():
        c = by[r["cls"]]
        c[0] += 1
        c[1] += r.get("rows", 0)
    for cls, (n, rows) in sorted(by.items()):
        print(f"{cls:12} programs {n:4}  IR rows {rows:7}")
    print("refused:", sum("err" in r for r in res.values()))


if __name__ == "__main__":
    main(sys.argv)
