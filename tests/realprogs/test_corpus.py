"""Large C programs nobody here wrote, built from public source at test time for aarch64 static
(tests/realprogs/sources.py), recompiled, and run on their own tests against qemu-aarch64:
SQLite 3.50.4's shell (``sqlite3``), QuickJS 2025-04-26 (``qjs``) and Brotli 1.2.1 (``brotli``).
Inputs are in tests/realprogs/corpus_cases.py (what each program's own suite is and what of it
runs here).

Each case runs recompiled and under qemu, each in a fresh folder holding the same inputs; stdout,
stderr, exit status and every file the run leaves in its folder must be identical.  The
recompiled run has the run-time lifter on (the default), so code the static analysis missed
would still run -- but each such lift prints a notice on stderr, and the count of those notices
must be 0 (issue 29: the analysis finds all code of these programs).  The module prints a table:
program, cases, identical, run-time lifts.

CI runs a slice: Brotli (build ~20 s, cold recompile 39 CPU seconds): its compatibility test
of the whole corpus, one round trip and a truncated stream.  QuickJS (host qjsc + aarch64 qjs
builds, 106 CPU seconds of cold recompile), SQLite (325 CPU seconds) and Brotli's other round
trips are ``heavy``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.realprogs import corpus_cases as C
from tests.realprogs import qemu_compare, results_table, sources
from tests.realprogs.conftest import bundle, program

pytestmark = pytest.mark.network
RESULTS: dict[str, list[int]] = {}  # program -> [cases run, identical, run-time lifts]


@pytest.fixture(scope="module", autouse=True)
def table(request):
    yield
    results_table.write(request, RESULTS)


def compare(
    prog: str, bundle_dir: Path, tmp: Path, argv: list[str], inputs: dict[str, Path | str], stdin: bytes = b"", timeout: int = 900
) -> subprocess.CompletedProcess:
    """``qemu_compare.compare`` of ``prog``, counted in its row of the table."""
    row = RESULTS.setdefault(prog, [0, 0, 0])
    return qemu_compare.compare(row, program(prog), bundle_dir, tmp, argv, inputs, stdin=stdin, timeout=timeout)


def _tree(name: str) -> Path:
    try:
        return sources.fetch(name)
    except sources.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: registry unreachable, cannot fetch the sources of {name}: {e}")


# ---------------------------------------------------------------- QuickJS


@pytest.fixture(scope="module")
def qjs(tmp_path_factory) -> Path:
    return bundle("qjs", tmp_path_factory)


def _qjs_params():
    for name, argv, ci in C.QJS_TESTS:
        marks = [] if ci else [pytest.mark.heavy]
        if name in C.QJS_XFAIL:
            marks.append(pytest.mark.xfail(reason=C.QJS_XFAIL[name], strict=True))
        yield pytest.param(argv, id=name, marks=marks)


@pytest.mark.parametrize("argv", list(_qjs_params()))
def test_quickjs_own_test_matches_qemu(qjs, tmp_path, argv):
    tests = _tree("quickjs") / "tests"
    inputs = {f"tests/{p.name}": p for p in tests.glob("*.js")}
    r = compare("qjs", qjs, tmp_path, ["qjs", *argv], inputs)
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.heavy
def test_quickjs_error_exit_matches_qemu(qjs, tmp_path):
    r = compare(
        "qjs",
        qjs,
        tmp_path,
        ["qjs", "bad.js"],
        {"bad.js": "function f(n) { return n ? f(n - 1) : undefined.x; }\nconsole.log('before');\nf(3);\n"},
    )
    assert r.returncode == 1 and b"TypeError" in r.stderr


# ---------------------------------------------------------------- Brotli


@pytest.fixture(scope="module")
def brotli(tmp_path_factory) -> Path:
    return bundle("brotli", tmp_path_factory)


def _compressed() -> list[str]:
    """The compatibility test's inputs (listed from the pinned sdist; fetching it here is cached)."""
    try:
        data = sources.fetch("brotli") / "tests" / "testdata"
    except sources.RegistryUnreachable:
        return ["unreachable"]
    return sorted(p.name for p in data.iterdir() if ".compressed" in p.name)


