"""The native launcher (cpu_host/launcher): Debian's arm64 busybox-static, recompiled, started
by ``BUNDLE/nxrun`` and by the Python runner gives qemu-aarch64's stdout, stderr and exit
status (the shell's applets come back through execve of /proc/self/exe); a broken launch file
or image is a one-line error naming the file and what is wrong."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cpu_host.busybox_cases import compare_with_qemu, fetch_busybox, make_inputs, shared_bundle

pytestmark = pytest.mark.network

ARGVS = [
    ["md5sum", "lines.txt", "words.txt"],
    ["sh", "-c", "echo $((6 * 7)); cat words.txt | sort | head -3; exit 3"],
    ["ls", "-l", "/nonexistent"],
]


@pytest.fixture(scope="module")
def busybox() -> Path:
    return fetch_busybox()


@pytest.fixture(scope="module")
def bundle(busybox, tmp_path_factory) -> Path:
    return shared_bundle(busybox, tmp_path_factory)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return make_inputs(tmp_path_factory.mktemp("launchwork"))


@pytest.mark.parametrize("argv", ARGVS, ids=lambda a: " ".join(a)[:30])
def test_launcher_matches_qemu(busybox, bundle, work, argv):
    compare_with_qemu([str(bundle / "nxrun")], busybox, work, argv)


@pytest.mark.parametrize("argv", ARGVS[1:2], ids=["sh"])
def test_python_runner_still_matches_qemu(busybox, bundle, work, argv, monkeypatch):
    monkeypatch.setenv("NXRECOMP_CPU_HOST_NATIVE_LAUNCHER", "0")
    compare_with_qemu([sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--"], busybox, work, argv)


def _copy(bundle: Path, dst: Path) -> Path:
    """A bundle copy whose small files can be broken (game.so is linked, not copied)."""
    dst.mkdir()
    for name in ("nxrun", "launch.txt", "image.bin", "manifest.json"):
        shutil.copy2(bundle / name, dst / name)
    os.symlink(bundle / "game.so", dst / "game.so")
    return dst


def _run(b: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(b / "nxrun"), "true"], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "edit,needle",
    [
        (lambda t: t.replace("nxlaunch 1", "nxlaunch 9"), "line 1: unknown format"),
        (lambda t: t.replace("\nregion 0x", "\nregion 0x1"), "bad region"),
        (lambda t: t + "colour 0x5\n", "unknown key colour"),
        (lambda t: t.replace("\nentry ", "\nentry zz"), "bad value for entry"),
    ],
    ids=["magic", "region", "key", "value"],
)
def test_broken_launch_file_is_named(bundle, tmp_path, edit, needle):
    b = _copy(bundle, tmp_path / "b")
    lf = b / "launch.txt"
    lf.write_text(edit(lf.read_text()))
    r = _run(b)
    assert r.returncode == 2
    assert "launch.txt" in r.stderr and needle in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_short_image_is_named(bundle, tmp_path):
    b = _copy(bundle, tmp_path / "b")
    data = (b / "image.bin").read_bytes()
    (b / "image.bin").write_bytes(data[: len(data) // 2])
    r = _run(b)
    assert r.returncode == 2 and "image.bin" in r.stderr and "past its end" in r.stderr, r.stderr


def test_exec_refreshes_a_stale_launch_file(busybox, bundle, tmp_path, work):
    b = _copy(bundle, tmp_path / "b")
    (b / "launch.txt").write_text("nxlaunch 1\n")  # stale: `nxrecomp exec` rewrites it
    (b / "src").mkdir()
    compare_with_qemu([sys.executable, "-m", "nxrecomp", "exec", str(b), "--"], busybox, work, ARGVS[0])
    assert (b / "launch.txt").read_text() == (bundle / "launch.txt").read_text()


@pytest.mark.parametrize("native", [True, False], ids=["nxrun", "python-runner"])
def test_dynamic_program_without_plan_refuses_to_start(bundle, tmp_path, native, monkeypatch):
    """A dynamically linked program's bundle with no ``dynamic`` entry (no interpreter or
    libraries recorded: built before ld.so ran here) refuses to start with one line naming it
    and the remedy, through the launcher and the runner."""
    import json

    from cpu_host import launcher
    from cpu_host.runner import HWCAP

    b = _copy(bundle, tmp_path / "b")
    manifest = json.loads((b / "manifest.json").read_text())
    manifest["image"]["static"] = False
    (b / "manifest.json").write_text(json.dumps(manifest))
    launcher.install(b, manifest, HWCAP)
    assert "\nrefuse busybox is dynamically linked" in (b / "launch.txt").read_text()
    monkeypatch.setenv("NXRECOMP_CPU_HOST_NATIVE_LAUNCHER", "1" if native else "0")
    cmd = [str(b / "nxrun"), "true"] if native else [sys.executable, "-m", "nxrecomp", "exec", str(b), "--", "true"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "busybox is dynamically linked" in lines[0] and "recompile it with" in lines[0], r.stderr
    assert str(b) in lines[0]
