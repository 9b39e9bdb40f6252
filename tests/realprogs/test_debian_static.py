"""Debian 12 arm64 static programs nobody here wrote, recompiled and run against qemu-aarch64:
``zsh-static`` (scripts covering arithmetic, arrays, parameter expansion, printf, read,
redirections, here-docs, patterns, functions, traps), ``sash`` (another code base: its
built-in commands), busybox applets beyond tests/cpu_host/busybox_cases.py, ``bash-static``
(scripts and ``bash -i``), ``mksh`` in its four static builds (klibc, dietlibc, musl, glibc),
``tini-static``, ``gpgv-static`` and ``e2fsck.static``.  stdout, stderr
and exit status must be identical; a branch recovery miss is a fatal error at run time
(``branch to an address with no lifted code``), so identical output means analysis found
every target the run took.  The module prints a table: program, cases, identical, run-time lifts (a lift's notice on
stderr would also make stderr differ from qemu's).

Inputs are in tests/realprogs/debian_cases.py (with the busybox applets skipped and why) and
tests/realprogs/shell_cases.py (bash, mksh).  CI runs a handful of zsh scripts, the sash
script, a few bash scripts and ``bash -i``, one mksh-static script and three tini cases; the
rest is ``heavy``.  The packages
are downloaded at test time (nxrecomp.common.debian: apt-get download into the cache)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cpu_host.busybox_cases import fetch_busybox, make_inputs, shared_bundle
from tests.realprogs import debian_cases as C
from tests.realprogs import results_table
from tests.realprogs import shell_cases as SH
from tests.shared_tmp import run_dir

pytestmark = pytest.mark.network
ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": "/nonexistent"}
RESULTS: dict[str, list[int]] = {}  # program -> [cases run, identical, run-time lifts]
ZSH_CI = {"arith", "params", "printf", "heredocs", "functions-nofork", "redirections-nofork", "params-more"}


def _fetch(package: str, rel: str) -> Path:
    from nxrecomp.common import debian

    try:
        return debian.fetch(package, "arm64") / rel
    except debian.RegistryUnreachable as e:
        pytest.skip(f"LOUD SKIP: Debian mirror unreachable, cannot fetch {package}:arm64: {e}")


def _bundle(binary: Path, name: str, tmp_path_factory) -> Path:
    """The program recompiled once per test run (shared by xdist workers under a lock)."""
    root = run_dir(tmp_path_factory)
    out = root / f"debian-{name}-bundle"
    with open(root / f"debian-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "manifest.json").exists():
            r = subprocess.run(
                [sys.executable, "-m", "nxrecomp", "recompile", str(binary), "-o", str(out)],
                capture_output=True,
                text=True,
                timeout=5400,
            )
            assert r.returncode == 0, r.stderr[-3000:]
    return out


@pytest.fixture(scope="module", autouse=True)
def table(request):
    yield
    results_table.write(request, RESULTS)


def compare(
    program: str,
    binary: Path,
    bundle: Path,
    tmp: Path,
    argv: list[str],
    stdin: bytes = b"",
    files: dict[str, str | bytes] | None = None,
    env: dict[str, str] | None = None,
    session: bool = False,
) -> int:
    """Run ``argv`` (argv[0] the program's name) recompiled and under qemu-aarch64, each in a
    fresh folder with the same input files (``files``: name -> text or bytes) and environment
    (``env`` added to ENV; ``session``: each in a session of its own, with no controlling
    terminal); assert identical stdout, stderr, exit status."""
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    runs = []
    for who in ("ours", "qemu"):
        (tmp / who).mkdir(parents=True, exist_ok=True)
        d = make_inputs(tmp / who)
        for name, data in (files or {}).items():
            (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())
        cmd = (
            [sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--", *argv]
            if who == "ours"
            else ["qemu-aarch64", "-0", argv[0], str(binary), *argv[1:]]
        )
        # (PYTHONPATH passed on: a worktree's own code runs its own bundle)
        run_env = {
            **ENV,
            **(env or {}),
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ and who == "ours" else {}),
        }
        runs.append(
            subprocess.run(cmd, input=stdin, capture_output=True, cwd=d, env=run_env, timeout=600, start_new_session=session)
        )
    ours, ref = runs
    row = RESULTS.setdefault(program, [0, 0, 0])
    row[0] += 1
    row[2] += len(results_table.LIFT_NOTICE.findall(ours.stderr))
    why = (
        f"{argv}: ours exit {ours.returncode} stderr {ours.stderr[-800:]!r}; qemu exit {ref.returncode} "
        f"stderr {ref.stderr[-300:]!r}"
    )
    assert (ours.returncode, ours.stderr) == (ref.returncode, ref.stderr), why
    assert ours.stdout == ref.stdout, f"{argv}: stdout ours {ours.stdout[-600:]!r}\nqemu {ref.stdout[-600:]!r}"
    row[1] += 1
    return ref.returncode


@pytest.fixture(scope="module")
def zsh(tmp_path_factory) -> tuple[Path, Path]:
    binary = _fetch("zsh-static", "bin/zsh-static")
    return binary, _bundle(binary, "zsh", tmp_path_factory)


@pytest.fixture(scope="module")
def sash(tmp_path_factory) -> tuple[Path, Path]:
    binary = _fetch("sash", "bin/sash")
    return binary, _bundle(binary, "sash", tmp_path_factory)


def _zsh_params():
    for name, script, stdin, _signals in C.ZSH:  # (scripts that fork need guest signals: they run)
        marks = [] if name in ZSH_CI else [pytest.mark.heavy]
        if name in C.ZSH_XFAIL:
            marks.append(pytest.mark.xfail(reason=C.ZSH_XFAIL[name], strict=True))
        yield pytest.param(name, script, stdin, marks=marks, id=name)


@pytest.mark.parametrize("name,script,stdin", list(_zsh_params()))
def test_zsh_script_matches_qemu(zsh, tmp_path, name, script, stdin) -> None:
    binary, bundle = zsh
    compare("zsh-static", binary, bundle, tmp_path, ["zsh", "-f", "script.zsh"], stdin, {"script.zsh": script})


def test_sash_script_matches_qemu(sash, tmp_path) -> None:
    binary, bundle = sash
    assert compare("sash", binary, bundle, tmp_path, ["sash", "-f", "script.sash"], b"", {"script.sash": C.SASH}) == 5


@pytest.fixture(scope="module")
def busybox(tmp_path_factory) -> tuple[Path, Path]:
    binary = fetch_busybox()
    return binary, shared_bundle(binary, tmp_path_factory)


@pytest.mark.heavy
@pytest.mark.parametrize("argv,stdin", C.BUSYBOX, ids=lambda a: " ".join(a)[:40] if isinstance(a, list) else "")
def test_busybox_applet_matches_qemu(busybox, tmp_path, argv, stdin) -> None:
    binary, bundle = busybox
    compare("busybox", binary, bundle, tmp_path, argv, stdin)


# bash-static and mksh (tests/realprogs/shell_cases.py); CI runs a few scripts of each, the
# rest is ``heavy``.  mksh's static builds are four code bases of libc: ``mksh-static`` (klibc),
# dietlibc, musl, and ``lksh`` (glibc).
BASH_CI = {"arrays", "params", "traps", "jobs"}
MKSH_CI = {"traps"}
MKSH_BUILDS = {  # program name in the table -> path in Debian 12's mksh package
    "mksh-static": "usr/lib/klibc/bin/mksh",
    "mksh-diet": "usr/lib/diet/bin/mksh",
    "mksh-musl": "usr/lib/aarch64-linux-musl/bin/mksh",
    "lksh": "bin/lksh",
}


@pytest.fixture(scope="module")
def bash(tmp_path_factory) -> tuple[Path, Path]:
    binary = _fetch("bash-static", "bin/bash-static")
    return binary, _bundle(binary, "bash", tmp_path_factory)


@pytest.mark.parametrize(
    "name,script",
    [pytest.param(n, s, marks=[] if n in BASH_CI else [pytest.mark.heavy], id=n) for n, s in SH.BASH],
)
def test_bash_script_matches_qemu(bash, tmp_path, name, script) -> None:
    binary, bundle = bash
    compare("bash-static", binary, bundle, tmp_path, ["bash", "script.bash"], SH.STDIN, {"script.bash": script})


def test_bash_interactive_matches_qemu(bash, tmp_path) -> None:
    """``bash -i`` stopped at its start until ``analysis.noreturn`` took a weak entry after a
    call for what it is (tests/recompiler/test_false_entry_after_call.py)."""
    binary, bundle = bash
    argv = ["bash", "--norc", "-i"]
    env = {"HISTFILE": "/dev/null", "TERM": "dumb"}
    assert compare("bash-static", binary, bundle, tmp_path, argv, SH.BASH_INTERACTIVE.encode(), env=env, session=True) == 4


@pytest.fixture(
    scope="module",
    params=[pytest.param(b, marks=[] if b == "mksh-static" else [pytest.mark.heavy]) for b in MKSH_BUILDS],
)
def mksh(request, tmp_path_factory) -> tuple[str, Path, Path]:
    build = request.param
    binary = _fetch("mksh", MKSH_BUILDS[build])
    return build, binary, _bundle(binary, build, tmp_path_factory)


@pytest.mark.parametrize(
    "name,script",
    [pytest.param(n, s, marks=[] if n in MKSH_CI else [pytest.mark.heavy], id=n) for n, s in SH.MKSH],
)
def test_mksh_script_matches_qemu(mksh, tmp_path, name, script) -> None:
    build, binary, bundle = mksh
    compare(build, binary, bundle, tmp_path, ["mksh", "script.mksh"], SH.STDIN, {"script.mksh": script})


# Other Debian 12 arm64 packages with a statically linked binary (``file``: "statically linked"):
# tini (an init: forks the command, forwards signals to it with sigtimedwait, reaps it), gpgv
# (GnuPG's verifier: RSA and EdDSA signatures of Debian's own release file, libgcrypt) and
# e2fsck (e2fsprogs: checks and repairs an ext2 image made here by the host's mke2fs).  CI runs
# three tini cases; gpgv and e2fsck (each a build as large as busybox) are ``heavy``.
TINI = [  # (argv after the program, exit status qemu gives); TINI_VERBOSITY=0: its warning names its pid
    (["--", "true"], 0),
    (["--", "sh", "-c", "exit 3"], 3),
    (["-e", "3", "--", "sh", "-c", "exit 3"], 0),
    (["--", "sh", "-c", "kill -TERM $$"], 143),
    (["-g", "--", "sh", "-c", "echo out; echo err >&2"], 0),
    (["--", "sh", "-c", "sleep 0.2 & echo background"], 0),
    (["-p", "SIGTERM", "-w", "--", "true"], 0),
    (["--", "sh", "-c", "kill -USR1 $PPID; sleep 2; echo not reached"], 138),  # tini forwards it
    (["--", "sh", "-c", "kill -INT $PPID; sleep 2; echo not reached"], 130),
    (["-h"], 0),
    (["--version"], 0),
    (["-l"], 0),
    (["-x"], 1),
]
TINI_CI = {0, 7, 12}


@pytest.fixture(scope="module")
def tini(tmp_path_factory) -> tuple[Path, Path]:
    binary = _fetch("tini", "usr/bin/tini-static")
    return binary, _bundle(binary, "tini", tmp_path_factory)


@pytest.mark.parametrize(
    "i",
    [pytest.param(i, marks=[] if i in TINI_CI else [pytest.mark.heavy], id=" ".join(a)[:40]) for i, (a, _) in enumerate(TINI)],
)
def test_tini_matches_qemu(tini, tmp_path, i) -> None:
    binary, bundle = tini
    argv, status = TINI[i]
    assert compare("tini-static", binary, bundle, tmp_path, ["tini", *argv], env={"TINI_VERBOSITY": "0"}) == status


# no run-time lift (analysis finds every target since analyse._after_noreturn); it read its
# keyring wrong ("mpi larger than indicated length (0 bits)") until a branch of _int_malloc's to a
# label that a rodata word names stayed in its body (tests/recompiler/test_branch_into_weak_entry.py)
@pytest.fixture(scope="module")
def gpgv(tmp_path_factory) -> tuple[Path, Path, dict[str, bytes]]:
    from nxrecomp.common import debian

    binary = _fetch("gpgv-static", "usr/bin/gpgv-static")
    keyring = _fetch("debian-archive-keyring", "usr/share/keyrings/debian-archive-keyring.gpg")
    # the release file apt-get update fetched for the download above, signed by three keys
    release = sorted((debian._cache() / "arm64" / "lists").glob("*_dists_bookworm_InRelease"))
    assert release, "no bookworm InRelease in the Debian cache after a fetch"
    good = release[0].read_bytes()
    files = {
        "k.gpg": keyring.read_bytes(),
        "InRelease": good,
        "Bad": good.replace(b"Codename: bookworm", b"Codename: bookwore", 1),
    }
    return binary, _bundle(binary, "gpgv", tmp_path_factory), files


@pytest.mark.parametrize(
    "args,status",
    [
        pytest.param(["--keyring", "./k.gpg", "InRelease"], 0, id="good", marks=pytest.mark.heavy),
        pytest.param(["--keyring", "./k.gpg", "Bad"], 1, id="bad", marks=pytest.mark.heavy),
        pytest.param(["--status-fd", "1", "--keyring", "./k.gpg", "InRelease"], 0, id="status-fd", marks=pytest.mark.heavy),
        pytest.param(["--version"], 0, id="version", marks=pytest.mark.heavy),
    ],
)
def test_gpgv_matches_qemu(gpgv, tmp_path, args, status) -> None:
    binary, bundle, files = gpgv
    assert compare("gpgv-static", binary, bundle, tmp_path, ["gpgv", *args], files=files) == status


@pytest.fixture(scope="module")
def e2fsck(tmp_path_factory) -> tuple[Path, Path, dict[str, bytes]]:
    binary = _fetch("e2fsck-static", "sbin/e2fsck.static")
    mke2fs, debugfs = (
        shutil.which("mke2fs", path="/usr/sbin:/sbin:/usr/bin:/bin"),
        shutil.which("debugfs", path="/usr/sbin:/sbin"),
    )
    if not (mke2fs and debugfs):
        pytest.skip("LOUD SKIP: the host's mke2fs/debugfs (apt e2fsprogs) are not installed")
    d = tmp_path_factory.mktemp("e2fs")
    (d / "src" / "sub").mkdir(parents=True)
    (d / "src" / "a.txt").write_text("hello\n")
    (d / "src" / "sub" / "n.txt").write_text("".join(f"{i}\n" for i in range(2000)))
    os.symlink("a.txt", d / "src" / "link")
    uuid = "01234567-89ab-cdef-0123-456789abcdef"
    subprocess.run(
        [mke2fs, "-q", "-F", "-t", "ext2", "-b", "1024", "-U", uuid, "-E", f"hash_seed={uuid},root_owner=0:0"]
        + ["-d", str(d / "src"), str(d / "img"), "512"],
        check=True,
        capture_output=True,
        env={**ENV, "E2FSPROGS_FAKE_TIME": "1700000000"},
    )
    shutil.copy(d / "img", d / "bad")  # an inode cleared under its directory entry, a wrong free count
    for req in ("clri <12>", "set_super_value free_blocks_count 7"):
        subprocess.run([debugfs, "-w", "-R", req, str(d / "bad")], check=True, capture_output=True)
    files = {n: (d / n).read_bytes() for n in ("img", "bad")}
    files["notfs"] = b"\0" * 65536
    return binary, _bundle(binary, "e2fsck", tmp_path_factory), files


@pytest.mark.parametrize(
    "args,status",
    [
        pytest.param(["-fn", "img"], 0, id="clean", marks=pytest.mark.heavy),
        pytest.param(["-fy", "bad"], 1, id="repair", marks=pytest.mark.heavy),
        pytest.param(["-fn", "bad"], 4, id="readonly-errors", marks=pytest.mark.heavy),
        pytest.param(["-fn", "notfs"], 8, id="not-a-filesystem", marks=pytest.mark.heavy),
        pytest.param(["-V"], 0, id="version", marks=pytest.mark.heavy),
    ],
)
def test_e2fsck_matches_qemu(e2fsck, tmp_path, args, status) -> None:
    binary, bundle, files = e2fsck
    assert compare("e2fsck-static", binary, bundle, tmp_path, ["e2fsck", *args], files=files) == status
