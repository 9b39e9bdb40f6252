"""``nxrecomp doctor`` on this machine and in deliberately broken environments: it names each
gap and its fix.  Oracles: ``vulkaninfo --summary`` (Khronos' tool, vulkan-tools) for the
device this machine has; /proc/cpuinfo flag names against the x86-64 psABI's level lists."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nxrecomp.app.doctor import x86_level

ROOT = Path(__file__).resolve().parents[2]


def doctor(**env: str) -> subprocess.CompletedProcess:
    e = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        [sys.executable, "-m", "nxrecomp", "doctor"], capture_output=True, text=True, timeout=120, env=e, cwd=ROOT
    )


def vulkaninfo_devices() -> list[str]:
    if not shutil.which("vulkaninfo"):
        pytest.skip("vulkaninfo (vulkan-tools) is not installed: no independent view of the device")
    r = subprocess.run(["vulkaninfo", "--summary"], capture_output=True, text=True, timeout=60)
    return re.findall(r"deviceName\s*=\s*(.+)", r.stdout)


def test_this_machine() -> None:
    names = vulkaninfo_devices()
    r = doctor()
    lines = r.stdout.splitlines()
    dev = next(line for line in lines if "vulkan device:" in line)
    if names:
        assert dev.startswith("ok") and any(n.strip() in dev for n in names), (dev, names)
    for name in ("python packages", "x86-64 level", "C compiler", "SDL3", "qemu-aarch64", "disk for caches"):
        assert any(name in line for line in lines), name
    gaps = [line for line in lines if line.startswith("MISSING")]
    assert r.returncode == (1 if gaps else 0), r.stdout
    for i, line in enumerate(lines):  # every gap comes with what to do
        if line.startswith(("MISSING", "WARN")):
            assert lines[i + 1].strip().startswith("fix: "), line


def test_icd_file_that_does_not_exist(tmp_path) -> None:
    missing = tmp_path / "no-such-icd.json"
    r = doctor(VK_ICD_FILENAMES=str(missing))
    assert r.returncode == 1, r.stdout
    assert f"MISSING VK_ICD_FILENAMES: VK_ICD_FILENAMES names driver files that do not exist: {missing}" in r.stdout
    assert "fix: unset VK_ICD_FILENAMES" in r.stdout
    assert re.search(r"MISSING vulkan device: no Vulkan device: .*no usable driver", r.stdout), r.stdout
    assert "apt-get install mesa-vulkan-drivers" in r.stdout
    assert "required gap(s): VK_ICD_FILENAMES, vulkan device" in r.stdout


def test_icd_whose_driver_library_is_gone(tmp_path) -> None:
    """The manifest exists but its driver does not: only the device probe can tell."""
    icd = tmp_path / "gone_icd.json"
    icd.write_text(
        '{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "1.3.0"}}'
        % (tmp_path / "libvulkan_gone.so")
    )
    r = doctor(VK_ICD_FILENAMES=str(icd))
    assert r.returncode == 1
    assert "MISSING VK_ICD_FILENAMES" not in r.stdout
    dev = r.stdout.split("MISSING vulkan device:")[1].split("\n\n")[0]
    assert "mesa-vulkan-drivers" in dev and f"VK_ICD_FILENAMES limit(s) the loader to {icd}: unset it" in dev


# psABI levels as /proc/cpuinfo spells the flags
V2 = {"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"}
V3 = V2 | {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}


def test_x86_levels(monkeypatch) -> None:
    monkeypatch.delenv("NXRECOMP_RECOMPILER_MARCH", raising=False)
    assert "is x86-64-v3" in x86_level(V3).detail and x86_level(V3).status == "ok"
    c = x86_level(V2)
    assert c.status == "warn" and "is x86-64-v2" in c.detail and not c.required
    assert "is x86-64:" in x86_level({"sse2"}).detail
    monkeypatch.setenv("NXRECOMP_RECOMPILER_MARCH", "x86-64-v3")
    c = x86_level(V3 - {"avx2", "fma"})
    assert c.status == "missing" and "needs avx2, fma" in c.detail and "NXRECOMP_RECOMPILER_MARCH=auto" in c.fix
