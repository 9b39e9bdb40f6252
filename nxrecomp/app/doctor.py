"""``nxrecomp doctor``: does this machine have what the bundle needs?  One line per check
(ok / WARN / MISSING) and, for each gap, what to do.  Exit status 1 when something required
is missing, else 0.

Checks and why each matters:
- Python packages: the ones pyproject.toml pins (importlib.metadata), each importable.
- Vulkan: the loader (libvulkan.so.1) and a device with API >= 1.3 (what gpu_host/vkdevice.py
  asks for), with its driver name.  Probed in a child process through the same ``vulkan``
  binding the GPU process uses (a broken driver can crash the process that loads it);
  ``VK_ICD_FILENAMES`` / ``VK_DRIVER_FILES`` naming files that do not exist is named as such.
- x86-64 level: lifted code is built for x86-64-v3 where the CPU has it, else the baseline
  (recompiler/cc.py; the bundle refuses to start on a CPU lacking its level:
  cpu_host/runtime/core/host_isa.c).  Levels as the x86-64 psABI defines them (v2: SSE4.2,
  POPCNT...; v3: AVX2, FMA, BMI1/2, LZCNT, MOVBE; v4: AVX-512).
- C compiler: clang or the ziglang wheel (recompiler/cc.py); gcc cannot (no musttail).
- SDL3 (a window; optional: headless without it), built once into the cache (gpu_host/sdl3_build.py).
- qemu-aarch64 (the tests' oracle for whole programs; optional to play).
- disk space where the caches live (``nxrecomp.cache_dir``, default ~/.cache/nxrecomp).
"""

from __future__ import annotations

import argparse
import ctypes.util
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DISK_MIN_GIB = 2.0  # a recompiled game's objects + shaders + SDL3 build + Debian downloads
DISK_WARN_GIB = 5.0
CACHE_ENV = "NXRECOMP_NXRECOMP_CACHE_DIR"  # setting nxrecomp.cache_dir

