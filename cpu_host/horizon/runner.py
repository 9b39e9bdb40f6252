"""Run a recompiled ExeFS bundle on the Horizon personality: map the modules at their
addresses and the main thread's stack, load ``game.so`` with cffi, configure the kernel
(``cpu_host/runtime/horizon/horizon_kernel.c``) from the NPDM facts in the manifest, start the main
thread at the entry with Horizon's arguments (X0 = 0, X1 = its handle; TLS at TPIDRRO_EL0),
or for homebrew as its loader would (``homebrew.py``: hbloader's configuration for an NRO),
and wait until the process exits or crashes."""

from __future__ import annotations

import ctypes
import json
import logging
import os
import sys
from pathlib import Path

import cffi

from cpu_host.horizon import homebrew, spin, stop
from cpu_host.horizon.address_space import AddressSpace, address_space, check_modules_fit
from cpu_host.horizon.crash import Symbolizer, report
from cpu_host.horizon.hle.abi import NXCPU_CDEF
from cpu_host.horizon.hle.services import Services, make_services, proc_slots
from nxrecomp.bundle.memory_map import Region, check_disjoint, segment_regions
from cpu_host.linux.process import _libc, map_fixed
from nxrecomp.common.errors import NxError
from nxrecomp.bundle.image import LinkedImage

log = logging.getLogger("cpu_host.horizon")

HOST_STACK = 256 << 20  # host stack of each guest thread: deep guest recursion runs on it
EXIT_PROCESS, EXIT_CRASH = 1, 2
CRASH_STATUS = 134  # as a process killed by SIGABRT
HZ_CRASH_HOST = 0x10000  # HzCrash.svc when a host function failed (horizon_kernel.h)
HZ_CRASH_BOOT = 0x10001  # ... when a start-up call (an initialiser, the SDK's start) went elsewhere
TOTAL_MEMORY = 0xCD500000  # what GetInfo reports as the application's memory
MEM_CODE_STATIC, MEM_CODE_MUTABLE, MEM_STACK = 0x03, 0x04, 0x0B
PERM = {"r": 1, "w": 2, "x": 4}

CDEF = (
    """
typedef struct HzConfig {
    uint64_t program_id; uint64_t address_space_end; uint64_t code_base, code_size;
    uint64_t heap_base, heap_size; uint64_t alias_base, alias_size; uint64_t stack_base, stack_size;
    uint64_t tls_base, tls_size; uint64_t total_memory;
    int32_t highest_priority, lowest_priority; int32_t min_core, max_core; int32_t default_core;
    int32_t debug_fd;
} HzConfig;
typedef struct HzCrash {
    uint64_t x[31]; uint64_t sp, pc, tpidrro; uint64_t reason, info_addr, info_size;
    uint32_t svc; uint32_t thread_handle;
} HzCrash;
int nx_hz_init(const HzConfig *c);
int nx_hz_add_region(uint64_t addr, uint64_t size, uint32_t type, uint32_t perm);
uint32_t nx_hz_start_main(uint64_t entry, uint64_t stack_top, int32_t priority, int32_t core,
                          uint64_t host_stack_bytes);
int nx_hz_wait_exit(void);
void nx_hz_crash(HzCrash *out);
uint64_t nx_counter(void);
typedef struct HzBoot {
    uint64_t entry; uint64_t inits[256]; uint32_t ninits; uint32_t _pad;
    uint64_t sdk_start; uint64_t nn_main;
    uint64_t init_libc0, os_initialize, init_libc1, diag_startup, init_sdk_module, init_abort_observer,
             init_startup, init_libc2, finalize_sdk_module, os_quick_exit;
    uint64_t boot_slot, notify_slot, initializator_slot;
} HzBoot;
int nx_hz_set_boot(const HzBoot *b);
void nx_lift_setup(const char *bundle, const char *python, const char *pythonpath);
int nx_lift_add_env(const char *kv);
void nx_lift_report(int status);
"""
    + NXCPU_CDEF
    + homebrew.CDEF
    + spin.CDEF
)


def load_manifest(bundle: Path) -> dict:
    try:
        m = json.loads((bundle / "manifest.json").read_text())
    except (OSError, ValueError) as e:
        raise NxError(f"not a bundle: {e}", path=str(bundle / "manifest.json")) from None
    if m.get("kind") != "horizon":
        raise NxError(f"bundle kind {m.get('kind')!r} is not a Horizon program", path=str(bundle / "manifest.json"), field="kind")
    for key in ("process", "image", "modules"):
        if key not in m:
            raise NxError("manifest lacks this field", path=str(bundle / "manifest.json"), field=key)
    return m


def _perm(prot: str) -> int:
    return sum(v for k, v in PERM.items() if k in prot)


