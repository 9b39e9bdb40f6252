"""C++ programs nobody here wrote, built from public source at test time (tests/realprogs/
sources.py: Debian 13's ``libjsoncpp`` 1.9.6 and ``tinyxml2`` 11.0.0) with zig's clang++ for
aarch64 static (libc++, libc++abi, libunwind: exceptions, RTTI, virtual calls, templates,
static constructors) at -O0, -O2 and -O3, recompiled, and run on their own tests against
qemu-aarch64:

- JsonCpp's unit-test runner ``jsoncpp_test`` (src/test_lib_json: its own framework; many of
  its 121 tests throw and catch ``Json::LogicError``/``RuntimeError``, e.g. a ``Value`` asked
  for the wrong type, a ``CharReader`` over bad input with ``failIfExtra``);
- JsonCpp's ``jsontestrunner`` over upstream's ``test/data/*.json`` with each writer the CMake
  build tests (``runjsontests.py``'s options: ``--parse-only`` for the ``fail*`` inputs,
  ``--strict`` for ``*_strict_*``, ``--json-writer``), and over ``test/jsonchecker`` (strict,
  parse only, without the inputs upstream lists as known to differ);
- TinyXML-2's ``xmltest`` over its ``resources/`` (its one line with a measured time masked);
- our own exception probe (src/eh_probe.cpp: throw across frames, rethrow, catch(...),
  destructors while unwinding, handlers that read values kept across the throwing call).

Each case runs recompiled and under qemu-aarch64 in fresh folders holding the same inputs:
stdout, stderr, exit status and the files left behind must be identical, with 0 run-time lifts
(the landing pads are labels of their functions: analysis.eh_frame.landing_pads).  The module
prints a table: program, cases, identical, run-time lifts.

CI runs the probe, ``xmltest`` and ``jsontestrunner`` (StyledWriter over test/data) at -O2;
the other optimisation levels, writers and ``jsoncpp_test`` are ``heavy``.  (zig 0.17.1's clang++
driver gives byte-identical programs at -O2 and -O3 here, so the -O3 cases cost no recompile:
their bundles come from the object cache; -O0 links zig's Debug build of libc++.)"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.realprogs import qemu_compare, results_table, sources
from tests.realprogs.conftest import bundle, program

pytestmark = pytest.mark.network
RESULTS: dict[str, list[int]] = {}  # "program -O<n>" -> [cases run, identical, run-time lifts]
# xmltest's one measured line ("Parsing dream.xml (...): 0.123 milli-seconds")
XMLTEST_TIME = re.compile(rb"(Parsing dream\.xml \([^)]*\): )[0-9.]+( milli-seconds)")
WRITERS = ("StyledWriter", "StyledStreamWriter", "BuiltStyledStreamWriter")  # test/CMakeLists.txt
# runjsontests.py: jsonchecker inputs JsonCpp accepts on purpose (trailing commas, ...)
JSONCHECKER_KNOWN = {f"fail{n}.json" for n in (4, 9, 7, 8, 10, 13, 18, 25, 27)}


@pytest.fixture(scope="module", autouse=True)
def table(request):
    yield
    results_table.write(request, RESULTS)


def compare(
    prog: str,
    opt: str,
    bundle_dir: Path,
    tmp: Path,
    argv: list[str],
    inputs: dict[str, Path | str],
    mask: re.Pattern | None = None,
    timeout: int = 900,
) -> subprocess.CompletedProcess:
    """``qemu_compare.compare`` of ``prog`` at ``-O<opt>``, counted in its row of the table."""
    row = RESULTS.setdefault(f"{prog} -O{opt}", [0, 0, 0])
    return qemu_compare.compare(row, program(prog, opt), bundle_dir, tmp, argv, inputs, mask=mask, timeout=timeout)


def _tree(name: str) -> Path:
    try:
        return sources.fetch(name)
    except sources.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: registry unreachable, cannot fetch the sources of {name}: {e}")


_BUNDLES: dict[tuple[str, str], Path] = {}


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """(program, opt) -> its recompiled bundle, made on first use (shared by xdist workers)."""

    def get(name: str, opt: str) -> Path:
        if (name, opt) not in _BUNDLES:
            _BUNDLES[name, opt] = bundle(name, tmp_path_factory, opt)
        return _BUNDLES[name, opt]

    return get


def _opts(ci: str | None = "2"):
    return [pytest.param(o, id=f"O{o}", marks=[] if o == ci else [pytest.mark.heavy]) for o in sources.OPTS]


# ---------------------------------------------------------------- our probe


@pytest.mark.parametrize("opt", _opts())
def test_eh_probe_matches_qemu(bundles, tmp_path, opt):
    r = compare("eh_probe", opt, bundles("eh_probe", opt), tmp_path, ["eh_probe"], {})
    out = r.stdout.decode()
    assert r.returncode == 0 and "rethrow" in out and "caught int 42" in out and out.endswith("any\n"), out[-500:]


# ---------------------------------------------------------------- TinyXML-2


@pytest.mark.parametrize("opt", _opts())
def test_tinyxml2_xmltest_matches_qemu(bundles, tmp_path, opt):
    res = _tree("tinyxml2") / "resources"
    inputs = {f"resources/{p.name}": p for p in res.iterdir() if p.is_file()}
    inputs["resources/out/readme.txt"] = res / "out" / "readme.txt"
    r = compare("xmltest", opt, bundles("xmltest", opt), tmp_path, ["xmltest"], inputs, mask=XMLTEST_TIME)
    tail = r.stdout.decode(errors="replace")[-300:]
    assert r.returncode == 0 and re.search(r"Pass \d+, Fail 0", tail), tail


# ---------------------------------------------------------------- JsonCpp


@pytest.mark.heavy
@pytest.mark.parametrize("opt", _opts(None))
def test_jsoncpp_unit_tests_match_qemu(bundles, tmp_path, opt):
    r = compare("jsoncpp_test", opt, bundles("jsoncpp_test", opt), tmp_path, ["jsoncpp_test"], {})
    assert r.returncode == 0 and re.search(rb"All \d+ tests passed", r.stdout), r.stdout[-500:]


def _runner_params():
    for o in sources.OPTS:
        for w in (*WRITERS, "jsonchecker"):
            ci = o == "2" and w == "StyledWriter"
            yield pytest.param(o, w, id=f"O{o}-{w}", marks=[] if ci else [pytest.mark.heavy])


@pytest.mark.parametrize("opt,writer", list(_runner_params()))
def test_jsontestrunner_matches_qemu(bundles, tmp_path, opt, writer):
    """runjsontests.py's runs: each input, one run (the runner writes ``<input>.actual`` and
    ``.actual-rewrite`` beside it); a ``fail*`` input must fail to parse, any other parse."""
    test = _tree("jsoncpp") / "test"
    b = bundles("jsontestrunner", opt)
    if writer == "jsonchecker":
        inputs = sorted(p for p in (test / "jsonchecker").glob("*.json") if p.name not in JSONCHECKER_KNOWN)
    else:
        inputs = sorted((test / "data").glob("*.json"))
    assert len(inputs) >= 25, inputs
    for p in inputs:
        checker = writer == "jsonchecker"
        fail = p.name.startswith("fail")
        opts = (["--parse-only"] if checker or fail else []) + (["--strict"] if checker or "_strict_" in p.name else [])
        opts += ["--json-writer", "StyledWriter" if checker else writer]
        r = compare("jsontestrunner", opt, b, tmp_path / p.stem, ["jsontestrunner", *opts, p.name], {p.name: p})
        assert (r.returncode != 0) == fail, (p.name, r.returncode, r.stdout[-300:], r.stderr[-300:])
        if not fail and not checker:
            got = (tmp_path / p.stem / "ours" / (p.stem + ".actual")).read_text()
            assert got.split() == p.with_suffix(".expected").read_text().split(), p.name
