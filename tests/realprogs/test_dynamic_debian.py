"""Debian 12 arm64 *dynamically linked* programs nobody here wrote, with glibc's own ld.so in the
loop: each program is recompiled with its interpreter and its DT_NEEDED closure from the
packages it Depends on (``nxrecomp recompile -L``), and run recompiled and under
``qemu-aarch64 -L SYSROOT`` (the same packages unpacked into one folder) with identical stdout,
stderr and exit status.  A run-time lift would print a notice on stderr (so stderr would differ
from qemu's); the module prints the table: program, cases, identical, run-time lifts.

Programs: ~18 coreutils programs, grep, sed, gawk (libmpfr, libgmp, libreadline, libsigsegv),
jq (libjq, libonig), bc.  CI runs ``cat`` (libc only), the Python runner and the bad-input
cases; the rest is ``heavy``.  Bad input: a library missing from the sysroot, a library file
that is not the one lifted, a PROT_EXEC mapping of a file the bundle did not lift — each a
clear error naming the file."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realprogs import results_table
from tests.shared_tmp import run_dir

pytestmark = pytest.mark.network
ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": "/nonexistent"}
RESULTS: dict[str, list[int]] = {}  # program -> [cases run, identical, run-time lifts]
LIBC = ["libc6"]
COREUTILS = ["coreutils", *LIBC, "libacl1", "libattr1", "libgmp10", "libselinux1", "libpcre2-8-0"]

TEXT = "".join(f"line {i} {'abcdefghij'[i % 10] * (i % 7)} {i * 7919 % 1000}\n" for i in range(200))
WORDS = "pear\napple\nfig\nbanana\napple\ncherry\nfig\nkiwi\n"
BINARY = bytes(range(256)) * 4
AWK_DATA = "alpha 3 x1\nbeta 10 y22\ngamma -4 z333\ndelta 7.5 w4\nalpha 2 v55\n"
# a JSON document for jq: Debian packages this module unpacks, their versions and dependencies
PKG_JSON = json.dumps(
    [
        {"name": "jq", "version": "1.6-2.1", "deps": ["libjq1", "libc6"], "essential": False, "size": 70.5},
        {"name": "libjq1", "version": "1.6-2.1", "deps": ["libonig5", "libc6"], "essential": False, "size": 398},
        {"name": "libonig5", "version": "6.9.8-1", "deps": ["libc6"], "essential": False, "size": 631},
        {
            "name": "gawk",
            "version": "1:5.2.1-2",
            "deps": ["libc6", "libgmp10", "libmpfr6", "libreadline8", "libsigsegv2"],
            "essential": False,
            "size": 2812,
        },
        {"name": "sed", "version": "4.9-1", "deps": ["libacl1", "libc6", "libselinux1"], "essential": True, "size": 883},
        {"name": "bc", "version": "1.07.1-3", "deps": ["libc6", "libreadline8"], "essential": False, "size": 228, "note": None},
        {"name": "libc6", "version": "2.36-9+deb12u4", "deps": [], "essential": False, "size": 12987.25},
    ],
    indent=1,
)

# program: (package, path in the package, packages its libraries come from, [(argv, stdin, files)], CI ids)
CASES: dict[str, list[tuple[str, list[str], bytes, dict]]] = {
    "cat": [
        ("file", ["cat", "a.txt"], b"", {"a.txt": TEXT}),
        ("numbered", ["cat", "-n", "-A", "a.txt", "-", "b.txt"], b"from stdin\n\tTAB\n", {"a.txt": "x\ty\n", "b.txt": WORDS}),
        ("missing", ["cat", "nope.txt"], b"", {}),
    ],
    "tr": [
        ("upper", ["tr", "a-z", "A-Z"], TEXT.encode(), {}),
        ("delete-squeeze", ["tr", "-s", "-d", "0-9", "a-e"], TEXT.encode(), {}),
        ("classes", ["tr", "[:lower:]", "[:upper:]"], b"Hello, World 123\n", {}),
    ],
    "sort": [
        ("plain", ["sort", "w.txt"], b"", {"w.txt": WORDS}),
        ("numeric-reverse-unique", ["sort", "-n", "-r", "-u", "-k3", "a.txt"], b"", {"a.txt": TEXT}),
        ("key-sep", ["sort", "-t", " ", "-k2,2", "-s", "a.txt"], b"", {"a.txt": TEXT}),
    ],
    "seq": [("range", ["seq", "1", "3", "40"], b"", {}), ("float-fmt", ["seq", "-w", "-s", ",", "0.5", "0.25", "3"], b"", {})],
    "expr": [
        ("arith", ["expr", "12345678901234567890", "*", "98765432109876543210"], b"", {}),
        ("match", ["expr", "abcdef123", ":", "[a-z]*\\([0-9]*\\)"], b"", {}),
        ("false", ["expr", "3", "<", "2"], b"", {}),
    ],
    "wc": [
        ("all", ["wc", "a.txt", "w.txt"], b"", {"a.txt": TEXT, "w.txt": WORDS}),
        ("stdin", ["wc", "-lwmc"], TEXT.encode(), {}),
    ],
    "od": [
        ("hex", ["od", "-A", "x", "-t", "x1z", "b.bin"], b"", {"b.bin": BINARY}),
        ("oct", ["od", "-c", "a.txt"], b"", {"a.txt": WORDS}),
    ],
    "base64": [
        ("encode", ["base64", "b.bin"], b"", {"b.bin": BINARY}),
        ("decode", ["base64", "-d"], b"aGVsbG8sIHdvcmxkIQo=\n", {}),
    ],
    "sha256sum": [("files", ["sha256sum", "a.txt", "b.bin"], b"", {"a.txt": TEXT, "b.bin": BINARY})],
    "md5sum": [("stdin", ["md5sum"], TEXT.encode(), {})],
    "head": [("lines", ["head", "-n", "7", "a.txt"], b"", {"a.txt": TEXT}), ("bytes", ["head", "-c", "33"], TEXT.encode(), {})],
    "tail": [("lines", ["tail", "-n", "5", "a.txt"], b"", {"a.txt": TEXT})],
    "cut": [("fields", ["cut", "-d", " ", "-f", "1,3"], TEXT.encode(), {})],
    "uniq": [("count", ["uniq", "-c"], b"a\na\nb\nc\nc\nc\n", {})],
    "factor": [("numbers", ["factor", "1234567890", "999999999989", "18446744073709551617"], b"", {})],
    "printf": [("formats", ["printf", "%5d|%-6s|%x|%o|%e|%q\\n", "42", "ab", "255", "8", "3.25", "a b"], b"", {})],
    "nl": [("number", ["nl", "-ba", "w.txt"], b"", {"w.txt": WORDS})],
    "tac": [("reverse", ["tac", "w.txt"], b"", {"w.txt": WORDS})],
    # grep (libpcre2), sed (libacl, libselinux), gawk (libmpfr, libgmp, libreadline, libsigsegv, libm)
    "grep": [
        ("basic", ["grep", "-n", "line 1[0-9]", "a.txt"], b"", {"a.txt": TEXT}),
        ("extended-count", ["grep", "-E", "-c", "(apple|fig)$", "w.txt"], b"", {"w.txt": WORDS}),
        # (grep -P runs pcre2's JIT code, lifted at run time and named on stderr:
        # tests/realprogs/test_generated_code_debian.py compares it with qemu)
        ("no-match", ["grep", "-q", "zebra", "w.txt"], b"", {"w.txt": WORDS}),
    ],
    "sed": [
        ("substitute", ["sed", "-e", "s/line \\([0-9]*\\)/L<\\1>/", "-e", "/7/d", "a.txt"], b"", {"a.txt": TEXT}),
        ("script", ["sed", "-n", "-E", "/^(a|f)/{s/(.)/[\\1]/g;p}"], WORDS.encode(), {}),
    ],
    "gawk": [
        (
            "sum",
            ["gawk", '{ s += $3; n[$3 % 7]++ } END { printf "%d %.3f\\n", s, s / NR; for (k in n) c++; print c }', "a.txt"],
            b"",
            {"a.txt": TEXT},
        ),
        ("bignum", ["gawk", "-M", "BEGIN { print 2^200; print 3**-2 }"], b"", {}),
        # -M's printf formats through libmpfr's mpfr_vasnprintf_aux, whose format switch lost its
        # table where words of libm's .eh_frame decoded as BLs into it (analysis.image: code is
        # the sections of code, not every byte of an executable segment)
        (
            "mpfr-printf",
            [
                "gawk",
                "-M",
                "-v",
                "PREC=120",
                'BEGIN { x = 2^200 + 1; printf "%d|%x|%o|%.5e|%G\\n", x, x, 12345678901234567890, x, 1/7; printf "%.40f|%20.10f|%-12.3e|%+g\\n", 1/3, atan2(0, -1), exp(10), -0.000012345; print 3**-2, int(-7.5), -7 % 3, 2^0.5; y = 1; for (i = 1; i <= 30; i++) y *= i; print y, length(y); printf "%s %i %c\\n", y / 7, 100000000000000000000 / 3, 65 }',
            ],
            b"",
            {},
        ),
        (
            "printf",
            [
                "gawk",
                'BEGIN { printf "[%5d][%-5d][%05.1f][%x][%o][%e][%g][%c][%10.3s][%%]\\n", 42, 42, 3.14159, 255, 8, 12345.678, 0.0001234, "hello", "abcdef"; printf "%*d|%-*s|\\n", 6, 7, 4, "ab"; printf "%i %u %E %G\\n", -3, 3, 1e10, 1e-10 }',
            ],
            b"",
            {},
        ),
        (
            "regex",
            [
                "gawk",
                '/^(al|ga)/ { n++; sub(/[0-9]+$/, "<&>", $3); print NR": "$0 } $2 ~ /^-?[0-9]+$/ { s += $2 } END { print n, s; x = "foo.bar.baz"; gsub(/\\./, "/", x); print x; print match("xxabcabc", /(abc)+/), RSTART, RLENGTH; split("a1b22c333", p, /[0-9]+/); print p[1] p[2] p[3]; print gensub(/([a-z])([0-9]+)/, "\\\\2\\\\1", "g", "a1b22c333") }',
                "d.txt",
            ],
            b"",
            {"d.txt": AWK_DATA},
        ),
        (
            "arrays",
            [
                "gawk",
                '{ c[$1]++; t[$1] += $2 } END { n = asorti(c, k); for (i = 1; i <= n; i++) printf "%s %d %.2f\\n", k[i], c[k[i]], t[k[i]]; delete c["alpha"]; print length(c), ("beta" in c), ("alpha" in c); m[1,2] = 3; for (kk in m) { split(kk, q, SUBSEP); print q[1], q[2], m[kk] } PROCINFO["sorted_in"] = "@val_num_desc"; for (w in t) print w, t[w] }',
                "d.txt",
            ],
            b"",
            {"d.txt": AWK_DATA},
        ),
        (
            "getline",
            [
                "gawk",
                'BEGIN { while ((getline line < "d.txt") > 0) { n++; last = line } close("d.txt"); print n, last; getline; print "main:", $0, NR; getline x; print "var:", x, NR; print (getline line < "nope.txt") } { print FNR": "$1 } END { print NR }',
                "d.txt",
            ],
            b"",
            {"d.txt": AWK_DATA},
        ),
        (
            "user-functions",
            [
                "gawk",
                'function fib(n) { return n < 2 ? n : fib(n-1) + fib(n-2) } function rev(s,   r, i) { for (i = length(s); i > 0; i--) r = r substr(s, i, 1); return r } function fill(a, n,   i) { for (i = 1; i <= n; i++) a[i] = i * i } BEGIN { print fib(20), rev("recompiler"); fill(sq, 5); for (i = 1; i <= 5; i++) s = s sq[i] " "; print s; print toupper(substr("gawk", 2)), tolower("MiXeD"), sprintf("%s-%d", "x", 7); print strftime("%Y-%m-%d %H", 86400 * 365, 1); print and(12, 10), or(12, 10), xor(12, 10), lshift(1, 10), rshift(1024, 3); f = "rev"; print @f("indirect") }',
            ],
            b"",
            {},
        ),
        (
            "float-edges",
            [
                "gawk",
                "BEGIN { x = 1e300 * 1e10; print x, -x, log(-1) == log(-1), 0.1 + 0.2, 1e16 + 1, 2^53 + 1, int(2^31) * 4, 17 / 4, sqrt(16), srand(5), srand(), cos(0) }",
            ],
            b"",
            {},
        ),
        (
            "functions",
            [
                "gawk",
                'BEGIN { x = sprintf("%08.3e|%s|%c", 12345.678, toupper("abc"), 65); print x, length(x), substr(x, 3, 4), index(x, "|"); n = split("a:b:c", t, ":"); print n, t[3]; print sin(1), exp(2), int(-3.7) }',
            ],
            b"",
            {},
        ),
    ],
    # more libraries: jq (libjq, libonig), bc (libreadline, libtinfo)
    "jq": [
        (
            "filter",
            ["jq", "-c", "[.[] | select(.n > 1) | {k: .name, sq: (.n * .n)}] | sort_by(.sq)"],
            b'[{"name":"a","n":3},{"name":"b","n":1},{"name":"c","n":2}]',
            {},
        ),
        ("regex", ["jq", "-r", '.[] | test("^a.*e$") , (sub("(?<x>[aeiou])"; "<\\(.x)>"))'], b'["apple","fig","axe"]', {}),
        ("error", ["jq", ".a.b"], b"[1]", {}),
        # oniguruma's matcher (match_at) dispatches by computed gotos whose targets are lifted
        # as functions of their own: a jump between them is no tail call (test_tail_jumps.py)
        (
            "regex-captures",
            ["jq", "-c", '[.[] | [scan("[a-z]+")], capture("(?<a>[a-z])(?<b>[a-z]+)"), gsub("[aeiou]"; "_"), test("FIG"; "i")]'],
            b'["apple pie","Fig tree","axe"]',
            {},
        ),
        # the parser of jq's own builtins runs at every start (yyparse, split into 11 lifted
        # functions: tests/recompiler/test_false_entry_spills.py)
        ("null-input", ["jq", "-n", "1"], b"", {}),
        (
            "group-reduce",
            ["jq", "-c", "group_by(.deps | length) | map({n: (.[0].deps | length), names: map(.name)})", "p.json"],
            b"",
            {"p.json": PKG_JSON},
        ),
        (
            "paths-csv",
            [
                "jq",
                "-r",
                '([paths(type == "string") | map(tostring) | join(".")] | .[:6][]), (.[] | [.name, .size, (.deps | join("+"))] | @csv)',
                "p.json",
            ],
            b"",
            {"p.json": PKG_JSON},
        ),
        (
            "reduce-stream",
            [
                "jq",
                "-c",
                "--slurp",
                "reduce (.[] | .[] | .deps[]) as $d ({}; .[$d] += 1) | to_entries | sort_by(-.value, .key) | .[:5], ([tostream] | length)",
            ],
            PKG_JSON.encode() + b"\n" + PKG_JSON.encode(),
            {},
        ),
        (
            "args-format",
            [
                "jq",
                "-n",
                "-r",
                "--arg",
                "w",
                "wörld",
                "--argjson",
                "k",
                '{"a":[1,2.5,null]}',
                '"\\($w) \\($k.a | @json) \\($k | @base64)" , ($k.a | map(. // 0) | add) , (now | type)',
            ],
            b"",
            {},
        ),
    ],
    "bc": [("math", ["bc", "-l"], b"scale=30\n4*a(1)\n2^100\nsqrt(2)\ne(1)\n", {})],
}
# CI runs cat only (libc and ld.so): a cold build of libgmp (expr) took an hour of one shard's
# compile at load 20 in session 32, libonig/libjq (jq) were never built cold inside CI's time.
CI = {("cat", "file"), ("cat", "missing")}
PACKAGES = {name: ("coreutils", f"usr/bin/{name}", COREUTILS) for name in CASES}
for _n in ("cat", "echo"):
    PACKAGES[_n] = ("coreutils", f"bin/{_n}", COREUTILS)
PACKAGES["grep"] = ("grep", "bin/grep", ["grep", *LIBC, "libpcre2-8-0"])
PACKAGES["sed"] = ("sed", "bin/sed", ["sed", *LIBC, "libacl1", "libselinux1", "libpcre2-8-0"])
PACKAGES["gawk"] = ("gawk", "usr/bin/gawk", ["gawk", *LIBC, "libsigsegv2", "libreadline8", "libtinfo6", "libmpfr6", "libgmp10"])
PACKAGES["jq"] = ("jq", "usr/bin/jq", ["jq", *LIBC, "libjq1", "libonig5"])
PACKAGES["bc"] = ("bc", "usr/bin/bc", ["bc", *LIBC, "libreadline8", "libtinfo6"])


def _fetch(package: str) -> Path:
    from nxrecomp.common import debian

    try:
        return debian.fetch(package, "arm64")
    except debian.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: Debian mirror unreachable, cannot fetch {package}:arm64: {e}")


def sysroot(packages: list[str], tmp_path_factory) -> tuple[list[Path], Path]:
    """(the packages' unpacked folders, one folder holding all of them: qemu-aarch64's -L)."""
    roots = [_fetch(p) for p in packages]
    top = run_dir(tmp_path_factory) / ("sysroot-" + "-".join(sorted(packages)))
    with open(str(top) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (top / ".done").exists():
            shutil.rmtree(top, ignore_errors=True)
            for r in roots:
                shutil.copytree(r, top, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".unpacked"))
            (top / ".done").write_text("")
    return roots, top


def bundle(name: str, tmp_path_factory) -> tuple[Path, Path, Path]:
    """(the program, its bundle, the qemu sysroot): the program recompiled once per test run."""
    package, rel, packages = PACKAGES[name]
    roots, top = sysroot(packages, tmp_path_factory)
    binary = roots[0] / rel
    out = run_dir(tmp_path_factory) / f"dyn-{name}-bundle"
    with open(str(out) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "manifest.json").exists():
            libs = [a for r in roots[1:] for a in ("-L", str(r))]
            r = subprocess.run(
                [sys.executable, "-m", "nxrecomp", "recompile", str(binary), "-o", str(out), *libs],
                capture_output=True,
                text=True,
                timeout=5400,
            )
            assert r.returncode == 0, r.stderr[-3000:]
    return binary, out, top


@pytest.fixture(scope="module", autouse=True)
def table(request):
    yield
    results_table.write(request, RESULTS)


def run_both(binary: Path, bundle_dir: Path, top: Path, tmp: Path, argv: list[str], stdin: bytes, files: dict, extra=None):
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    runs = []
    for who in ("ours", "qemu"):
        d = tmp / who
        d.mkdir(parents=True, exist_ok=True)
        for fname, data in files.items():
            (d / fname).write_bytes(data if isinstance(data, bytes) else data.encode())
        cmd = (
            [sys.executable, "-m", "nxrecomp", "exec", str(bundle_dir), "--", *argv]
            if who == "ours"
            else ["qemu-aarch64", "-L", str(top), "-0", argv[0], str(binary), *argv[1:]]
        )
        env = {**ENV, **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ and who == "ours" else {})}
        if who == "ours":
            env.update(extra or {})
        runs.append(subprocess.run(cmd, input=stdin, capture_output=True, cwd=d, env=env, timeout=600))
    return runs


# faults found and not yet fixed (docs/realprogs.md, "Dynamic programs: where they stand")
KNOWN_FAULTS: dict[tuple[str, str], str] = {}


def _params():
    for name, cases in CASES.items():
        for cid, argv, stdin, files in cases:
            marks = [] if (name, cid) in CI else [pytest.mark.heavy]
            if (name, cid) in KNOWN_FAULTS:
                marks.append(pytest.mark.xfail(reason=KNOWN_FAULTS[name, cid], strict=True))
            yield pytest.param(name, argv, stdin, files, marks=marks, id=f"{name}-{cid}")


@pytest.mark.parametrize("name,argv,stdin,files", list(_params()))
def test_dynamic_program_matches_qemu(tmp_path_factory, tmp_path, name, argv, stdin, files) -> None:
    binary, b, top = bundle(name, tmp_path_factory)
    ours, ref = run_both(binary, b, top, tmp_path, argv, stdin, files)
    row = RESULTS.setdefault(name, [0, 0, 0])
    row[0] += 1
    row[2] += len(results_table.LIFT_NOTICE.findall(ours.stderr))
    why = f"{argv}: ours exit {ours.returncode} stderr {ours.stderr[-1500:]!r}; qemu exit {ref.returncode} stderr {ref.stderr[-300:]!r}"
    assert (ours.returncode, ours.stderr) == (ref.returncode, ref.stderr), why
    assert ours.stdout == ref.stdout, f"{argv}: stdout ours {ours.stdout[-600:]!r}\nqemu {ref.stdout[-600:]!r}"
    row[1] += 1


def test_python_runner_matches_qemu(tmp_path_factory, tmp_path) -> None:
    """The Python runner (no native launcher) starts a dynamic program the same way."""
    binary, b, top = bundle("cat", tmp_path_factory)
    argv, stdin, files = ["cat", "-n", "a.txt", "-"], b"stdin line\n", {"a.txt": WORDS}
    ours, ref = run_both(binary, b, top, tmp_path, argv, stdin, files, {"NXRECOMP_CPU_HOST_NATIVE_LAUNCHER": "0"})
    assert (ours.returncode, ours.stderr, ours.stdout) == (ref.returncode, ref.stderr, ref.stdout), ours.stderr[-1500:]


# ---- bad input: each a clear error naming the file ----------------------------------------


def test_tls_descriptors_of_a_dynamic_program_are_left_to_ld_so() -> None:
    """libselinux (sed's closure) has R_AARCH64_TLSDESC relocations: glibc's ld.so fills each
    descriptor when it relocates the module, so linking for the recompiler writes nothing there
    (it stopped sed's recompile with "unsupported relocation type 1031")."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.relocation import RelocationSection

    from recompiler.link import link_program

    roots = [_fetch(p) for p in PACKAGES["sed"][2]]
    lib = next(r for r in roots if "libselinux" in r.name) / "lib/aarch64-linux-gnu/libselinux.so.1"
    with open(lib, "rb") as f:
        elf = ELFFile(f)
        slots = [
            r["r_offset"]
            for sec in elf.iter_sections()
            if isinstance(sec, RelocationSection)
            for r in sec.iter_relocations()
            if r["r_info_type"] == 1031
        ]
        file_words = {o: _file_word(elf, o) for o in slots}
    assert slots, "libselinux has no TLSDESC relocation any more: this test needs another library"
    image = link_program(roots[0] / "bin/sed", roots[1:])
    base = next(m.base for m in image.modules if m.name == "libselinux.so.1")
    for o, word in file_words.items():
        assert _image_word(image, base + o) == word, f"TLSDESC slot {o:#x} written at link time"


def _file_word(elf, vaddr: int) -> bytes:
    for seg in elf.iter_segments():
        if seg["p_type"] == "PT_LOAD" and seg["p_vaddr"] <= vaddr < seg["p_vaddr"] + seg["p_memsz"]:
            data = seg.data()
            off = vaddr - seg["p_vaddr"]
            return (data[off : off + 16] + bytes(16))[:16]
    raise AssertionError(f"{vaddr:#x} in no PT_LOAD")


def _image_word(image, addr: int) -> bytes:
    for seg in image.segments:
        if seg.vaddr <= addr < seg.vaddr + len(seg.data):
            off = addr - seg.vaddr
            return (bytes(seg.data[off : off + 16]) + bytes(16))[:16]
    raise AssertionError(f"{addr:#x} in no segment of the image")


def test_missing_library_names_it_and_the_module_that_needs_it() -> None:
    from nxrecomp.common.errors import NxError
    from recompiler.link import link_program

    roots = [_fetch(p) for p in ("coreutils", "libc6")]
    with pytest.raises(NxError) as e:
        link_program(roots[0] / "usr/bin/expr", roots[1:])  # libgmp10 left out
    msg = str(e.value)
    assert "libgmp.so.10" in msg and "DT_NEEDED" in msg and "usr/bin/expr" in msg, msg


def _broken_copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns("src"))
    return dst


@pytest.mark.parametrize("damage", ["unlisted-library", "other-library-file", "no-sysroot"])
def test_bad_sysroot_is_a_clear_error(tmp_path_factory, tmp_path, damage) -> None:
    """The native launcher run straight (``nxrun``: ``nxrecomp exec`` would rewrite launch.txt)
    on a copy of cat's bundle with one thing broken."""
    _binary, b, _top = bundle("cat", tmp_path_factory)
    c = _broken_copy(b, tmp_path / "b")
    libc = c / "sysroot/lib/aarch64-linux-gnu/libc.so.6"
    if damage == "unlisted-library":  # ld.so maps a library the personality was not told of
        launch = c / "launch.txt"
        launch.write_text("".join(x for x in launch.read_text().splitlines(True) if not x.startswith("lib ")))
    elif damage == "other-library-file":
        libc.write_bytes(libc.read_bytes()[:-4096])
    else:
        shutil.rmtree(c / "sysroot")
    r = subprocess.run([str(c / "nxrun"), "cat", "/dev/null"], capture_output=True, text=True, timeout=120, env=ENV)
    if damage == "unlisted-library":
        assert r.returncode == 127, r.stderr
        assert "mmap of executable code from" in r.stderr and str(libc) in r.stderr and "did not lift" in r.stderr, r.stderr
    elif damage == "other-library-file":
        assert r.returncode == 2 and f"{libc} is not the library the bundle lifted" in r.stderr, r.stderr
    else:
        assert r.returncode == 2 and f"{c / 'sysroot'} is not a folder" in r.stderr, r.stderr