def map_image(image: LinkedImage, space: AddressSpace, stack_size: int) -> list[tuple[Region, int]]:
    """Map the segments and the main stack; returns (region, memory type) for QueryMemory."""
    libc = _libc()
    segs = segment_regions(image.segments)
    stack = Region(space.stack_base, space.stack_base + stack_size, "rw-")
    check_disjoint(segs + [stack])
    for r in segs + [stack]:
        map_fixed(libc, r)
    for s in image.segments:
        ctypes.memmove(s.vaddr, s.data, len(s.data))
    for r in segs:  # guest code is never executed natively: no page needs PROT_EXEC
        prot = (1 if "r" in r.prot or "x" in r.prot else 0) | (2 if "w" in r.prot else 0)
        if prot != 3:
            libc.mprotect(r.start, r.size, prot)
    return [(r, MEM_CODE_MUTABLE if "w" in r.prot else MEM_CODE_STATIC) for r in segs] + [(stack, MEM_STACK)]


def bind_host_functions(ffi: cffi.FFI, lib, manifest: dict, image: LinkedImage, input_script: str | None = None) -> Services:
    """Serve the SDK: bind every host import slot, and each served name a module defines."""
    host = manifest.get("host_imports")
    if not host:
        raise NxError(
            "bundle has no host-import region (made by an older nxrecomp): rebuild it with nxrecomp build", field="host_imports"
        )
    slots = {str(k): int(v) for k, v in host["slots"].items()}
    defined = {name: addr for addr, name in image.symbols.items() if name not in slots}
    services = make_services(manifest, lib.nx_counter, input_script)
    # entry points looked up by name at run time, then the start-up's own, get slots after the
    # link-time ones
    names = [n for n in services.nvn.proc_names() if n not in slots]
    procs = proc_slots(host["base"] + host["size"], names + list(BOOT_SLOTS) + list(homebrew.SLOTS))
    services.nvn.proc_addresses = {**{n: a for n, a in slots.items() if n.startswith("nvn")}, **{n: procs[n] for n in names}}
    for n, a in procs.items():
        image.symbols[a] = n
    services.registry.bind(ffi, lib, {**slots, **{n: procs[n] for n in names}}, defined)
    services.boot_slots = {n: procs[n] for n in BOOT_SLOTS + homebrew.SLOTS}
    return services


BOOT_SLOTS = ("__nx_boot", "__nx_notify_exception_handler_ready", "__nx_call_initializator")
# the older SDKs' start-up sequence rtld runs (C names exported by the sdk module)
OLD_SDK_START = {
    "init_libc0": "__nnDetailInitLibc0",
    "os_initialize": "nnosInitialize",
    "init_libc1": "__nnDetailInitLibc1",
    "diag_startup": "nndiagStartup",
    "init_sdk_module": "nninitInitializeSdkModule",
    "init_abort_observer": "nninitInitializeAbortObserver",
    "init_startup": "nninitStartup",
    "init_libc2": "__nnDetailInitLibc2",
    "finalize_sdk_module": "nninitFinalizeSdkModule",
    "os_quick_exit": "nnosQuickExit",
}


def boot_record(ffi: cffi.FFI, image: LinkedImage, slots: dict[str, int]):
    """What rtld would do after relocating: the modules' initialisers in its order (reverse
    load order; DT_INIT, or DT_INIT_ARRAY for a module without one), and the SDK's start-up
    (nn::init::Start, or the older __nnDetailInitLibc0 .. nnMain sequence) when the modules
    export it; otherwise the program's own entry."""
    inits: list[int] = []
    for m in reversed(image.modules):
        inits += [m.init] if m.init else list(m.init_array)
    if len(inits) > 256:
        raise NxError(f"{len(inits)} module initialisers (at most 256 are supported)")
    by_name: dict[str, int] = {}
    for addr, name in sorted(image.symbols.items()):
        by_name.setdefault(name, addr)
    b = ffi.new("HzBoot *")
    b.entry = image.entry
    b.ninits = len(inits)
    for i, a in enumerate(inits):
        b.inits[i] = a
    b.sdk_start = next((a for n, a in by_name.items() if n.startswith("_ZN2nn4init5StartE")), 0)
    b.nn_main = by_name.get("nnMain", 0)
    for field, name in OLD_SDK_START.items():
        setattr(b, field, by_name.get(name, 0))
    b.boot_slot, b.notify_slot, b.initializator_slot = (slots[n] for n in BOOT_SLOTS)
    how = "nn::init::Start" if b.sdk_start else "nnMain" if b.nn_main else f"entry {image.entry:#x}"
    log.info("start-up: %d module initialisers, then %s", len(inits), how)
    return b


def write_frame_times(services: Services) -> None:
    """Milliseconds between presents, one per line, where cpu_host.frame_times_file says; and
    the audio output finalised (a WAV file renamed into place)."""
    from nxrecomp.common import settings

    if services.audio is not None:
        services.audio.close()

    path = settings.get("cpu_host", "frame_times_file")
    if not path:
        return
    t = services.nvn.present_times
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text("".join(f"{(b - a) * 1000:.3f}\n" for a, b in zip(t, t[1:])))
    os.replace(tmp, path)


