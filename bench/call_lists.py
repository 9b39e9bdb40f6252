"""Static counts of what a bundle's call sites store into and reload from ``NxCpu``: per bundle,
the call sites, the stores and reloads in all and per site, and the registers stored and
reloaded most (read from the placed C in ``<bundle>/src/shard_*.c``: a site's stores are the
list after its ``x30 = <return address>;``, its reloads the list after ``x0 = _r.x0;``, as
``recompiler/lift/interproc.place`` writes them).  Counts, not time: a figure for comparing two
lifters on the same program (bench/corpus.py measures the time).

    .venv/bin/python bench/call_lists.py BUNDLE [BUNDLE ...]
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

_STORES = re.compile(r"x30 = 0x[0-9a-f]+ull; do \{(.*?)\} while \(0\);")
_RELOADS = re.compile(r"x0 = _r\.x0; do \{(.*?)\} while \(0\);")
_STORED = re.compile(r"s->(x\[\d+\]|sp|v\[\d+\])\)? = ")
_RELOADED = re.compile(r"= (?:NXV\(NxV2u64, )?s->(x\[\d+\]|v\[\d+\])")


def count(bundle: Path) -> tuple[int, collections.Counter, collections.Counter]:
    """(call sites, stores by register, reloads by register) of the bundle's placed C."""
    sites, stored, reloaded = 0, collections.Counter(), collections.Counter()
    shards = sorted((bundle / "src").glob("shard_*.c"))
    if not shards:
        raise SystemExit(f"{bundle}: no src/shard_*.c (not a bundle built by nxrecomp recompile?)")
    for p in shards:
        text = p.read_text()
        for m in _STORES.finditer(text):
            sites += 1
            stored.update(set(_STORED.findall(m.group(1))))
        for m in _RELOADS.finditer(text):
            reloaded.update(_RELOADED.findall(m.group(1)))
    return sites, stored, reloaded


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    for arg in sys.argv[1:]:
        sites, st, rl = count(Path(arg))
        ns, nr = sum(st.values()), sum(rl.values())
        print(
            f"{arg}: call sites {sites}, stores {ns} ({ns / max(sites, 1):.2f} a site), "
            f"reloads {nr} ({nr / max(sites, 1):.2f} a site)"
        )
        print("  stored most:", ", ".join(f"{k} {v}" for k, v in st.most_common(12)))
        print("  reloaded most:", ", ".join(f"{k} {v}" for k, v in rl.most_common(12)))


if __name__ == "__main__":
    main()