# x86-64 psABI micro-architecture levels, as /proc/cpuinfo names the flags (lzcnt is "abm",
# SSE3 is "pni", LAHF/SAHF in 64-bit mode "lahf_lm", CMPXCHG16B "cx16").
X86_LEVELS = (
    ("x86-64-v2", ("cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3")),
    ("x86-64-v3", ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")),
    ("x86-64-v4", ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")),
)


@dataclass
class Check:
    name: str
    status: str  # "ok", "warn" (works, but less than it could) or "missing"
    detail: str
    fix: str = ""
    required: bool = True


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor", help="check this machine for what the bundle needs (Vulkan, SDL3, CPU, tools, disk) and say what to do"
    )
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.set_defaults(func=_doctor)


# ---------------------------------------------------------------- the checks
def python_packages() -> Check:
    reqs = _requirements()
    bad = []
    for req in reqs:
        m = re.match(r"([A-Za-z0-9_.\-]+)\s*(?:\[.*\])?\s*(==\s*([^;\s]+))?", req)
        if not m:
            continue
        name, want = m.group(1), m.group(3)
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            bad.append(f"{name} (not installed)")
            continue
        if want and have != want:
            bad.append(f"{name} {have} (pinned {want})")
    if bad:
        return Check("python packages", "missing", "; ".join(bad), f"pip install -e '{ROOT}' (or: bash scripts/nx.sh setup)")
    return Check("python packages", "ok", f"{len(reqs)} pinned packages installed")


def _requirements() -> list[str]:
    try:
        return [r for r in importlib.metadata.requires("nxrecomp") or [] if "extra ==" not in r]
    except importlib.metadata.PackageNotFoundError:
        pass
    import tomllib

    try:
        return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    except (OSError, KeyError, ValueError):
        return []


_VK_PROBE = r"""
import json, vulkan as vk
s = lambda x: x if isinstance(x, str) else vk.ffi.string(x).decode()
app = vk.VkApplicationInfo(pApplicationName="nxrecomp-doctor", apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
try:
    inst = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
except vk.VkError as e:
    print(json.dumps({"error": type(e).__name__})); raise SystemExit(0)
out = []
for pd in vk.vkEnumeratePhysicalDevices(inst):
    drv = vk.VkPhysicalDeviceDriverProperties()
    p2 = vk.VkPhysicalDeviceProperties2(pNext=drv)
    vk.vkGetPhysicalDeviceProperties2(pd, p2)
    v = p2.properties.apiVersion
    out.append({"name": s(p2.properties.deviceName), "driver": s(drv.driverName), "info": s(drv.driverInfo),
                "api": [vk.VK_VERSION_MAJOR(v), vk.VK_VERSION_MINOR(v), vk.VK_VERSION_PATCH(v)]})
vk.vkDestroyInstance(inst, None)
print(json.dumps({"devices": out}))
"""

VK_FIX = (
    "install a Vulkan driver: on Debian 'apt-get install mesa-vulkan-drivers libvulkan1' (lavapipe, "
    "Vulkan on the CPU) or your GPU vendor's driver"
)


def vulkan(env: dict[str, str] | None = None) -> list[Check]:
    env = dict(os.environ if env is None else env)
    checks = []
    loader = ctypes.util.find_library("vulkan")
    if not loader:
        return [Check("vulkan loader", "missing", "libvulkan.so.1 not found", "apt-get install libvulkan1 (the Khronos loader)")]
    checks.append(Check("vulkan loader", "ok", loader))
    for var in ("VK_ICD_FILENAMES", "VK_DRIVER_FILES"):
        files = [f for f in env.get(var, "").split(os.pathsep) if f]
        gone = [f for f in files if not Path(f).is_file()]
        if gone:
            checks.append(
                Check(
                    f"{var}",
                    "missing",
                    f"{var} names driver files that do not exist: {', '.join(gone)}",
                    f"unset {var} (the loader then finds the installed drivers) or point it at an "
                    "existing ICD json (e.g. /usr/share/vulkan/icd.d/lvp_icd.x86_64.json)",
                )
            )
    try:
        r = subprocess.run([sys.executable, "-c", _VK_PROBE], capture_output=True, text=True, timeout=60, env=env)
        got = json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout.strip() else {"error": r.stderr.strip()[-300:]}
    except (subprocess.TimeoutExpired, ValueError) as e:
        got = {"error": f"probe failed: {e}"}
    devs = got.get("devices") or []
    if "error" in got or not devs:
        why = got.get("error") or "no physical devices"
        if "IncompatibleDriver" in why:
            why = f"the loader found no usable driver ({why})"
        fix = VK_FIX
        named = [v for v in ("VK_ICD_FILENAMES", "VK_DRIVER_FILES") if env.get(v)]
        if named:
            fix += f"; {' and '.join(named)} limit(s) the loader to {', '.join(env[v] for v in named)}: unset it"
        checks.append(Check("vulkan device", "missing", f"no Vulkan device: {why}", fix))
        return checks
    good = [d for d in devs if tuple(d["api"]) >= (1, 3, 0)]
    listing = "; ".join(f"{d['name']} (driver {d['driver']}, {d['info']}, Vulkan {'.'.join(map(str, d['api']))})" for d in devs)
    if not good:
        checks.append(
            Check(
                "vulkan device",
                "missing",
                f"no device with Vulkan 1.3: {listing}",
                "update the driver (Mesa >= 22.3 for lavapipe; bookworm-backports has Mesa 25)",
            )
        )
    else:
        checks.append(Check("vulkan device", "ok", listing))
    return checks


def x86_level(flags: set[str] | None = None) -> Check:
    if flags is None:
        from recompiler.cc import host_cpu_flags

        flags = host_cpu_flags()
    if not flags:
        return Check("x86-64 level", "warn", "cannot read /proc/cpuinfo", "", required=False)
    level = "x86-64"
    for name, need in X86_LEVELS:
        if not flags.issuperset(need):
            break
        level = name
    from nxrecomp.common import settings

    want = str(settings.get("recompiler", "march")).strip() or "auto"
    names = [n for n, _ in X86_LEVELS]
    if want in names:  # a level asked for explicitly: the CPU must have it and those below
        lacking = sorted(f for _, fs in X86_LEVELS[: names.index(want) + 1] for f in fs if f not in flags)
        if lacking:
            return Check(
                "x86-64 level",
                "missing",
                f"this CPU is {level}; recompiler.march={want} needs {', '.join(lacking)}",
                "NXRECOMP_RECOMPILER_MARCH=auto (or x86-64), then recompile the bundle",
            )
    if level in ("x86-64", "x86-64-v2"):
        return Check(
            "x86-64 level",
            "warn",
            f"this CPU is {level}: lifted code is built for the baseline (no AVX2/FMA: slower floating point)",
            "nothing to do (it runs); a CPU with x86-64-v3 runs faster",
            required=False,
        )
    return Check(
        "x86-64 level", "ok", f"this CPU is {level} (recompiler.march={want}: lifted code uses x86-64-v3 where the CPU has it)"
    )


def c_compiler() -> Check:
    clang = next((p for n in ("clang", "clang-19", "clang-16", "clang-15", "clang-14") if (p := shutil.which(n))), None)
    try:
        importlib.metadata.version("ziglang")
        zig = True
    except importlib.metadata.PackageNotFoundError:
        zig = False
    if clang or zig:
        have = [x for x in (clang and f"clang ({clang})", zig and "ziglang wheel") if x]
        return Check("C compiler", "ok", ", ".join(have))
    return Check(
        "C compiler",
        "missing",
        "neither clang nor the ziglang wheel (gcc lacks musttail)",
        "pip install ziglang (or apt-get install clang)",
    )


def sdl3() -> Check:
    try:
        from gpu_host.sdl3_build import SdlUnavailable, lib_dir
    except ImportError as e:
        return Check("SDL3 (window)", "warn", f"gpu_host.sdl3_build unavailable: {e}", "", required=False)
    try:
        d = lib_dir(build=False)
    except SdlUnavailable:
        tools = [t for t in ("cmake", "ninja", "dpkg-source") if not shutil.which(t)]
        fix = "nxrecomp build-sdl3 (builds SDL3 once from Debian's source, ~1 min)"
        if tools:
            fix = f"apt-get install cmake ninja-build dpkg-dev libx11-dev libxext-dev, then {fix}"
        return Check(
            "SDL3 (window)", "warn", "not built: the demo plays headless (frames to PNG, no window)", fix, required=False
        )
    disp = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    return Check("SDL3 (window)", "ok", f"{d / 'libSDL3.so.0'}" + ("" if disp else "; no DISPLAY now: headless"))


def qemu() -> Check:
    q = shutil.which("qemu-aarch64")
    if q:
        return Check("qemu-aarch64 (tests)", "ok", q, required=False)
    return Check(
        "qemu-aarch64 (tests)",
        "warn",
        "not installed: tests that compare with qemu skip",
        "apt-get install qemu-user",
        required=False,
    )


def disk(cache_dir: str | None = None) -> Check:
    from nxrecomp.common import settings

    d = Path(cache_dir or settings.get("nxrecomp", "cache_dir")).expanduser()
    probe = d
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        free = shutil.disk_usage(probe).free / 2**30
    except OSError as e:
        return Check("disk for caches", "missing", f"{d}: {e}", f"set {CACHE_ENV} to a writable folder")
    if not os.access(probe, os.W_OK):
        return Check("disk for caches", "missing", f"{probe} is not writable", f"set {CACHE_ENV} to a writable folder")
    detail = f"{free:.1f} GiB free for {d}"
    if free < DISK_MIN_GIB:
        return Check(
            "disk for caches",
            "missing",
            detail + f" (needs about {DISK_MIN_GIB:g} GiB)",
            f"free space, or set {CACHE_ENV} to a disk with {DISK_MIN_GIB:g} GiB",
        )
    if free < DISK_WARN_GIB:
        return Check(
            "disk for caches", "warn", detail, "free some space (recompiled games and shaders grow the cache)", required=False
        )
    return Check("disk for caches", "ok", detail)


def run_checks(env: dict[str, str] | None = None) -> list[Check]:
    return [python_packages(), *vulkan(env), x86_level(), c_compiler(), sdl3(), qemu(), disk()]


def host_summary() -> str:
    """CPU model and x86-64 level, for reports."""
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    lvl = x86_level().detail.split(";")[0].replace("this CPU is ", "")
    return f"{model}, {os.cpu_count()} CPUs, {lvl.split(' (')[0]}"


def format_checks(checks: list[Check]) -> str:
    tag = {"ok": "ok     ", "warn": "WARN   ", "missing": "MISSING"}
    lines = []
    for c in checks:
        lines.append(f"{tag[c.status]} {c.name}: {c.detail}")
        if c.status != "ok" and c.fix:
            lines.append(f"        fix: {c.fix}")
    gaps = [c for c in checks if c.status == "missing" and c.required]
    lines.append(
        f"\n{len(gaps)} required gap(s)"
        + (": " + ", ".join(c.name for c in gaps) if gaps else "; this machine can build and play bundles")
    )
    return "\n".join(lines)


def _doctor(a: argparse.Namespace) -> int:
    checks = run_checks()
    print(json.dumps([asdict(c) for c in checks], indent=1) if a.json else format_checks(checks))
    return 1 if any(c.status == "missing" and c.required for c in checks) else 0