def run(bundle: str | Path, debug_fd: int = 1, input_script: str | None = None) -> int:
    """Run the bundle until the guest exits; returns the exit status (0, or 134 after a crash
    report on stderr)."""
    held: list[Services] = []
    # before any thread exists: a SIGTERM/SIGINT then ends the run as an exit does (stop.py)
    stop.install(lambda: write_frame_times(held[0]) if held else None)
    bundle = Path(bundle).resolve()
    manifest = load_manifest(bundle)
    proc = manifest["process"]
    image = LinkedImage.from_json(manifest["image"], bundle)
    space = address_space(int(proc["address_space_bits"]))
    check_modules_fit(space, manifest["modules"])
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    try:
        lib = ffi.dlopen(str(bundle / "game.so"))
    except OSError as e:
        raise NxError(f"cannot load: {e}", path=str(bundle / "game.so")) from None
    from cpu_host.runner import lift_on_miss_env, setup_lift_on_miss

    lift_on_miss_env(dict(os.environ))
    setup_lift_on_miss(ffi, lib, bundle)  # lift on miss: the helper lifts what the build missed
    mapped = map_image(image, space, int(proc["main_thread_stack_size"]))
    cfg = ffi.new(
        "HzConfig *",
        {
            "program_id": proc["program_id"],
            "address_space_end": space.end,
            "code_base": space.code_base,
            "code_size": space.code_size,
            "heap_base": space.heap_base,
            "heap_size": space.heap_size,
            "alias_base": space.alias_base,
            "alias_size": space.alias_size,
            "stack_base": space.stack_base,
            "stack_size": space.stack_size,
            "tls_base": space.tls_base,
            "tls_size": space.tls_size,
            "total_memory": TOTAL_MEMORY,
            "highest_priority": proc["highest_priority"],
            "lowest_priority": proc["lowest_priority"],
            "min_core": proc["min_core"],
            "max_core": proc["max_core"],
            "default_core": proc["main_thread_core"],
            "debug_fd": debug_fd,
        },
    )
    rc = lib.nx_hz_init(cfg)
    if rc != 0:
        raise NxError(f"cannot reserve the heap or TLS region: {os.strerror(-rc)}", field="address space")
    for region, mtype in mapped:
        lib.nx_hz_add_region(region.start, region.size, mtype, _perm(region.prot))
    services = bind_host_functions(ffi, lib, manifest, image, input_script)
    held.append(services)
    sys.stdout.flush()
    log.info(
        "starting %s: entry %#x, main thread priority %d on core %d",
        proc["name"],
        image.entry,
        proc["main_thread_priority"],
        proc["main_thread_core"],
    )
    if lib.nx_hz_set_boot(boot_record(ffi, image, services.boot_slots)) != 0:
        raise NxError("cannot bind the start-up slots")
    hb = homebrew.plan(manifest, {n: services.boot_slots[n] for n in homebrew.SLOTS}, image.entry)
    start = services.boot_slots["__nx_boot"]
    if hb is not None:
        from nxrecomp.common import settings

        homebrew.place_nro(hb, manifest, Path(settings.get("cpu_host", "sd_dir")).expanduser())
        hb.map_config(lib)
        hb.bind(ffi, lib)
        start = hb.slots["__hb_start"]
    handle = lib.nx_hz_start_main(
        start,
        space.stack_base + int(proc["main_thread_stack_size"]),
        proc["main_thread_priority"],
        proc["main_thread_core"],
        HOST_STACK,
    )
    if handle == 0:
        raise NxError("cannot start the main thread")
    if hb is not None:  # homebrew start-ups may end in `b .` after main returns
        spin.SpinWatch(ffi, lib, lambda fns: spin.end_parked(proc["name"], fns, lambda: write_frame_times(services))).start()
    how = lib.nx_hz_wait_exit()
    lib.nx_lift_report(0)  # the run's summary counts the functions lifted at run time
    write_frame_times(services)
    if how != EXIT_CRASH:
        if hb is not None and hb.exit_code is not None:
            print(f"notice: {proc['name']} exited with code {hb.exit_code & 0xFFFFFFFF:#x}", file=sys.stderr, flush=True)
            return hb.status()
        return 0
    crash = ffi.new("HzCrash *")
    lib.nx_hz_crash(crash)
    regions = [r for r, _t in mapped]

    def readable(addr: int, n: int) -> bool:
        return any(r.start <= addr and addr + n <= r.end and "r" in r.prot for r in regions)

    mods = [(m["base"], m["base"] + m["size"], m["name"]) for m in manifest["modules"]]
    host = manifest.get("host_imports")
    if host:
        mods.append((host["base"], host["base"] + host["size"] + 0x10000, "host"))
    sym = Symbolizer(mods, sorted(image.symbols.items()))
    from nxrecomp.common import log as nxlog

    nxlog.flush()  # the log first, then the report
    host_fault = services.registry.describe_fault(int(crash.reason)) if crash.svc == HZ_CRASH_HOST else None
    if crash.svc == HZ_CRASH_BOOT:
        host_fault = (
            f"start-up call of {sym.name(int(crash.reason))} did not return to the host (it went to {int(crash.info_addr):#x})"
        )
    print(report(crash, sym, readable, host_fault), file=sys.stderr, flush=True)
    return CRASH_STATUS
