"""The layering rules of docs/ARCHITECTURE.md ("Data flow"), checked on the source: no import
loop between the project's modules (an import inside a function counts: it hides a loop, it
does not remove it; only ``if TYPE_CHECKING:`` imports, which never run, are left out), and the
linter (ruff, configured in pyproject.toml) passes on the whole tree."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("nxrecomp", "recompiler", "cpu_host", "gpu_host", "shader_svc", "relay", "proto")


def _modules() -> dict[str, Path]:
    mods = {}
    for pkg in PACKAGES:
        for f in (ROOT / pkg).rglob("*.py"):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            mods[".".join(parts)] = f
    return mods


def _run_time_nodes(tree: ast.AST):
    """Every node except those under ``if TYPE_CHECKING:``."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                todo.extend(child.orelse)
                continue
            todo.append(child)


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports, anywhere in its body."""
    mods = _modules()

    def owner(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        out: set[str] = set()
        for node in _run_time_nodes(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                out.update(filter(None, (owner(a.name) for a in node.names)))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                for a in node.names:
                    full = f"{base}.{a.name}"
                    target = full if full in mods else owner(base)
                    if target:
                        out.add(target)
        out.discard(mod)
        graph[mod] = out
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_cycle_finder_finds_a_loop_and_only_loops():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_imports_under_type_checking_are_not_edges():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\nelse:\n    import y\n")
    names = {a.name for n in _run_time_nodes(tree) if isinstance(n, ast.Import) for a in n.names}
    assert names == {"y"}


def test_no_import_loop_between_modules():
    graph = import_graph()
    assert len(graph) > 150 and graph["gpu_host.engine"], "the graph missed the tree"
    loops = cycles(graph)
    assert not loops, "import loops (break them; docs/ARCHITECTURE.md 'Data flow'):\n" + \
        "\n".join(" <-> ".join(c) for c in loops)


def test_ruff_passes():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]' installs it)")
    r = subprocess.run([ruff, "check", "--output-format", "concise", str(ROOT)], capture_output=True,
                       text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
