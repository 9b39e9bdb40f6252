"""The layering rules of docs/ARCHITECTURE.md ("Layers", "Data flow"), checked on the source:
no import loop between the project's modules (an import inside a function counts: it hides a
loop, it does not remove it; only ``if TYPE_CHECKING:`` imports, which never run, are left
out); no module imports a higher layer, nor another package of its own layer (``LAYERS``,
``EXCEPTIONS``); the settings modules the common layer looks up by name are data only; and the
linter and the formatter (ruff, configured in pyproject.toml) pass on the whole tree."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("nxrecomp", "recompiler", "cpu_host", "gpu_host", "shader_svc", "relay", "proto")

# The layers, lowest first.  A module may import modules of its own package and of the
# packages of lower layers; never a higher layer, nor another package of its own layer.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # settings, logging, errors, progress, clib, debian; the generated wire stubs
    ("common", ("nxrecomp.common", "proto")),
    # the bundle's files (manifest, image, launch file): what the recompiler writes, the hosts read
    ("bundle", ("nxrecomp.bundle",)),
    # they make or serve things and know no process: lifting, shader translation, the relay
    ("engines", ("recompiler", "shader_svc", "relay")),
    # the GPU process: replays what the CPU host sends
    ("gpu", ("gpu_host",)),
    # the CPU host: runs bundles (lifts on a miss), sends to the GPU process, joins the relay
    ("cpu", ("cpu_host",)),
    # the nxrecomp commands: compose everything (with nxrecomp/__main__.py: python -m nxrecomp)
    ("app", ("nxrecomp.app",)),
]
# (importer, imported) edges allowed against the rule, with the reason; each must still exist
# (the test says when one can go).
EXCEPTIONS: dict[tuple[str, str], str] = {}


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
    assert not loops, "import loops (break them; docs/ARCHITECTURE.md 'Data flow'):\n" + "\n".join(" <-> ".join(c) for c in loops)


def package_of(module: str) -> tuple[int, str] | None:
    """(layer index, package) of a module: the longest package prefix named in ``LAYERS``;
    None for the namespace package ``nxrecomp`` itself, which holds nothing."""
    if module == "nxrecomp.__main__":
        module = "nxrecomp.app.__main__"
    best = None
    for i, (_name, pkgs) in enumerate(LAYERS):
        for pkg in pkgs:
            if (module == pkg or module.startswith(pkg + ".")) and (best is None or len(pkg) > len(best[1])):
                best = (i, pkg)
    return best


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Edges that import a higher layer or another package of the same layer, as text."""
    out = []
    for mod, deps in sorted(graph.items()):
        src = package_of(mod)
        for dep in sorted(deps):
            dst = package_of(dep)
            if src is None or dst is None or dst[1] == src[1] or dst[0] < src[0]:
                continue
            if (mod, dep) in EXCEPTIONS:
                continue
            how = "a higher layer" if dst[0] > src[0] else "another package of its layer"
            out.append(f"{mod} ({LAYERS[src[0]][0]}) imports {dep} ({LAYERS[dst[0]][0]}): {how}")
    return out


def test_every_module_has_a_layer():
    graph = import_graph()
    assert not [m for m in graph if package_of(m) is None and m != "nxrecomp"]
    assert package_of("nxrecomp.common.settings") == (0, "nxrecomp.common")
    assert package_of("nxrecomp.app.cli")[0] == len(LAYERS) - 1


def test_the_layer_check_finds_an_upward_and_a_sideways_import():
    bad = layer_violations(
        {
            "nxrecomp.common.log": {"nxrecomp.app.cli", "nxrecomp.common.settings"},
            "recompiler.build": {"relay.tokens", "nxrecomp.bundle.image"},
            "cpu_host.runner": {"recompiler.link", "gpu_host.packets"},
            "nxrecomp.app.cli": {"cpu_host.cli"},
        }
    )
    assert bad == [
        "nxrecomp.common.log (common) imports nxrecomp.app.cli (app): a higher layer",
        "recompiler.build (engines) imports relay.tokens (engines): another package of its layer",
    ]


def test_no_module_imports_a_higher_layer():
    graph = import_graph()
    bad = layer_violations(graph)
    assert not bad, (
        "imports against the layer rule (docs/ARCHITECTURE.md 'Layers'; tests/test_structure.py LAYERS):\n" + "\n".join(bad)
    )
    stale = [f"{a} -> {b}" for a, b in EXCEPTIONS if b not in graph.get(a, set())]
    assert not stale, "these EXCEPTIONS no longer happen: remove them from tests/test_structure.py: " + ", ".join(stale)


def test_the_settings_rows_the_common_layer_looks_up_are_data_only():
    """``nxrecomp.common.settings`` imports each package's settings module by name; such a module
    may import only the common layer, so that lookup never runs a higher layer's code."""
    from nxrecomp.common.settings import SECTION_MODULES

    graph = import_graph()
    assert set(SECTION_MODULES) <= set(graph)
    bad = {m: sorted(d for d in graph[m] if not d.startswith("nxrecomp.common")) for m in SECTION_MODULES}
    assert not any(bad.values()), bad


# Issue 33: a class is one job; past this many lines (decorators and docstring included) it is
# split along its topics into mixins of modules of their own (as lower/graphics.py's
# GraphicsLowering, sm53/lower_int.py's Int53 and sm86/lower_alu.py's Alu86 were).
MAX_CLASS_LINES = 500


def long_classes(source: str, name: str, limit: int = MAX_CLASS_LINES) -> list[str]:
    """``name:line Class (n lines)`` for every class (nested ones too) of ``source`` longer than
    ``limit`` lines."""
    out = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.ClassDef):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            n = node.end_lineno - first + 1
            if n > limit:
                out.append(f"{name}:{node.lineno} {node.name} ({n} lines)")
    return out


def test_the_class_length_check_counts_a_class_to_its_last_line():
    body = "\n".join(f"    x{i} = {i}" for i in range(9))
    src = f"@dataclass\nclass A:\n{body}\n\nclass B:\n    class C:\n{body.replace('    ', '        ')}\n"
    assert long_classes(src, "t.py", 10) == ["t.py:2 A (11 lines)", "t.py:13 B (11 lines)"]
    assert long_classes(src, "t.py", 11) == []
    assert long_classes(src, "t.py", 9) == ["t.py:2 A (11 lines)", "t.py:13 B (11 lines)", "t.py:14 C (10 lines)"]


def test_no_class_is_longer_than_the_limit():
    bad = [c for mod, path in sorted(_modules().items()) for c in long_classes(path.read_text(), mod)]
    assert not bad, f"classes over {MAX_CLASS_LINES} lines (split them along their topics into mixins):\n" + "\n".join(bad)


def test_ruff_passes():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]' installs it)")
    r = subprocess.run(
        [ruff, "check", "--output-format", "concise", str(ROOT)], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format_clean():
    """The tree is formatted as pyproject's [tool.ruff.format] says (``ruff format .`` fixes it)."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]' installs it)")
    r = subprocess.run([ruff, "format", "--check", str(ROOT)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, "run `ruff format .`:\n" + r.stdout + r.stderr