def test_brotli_compatibility_matches_qemu_and_the_originals(brotli, tmp_path):
    """Upstream's compatibility test: every ``*.compressed*`` file of the corpus decompresses
    (``brotli -dc``, one file a run: the program writes one file to stdout) to the file named
    before ``.compressed``."""
    data = _tree("brotli") / "tests" / "testdata"
    names = _compressed()
    for n in names:
        r = compare("brotli", brotli, tmp_path / n, ["brotli", "-dc", n], {n: data / n})
        assert r.returncode == 0 and r.stdout == (data / n.split(".compressed")[0]).read_bytes(), (n, r.stderr)
    assert len(names) == 45  # the sdist's corpus


def _roundtrip_params():
    for rel in C.BROTLI_ROUNDTRIP_INPUTS:
        for q in C.BROTLI_QUALITIES:
            ci = rel.endswith("alice29.txt") and q == 6
            yield pytest.param(rel, q, id=f"{rel.rsplit('/', 1)[1]}-q{q}", marks=[] if ci else [pytest.mark.heavy])


@pytest.mark.parametrize("rel,quality", list(_roundtrip_params()))
def test_brotli_roundtrip_matches_qemu(brotli, tmp_path, rel, quality):
    """Upstream's roundtrip test: to a file (``-fq Q in -o out``, ``out -fdo back``) and through a
    pipe (``-cq Q``, ``-cd``); the data comes back, and every step matches qemu."""
    src = _tree("brotli") / rel
    name = src.name
    compare("brotli", brotli, tmp_path / "file", ["brotli", "-fq", str(quality), name, "-o", f"{name}.br"], {name: src})
    comp = (tmp_path / "file" / "ours" / f"{name}.br").read_bytes()
    back = compare(
        "brotli",
        brotli,
        tmp_path / "back",
        ["brotli", f"{name}.br", "-fdo", f"{name}.unbr"],
        {f"{name}.br": tmp_path / "file" / "ours" / f"{name}.br"},
    )
    assert back.returncode == 0 and (tmp_path / "back" / "ours" / f"{name}.unbr").read_bytes() == src.read_bytes()
    piped = compare("brotli", brotli, tmp_path / "pipe", ["brotli", "-cq", str(quality)], {}, stdin=src.read_bytes()).stdout
    assert len(comp) < src.stat().st_size or src.stat().st_size < 64
    out = compare("brotli", brotli, tmp_path / "unpipe", ["brotli", "-cd"], {}, stdin=piped).stdout
    assert out == src.read_bytes()


def test_brotli_corrupt_input_fails_like_qemu(brotli, tmp_path):
    data = (_tree("brotli") / "tests" / "testdata" / "alice29.txt.compressed").read_bytes()
    r = compare("brotli", brotli, tmp_path, ["brotli", "-cd"], {}, stdin=data[: len(data) // 3])  # truncated
    assert r.returncode == 1 and r.stderr


# ---------------------------------------------------------------- SQLite


@pytest.fixture(scope="module")
def sqlite3(tmp_path_factory) -> Path:
    return bundle("sqlite3", tmp_path_factory)


@pytest.mark.heavy
@pytest.mark.parametrize("script", [pytest.param(s, id=n) for n, s, _ci in C.SQL_CASES])
def test_sqlite_script_matches_qemu(sqlite3, tmp_path, script):
    compare("sqlite3", sqlite3, tmp_path, ["sqlite3"], dict(C.SQL_FILES), stdin=script.encode())


@pytest.mark.heavy
def test_sqlite_workload_matches_qemu(sqlite3, tmp_path):
    r = compare(
        "sqlite3", sqlite3, tmp_path, ["sqlite3", "w.db"], {}, stdin=C.SQL_WORKLOAD.format(rows=200_000).encode(), timeout=3000
    )
    assert r.returncode == 0 and r.stdout.count(b"\n") > 20
