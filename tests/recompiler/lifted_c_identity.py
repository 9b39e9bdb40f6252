"""Before/after check that a change to the decoder table or the lifter keeps a real program's
generated C byte for byte (issue 33: "generated C for busybox and Lua byte-identical").

``snap ELF OUT.json``: link and analyse ``ELF`` as ``nxrecomp recompile`` does, lift every shard
as ``recompiler.build`` does (the same buckets, the same lift options from the settings), fill
the call sites' lists (``interproc.place``) and hash each shard's C; no C compiler runs.
``compare BEFORE.json AFTER.json``: the shards whose C differs (none expected); ``--dump DIR``
writes each shard's C too, for ``diff -r``.

Run ``snap`` with PYTHONPATH set to the old tree, then to the new one, on the same ELF (the lift
cache is not used: each run lifts every shard with its own tree's code).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path


def snap(elf: str, out: str, dump: str = "") -> None:
    from nxrecomp.common import settings
    from recompiler import build as B, pipeline
    from recompiler.lift import interproc

    image = pipeline.link_program(elf, [])
    program = pipeline.analyse_image(image, set())
    trust, elide = B.abi_settings(
        program.abi, bool(settings.get("recompiler", "trust_abi")), bool(settings.get("recompiler", "elide_saves"))
    )
    comments = bool(settings.get("recompiler", "comments"))
    trace = bool(settings.get("recompiler", "trace"))
    functions = set(program.functions)
    buckets: dict[int, list] = {}
    for addr in sorted(program.functions):
        buckets.setdefault(B._shard_of(addr, int(settings.get("recompiler", "shard_bytes"))), []).append(program.functions[addr])
    max_insns = int(settings.get("recompiler", "shard_insns"))
    results = []
    for k, plans in sorted(buckets.items()):
        for i, part in enumerate(B.split_bucket(plans, max_insns)):
            results.append(
                B._lift_fresh((k, i), Path(f"shard_{k:05d}_{i}.c"), part, functions, trust, comments, trace, elide, program.abi)
            )
    summ = interproc.summarize([f for x in results for f in x.facts])
    res = {}
    for x in results:
        text = interproc.place(x.text, x.facts, summ, results_only=True)
        res[Path(x.c_path).name] = hashlib.sha1(str(text).encode()).hexdigest()
        if dump:  # the C itself, to diff the shards that differ
            Path(dump).mkdir(parents=True, exist_ok=True)
            (Path(dump) / Path(x.c_path).name).write_text(str(text))
    Path(out).write_text(json.dumps({"functions": len(functions), "shards": res}, indent=0))
    print(f"{elf}: {len(functions)} functions, {len(res)} shards -> {out}")


def compare(before: str, after: str) -> int:
    a, b = json.loads(Path(before).read_text()), json.loads(Path(after).read_text())
    if a["functions"] != b["functions"]:
        print(f"analysis differs: {a['functions']} functions before, {b['functions']} after")
        return 1
    diff = sorted(k for k in a["shards"].keys() | b["shards"].keys() if a["shards"].get(k) != b["shards"].get(k))
    print(f"{len(a['shards'])} shards, {a['functions']} functions: {len(diff)} shards differ {diff[:20]}")
    return 1 if diff else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snap")
    s.add_argument("elf")
    s.add_argument("out")
    s.add_argument("--dump", default="", help="also write each shard's C into this folder")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    a = p.parse_args()
    if a.cmd == "snap":
        snap(a.elf, a.out, a.dump)
        return 0
    return compare(a.before, a.after)


if __name__ == "__main__":
    sys.exit(main())
