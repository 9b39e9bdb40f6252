"""Run a recompiled Linux AArch64 program: map the image at its own addresses and build the
initial stack (``cpu_host.linux.process``), load ``game.so`` with cffi and run the guest on a
host thread with a deep stack.  The process exits with the guest's exit status (exit_group
ends it from C).  By default (``cpu_host.native_launcher``) all of that is done by the
bundle's native launcher (``cpu_host/launcher``), which this process execs into."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import cffi

from cpu_host import abi, launcher
from cpu_host.linux.process import setup_process
from cpu_host.linux.stack import HWCAP_DEFAULT
from nxrecomp.common import settings
from nxrecomp.bundle import launch, manifest as bundle_manifest
from nxrecomp.bundle.image import LinkedImage
from nxrecomp.common.errors import NxError

HOST_STACK = 1 << 30  # host stack of the guest thread: deep guest recursion runs on it
# What the lifter implements decides what we report (cpu_host/runtime/core/cpu_features.h): no
# SVE/MTE/LSE2/PAC; AT_HWCAP2 likewise (the launcher and setup_process take it from the table).
HWCAP = HWCAP_DEFAULT

# NxCpu as nxrt.h declares it (cpu_host/abi.py generates the cffi form; a test checks the offsets)
CDEF = (
    abi.nxcpu_cdef()
    + """
int nx_run_on_thread(NxCpu *s, uint64_t host_stack_bytes);
int nx_linux_set_brk(uint64_t start, uint64_t reserve);
void nx_linux_set_exe(const char *path);
int nx_linux_set_sysroot(const char *dir);
int nx_linux_add_library(uint64_t base, uint64_t span, uint64_t align, uint64_t size, const char *path);
void nx_linux_add_mapping(uint64_t addr, uint64_t len);
void nx_linux_set_self_exec(const char *const *prefix, int n);
void nx_linux_set_exit_hook(void (*hook)(int status));
void nx_lift_setup(const char *bundle, const char *python, const char *pythonpath);
int nx_lift_add_env(const char *kv);
void nx_lift_report(int status);
"""
)


def lift_on_miss_env(env: dict[str, str]) -> None:
    """The runtime reads ``cpu_host.lift_on_miss`` and ``cpu_host.generated_code`` from its
    environment (unset meaning on): an off from nxrecomp.ini is passed on there (os.environ too, for a runtime loaded here)."""
    for key in ("lift_on_miss", "generated_code"):
        name = f"NXRECOMP_CPU_HOST_{key.upper()}"
        if name not in env and not settings.get("cpu_host", key):
            env[name] = os.environ[name] = "0"


def setup_lift_on_miss(ffi: cffi.FFI, lib, bundle: Path) -> list:
    """Tell a runtime loaded here how to start the run-time lifter (``cpu_host/lift_on_miss.py``):
    this interpreter, with this repository on its path.  Returns the C strings (keep them)."""
    keep = [ffi.new("char[]", os.fsencode(p)) for p in (str(bundle), sys.executable, str(launch.REPO_ROOT))]
    lib.nx_lift_setup(*keep)
    for kv in launch.lift_env():
        lib.nx_lift_add_env(kv.encode())
    return keep


def load_manifest(bundle: Path) -> dict:
    m = bundle_manifest.read(bundle)
    if m.get("kind") != bundle_manifest.LINUX:
        raise NxError(f"bundle kind {m.get('kind')!r} is not a Linux AArch64 program", path=str(bundle), field="kind")
    return m


def run(bundle: str | Path, argv: list[str], env: dict[str, str] | None = None) -> int:
    bundle = Path(bundle).resolve()
    manifest = load_manifest(bundle)
    why = launch.not_runnable(manifest["image"].get("static", True), manifest.get("program"), manifest.get("dynamic"))
    if why:
        raise NxError(why, path=str(bundle))
    image = LinkedImage.from_json(manifest["image"], bundle)  # checks image.bin against the manifest
    env = dict(env) if env is not None else dict(os.environ)
    # the runtime reads it from its environment, unset meaning auto (so that, by default, the
    # guest's environment, and so its stack, is the one it was given: the lockstep tests compare SP)
    huge = settings.get("cpu_host", "huge_pages")
    if huge != "auto":
        env["NXRECOMP_CPU_HOST_HUGE_PAGES"] = os.environ["NXRECOMP_CPU_HOST_HUGE_PAGES"] = "1" if huge == "on" else "0"
    lift_on_miss_env(env)
    if settings.get("cpu_host", "native_launcher"):
        # the rest of the start-up (mapping, stack, dlopen) in C; this process becomes the guest
        exe = launcher.install(bundle, manifest, HWCAP)
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(exe, [str(exe), *argv], env)
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    lib = ffi.dlopen(str(bundle / "game.so"))
    envp = [f"{k}={v}".encode() for k, v in env.items()]
    # a lockstep trace needs the same AT_RANDOM bytes as the Unicorn run it is compared with
    random = bytes(16) if os.environ.get("NXRECOMP_TRACE_FILE") else None
    proc = setup_process(
        image,
        [os.fsencode(a) for a in argv],
        envp,
        personality=lib,
        exe_path=manifest.get("program"),
        hwcap=HWCAP,
        random=random,
        dynamic=manifest.get("dynamic"),
        bundle=str(bundle),
    )
    # busybox's shell runs its own applets by execve("/proc/self/exe"): start this bundle again
    prefix = [sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--"]
    keep = [ffi.new("char[]", os.fsencode(p)) for p in prefix]
    lib.nx_linux_set_self_exec(ffi.new("char *[]", keep), len(keep))
    setup_lift_on_miss(ffi, lib, bundle)
    lib.nx_linux_set_exit_hook(lib.nx_lift_report)  # the exit summary counts run-time lifts
    cpu = ffi.new("NxCpu *")
    cpu.sp = proc.sp
    cpu.pc = proc.entry
    if lib.nx_run_on_thread(cpu, HOST_STACK) != 0:
        raise NxError("cannot start the guest thread")
    return 0
