"""The nn:: SDK served by the host (cpu_host/horizon/hle): our guest programs call nn::fs,
nn::os, nn::time, nn::settings, nn::oe and nn::hid by their public mangled names; the linker
binds the names no module defines to host-import slots and the runner serves them.  Each
expected line follows from nn::fs's documented behaviour (results are module 2 with the
description of switchbrew's public error table) or from the inputs the test wrote."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cpu_host.horizon.hle.savedata import SaveStore
from examples.horizon_hello.build_exefs import build_exefs
from recompiler.formats.pack_npdm import NpdmSpec
from recompiler.formats.pack_romfs import pack_romfs
from recompiler.horizon import recompile_exefs
from tests.horizon.hz_build import ROOT, nxrecomp

PROGRAM_ID = 0x0100ABCD00020000
BIG = bytes((i * 7 + 3) & 0xFF for i in range(70000))
ROMFS = {"/hello.txt": b"hello, romfs\n", "/data/big.bin": BIG}


def fs_result(desc: int) -> str:
    return f"{2 | desc << 9:x}"


def fnv1a(data: bytes) -> str:
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return f"{h:x}"


def build(program: str | Path, tmp: Path, romfs: Path | None = None) -> Path:
    name = Path(program).stem
    exefs = build_exefs(program, tmp / f"{name}_exefs", NpdmSpec(name=name, program_id=PROGRAM_ID))
    recompile_exefs(exefs, tmp / f"{name}_bundle", romfs=romfs)
    return tmp / f"{name}_bundle"


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hzhle")


@pytest.fixture(scope="module")
def fs_bundle(work) -> Path:
    rom = work / "rom.bin"
    rom.write_bytes(pack_romfs(ROMFS))
    return build("fs", work, rom)


def run_env(save_dir: Path, **extra: str) -> dict:
    return {**os.environ, "NXRECOMP_CPU_HOST_SAVE_DIR": str(save_dir), **extra}


def test_fs_time_settings_hid(fs_bundle, work) -> None:
    script = work / "input.txt"
    script.write_text("# frame buttons lx ly\n0 A+Right 100 -200\n10 B\n")
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(fs_bundle), "--input", str(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=run_env(
            work / "saves", NXRECOMP_CPU_HOST_DETERMINISTIC="1", NXRECOMP_CPU_HOST_LANGUAGE="fr", NXRECOMP_CPU_HOST_DOCKED="0"
        ),
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "MountRom: 0",
        f"MountRom again (name taken): {fs_result(60)}",  # MountNameAlreadyExists
        f"read rom:/hello.txt: result 0 size 13 fnv {fnv1a(ROMFS['/hello.txt'])}",
        f"read rom:/data/big.bin: result 0 size 70000 fnv {fnv1a(BIG)}",
        "entry type rom:/data: 0 0",  # DirectoryEntryType_Directory
        "entry type rom:/hello.txt: 0 1",  # DirectoryEntryType_File
        f"entry type rom:/nope: {fs_result(1)}",  # PathNotFound
        f"open missing: {fs_result(1)}",
        f"open rom for write: {fs_result(6300)}",  # the RomFS is read-only
        f"open unmounted: {fs_result(1002)}",  # no such mount: TargetNotFound
        f"read past end: {fs_result(3005)}",  # ReadFile without a size out: OutOfRange
        "sized read past end: 0 got 3",  # with one: the bytes that exist (13 - 10)
        "EnsureSaveData: 0",
        "MountSaveData: 0",
        "create dir: 0",
        f"create dir again: {fs_result(2)}",  # PathAlreadyExists
        f"create file in missing dir: {fs_result(1)}",
        "create file: 0",
        f"write past end without append: {fs_result(6201)}",  # needs OpenMode_AllowAppend
        "write inside: 0",
        f"delete open file: {fs_result(7)}",  # TargetLocked
        "append write: 0",
        "after append: size 8 text abcdefgh",
        "commit: 0",
        f"after remount: committed 0 uncommitted {fs_result(1)}",  # Unmount drops what was not committed
        "tick frequency: 19200000",  # Horizon's counter runs at 19.2 MHz
        "sleep 20ms measured >= 20ms: 1",
        "ConvertToTimeSpan(19200000): 1000",  # one second of ticks, in ms
        "time: 0 20454",  # deterministic clock: 2026-01-01 (day 20454)
        "language: fr 1",  # from settings cpu_host.language
        "operation mode: 0 performance mode: 0",  # handheld (cpu_host.docked = 0)
        "npad 0: buttons 4001 sticks 100 -200 0 0 attrs 1 sampling 1",  # frame 0 of the script: A (bit 0) + Right (bit 14)
        "npad 3: buttons 0 attrs 0",  # an npad nobody connected
    ]
    # what the guest committed is on the disk: the save of user (hi, lo) as one file, a.bin deleted
    store = SaveStore(work / "saves")
    tree = store.load(PROGRAM_ID, "user-" + bytes.fromhex("11223344556677880123456789abcdef").hex())
    assert tree.dirs == {"/", "/slot"} and tree.files == {}


def _crash_lines(r: subprocess.CompletedProcess) -> list[str]:
    assert r.returncode == 134, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    return r.stderr.strip().splitlines()


def test_unserved_import_is_a_named_crash(work) -> None:
    src = work / "unserved.c"
    src.write_text(
        '#include "hz_sdk.h"\n'
        'void nn_missing(int) __asm__("_ZN2nn7missing8FunctionEi");\n'
        'int hz_main(void) { hz_printf("before\\n"); nn_missing(3); hz_printf("after\\n"); return 0; }\n'
    )
    b = build(src, work)
    r = nxrecomp("hz-run", str(b), timeout=60)
    lines = _crash_lines(r)
    assert r.stdout == "before\n"
    assert "the guest called _ZN2nn7missing8FunctionEi" in lines[0] and "the host does not serve" in lines[0]
    assert "main+" in lines[1] and "hz_main" in lines[1]  # pc: the call site in hz_main


def test_bad_guest_pointer_is_a_named_crash(work) -> None:
    """A path pointer into unmapped memory: the host never touches it; the report names the
    function and the address."""
    src = work / "badptr.c"
    src.write_text(
        '#include "hz_sdk.h"\n#include "nn.h"\n'
        "int hz_main(void) { NnFileHandle f; nnfsOpenFile(&f, (const char *)0x10, NN_FS_READ); return 0; }\n"
    )
    b = build(src, work)
    lines = _crash_lines(nxrecomp("hz-run", str(b), timeout=60))
    assert "nn::fs::OpenFile(FileHandle*, const char*, int)" in lines[0]
    assert "at 0x10 are not readable guest memory" in lines[0]


def test_preemption_at_indirect_calls(work) -> None:
    """A computing thread that makes indirect calls hands its core to a better thread that
    became ready (without the preemption point this program never ends)."""
    b = build("preempt", work)
    for _ in range(2):
        r = nxrecomp("hz-run", str(b), timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines() == [
            "rule: a ready thread of better priority preempts a computing thread on its core",
            "high (prio 30) ran while the worker (prio 50) computed on its core",
            "worker saw high run first: 1",
            "done",
        ]


def test_save_survives_sigkill(work) -> None:
    """Kill the CPU host with SIGKILL at random points of a commit loop, many times: the save is
    always exactly one commit (round r in 'round', every byte of a.bin r & 0xff, of b.bin
    7r & 0xff), at least the last commit the guest reported, and the next run goes on from it."""
    b = build("savegame", work)
    saves = work / "kill_saves"
    store = SaveStore(saves)
    rng = random.Random(1234)
    last_seen = 0
    kills = mid_commit = 0
    for attempt in range(12):
        p = subprocess.Popen(
            [sys.executable, "-m", "nxrecomp", "hz-run", str(b)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=run_env(saves),
        )
        # wait until it runs its loop (start-up takes ~1 s), then at a random moment kill it
        first = p.stdout.readline().decode()
        assert first.startswith("start at round "), (first, p.stderr.read() if p.poll() is not None else "")
        start = int(first.split()[-1])
        assert start >= last_seen
        time.sleep(rng.uniform(0.0, 0.4))
        p.send_signal(signal.SIGKILL)
        out, _err = p.communicate(timeout=30)
        kills += 1
        reported = [int(line.split()[1]) for line in out.decode().splitlines() if line.startswith("committed ")]
        tmp = saves / f"{PROGRAM_ID:016x}" / "debug" / "save.nxsave.tmp"
        mid_commit += tmp.exists()  # killed between writing the new commit and its rename
        tree = store.load(PROGRAM_ID, "debug")
        assert not tmp.exists()  # the leftover of a killed commit is dropped
        r = int.from_bytes(tree.files["/round"], "little")
        assert tree.files["/a.bin"] == bytes([r & 0xFF]) * 65536
        assert tree.files["/b.bin"] == bytes([(7 * r) & 0xFF]) * 65536
        newest = reported[-1] if reported else start
        assert newest <= r <= newest + 1, (newest, r)  # the one being committed may have landed
        last_seen = r
    assert kills == 12 and last_seen > 0
    print(f"{kills} kills, {mid_commit} of them between a commit's write and its rename; last round {last_seen}")


def test_module_initialisers_in_rtld_order(work) -> None:
    """rtld runs the modules' initialisers in reverse load order (sdk before main), before the
    program starts (public fact: open-source rtld reimplementations' module-init loop)."""
    r = nxrecomp("hz-run", str(build("startup", work)), timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "rule: initialisers run before the entry, modules in reverse load order (sdk, then main)",
        "sdk init 1, main init 2, sdk ready at main's init 1",
    ]


def test_older_sdk_start_sequence(work) -> None:
    """A program exporting nnMain starts as rtld starts an older-SDK program: the libc/os/diag/
    init functions in rtld's order, the initialisers, nnMain, the finalisers, ExitProcess —
    not at the module's own entry."""
    r = nxrecomp("hz-run", str(build("sdkstart", work)), timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "__nnDetailInitLibc0",
        "nnosInitialize handle_ok=1 arg=0",
        "__nnDetailInitLibc1",
        "nndiagStartup",
        "nninitInitializeSdkModule",
        "nninitInitializeAbortObserver",
        "nninitStartup",
        "__nnDetailInitLibc2",
        "main initialiser (sdk's ran: 1)",
        "nnMain on the main thread: 1",
        "nninitFinalizeSdkModule",
        "nnosQuickExit",
    ]


def test_newer_sdk_start_with_callbacks(work) -> None:
    """A program exporting nn::init::Start gets the main thread's handle, the argument address
    and rtld's two callbacks; the initialisers run when it calls the second one, once."""
    r = nxrecomp("hz-run", str(build("initstart", work)), timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "nn::init::Start handle_ok=1 arg=0",
        "initialisers before the callback: 0",
        "main initialiser",
        "after the callback: sdk init 1",
        "main returns",
    ]


def test_memory_svcs(work) -> None:
    """MapMemory/UnmapMemory (heap pages lent to the stack region, the source locked),
    SetMemoryPermission, SetMemoryAttribute, Map/UnmapPhysicalMemory; each line states its
    rule (results: InvalidAddress cc01, InvalidSize ca01, InvalidCurrentMemory d401,
    InvalidNewMemoryPermission d801, InvalidMemoryRegion dc01, InvalidCombination e801,
    InvalidState fa01; memory types: Normal 2, Heap 5, Stack b; attribute 1 locked, 8 uncached)."""
    r = nxrecomp("hz-run", str(build("memory", work)), timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "rule: MapMemory's destination must lie in the stack region: dc01",
        "rule: addresses are page-aligned, sizes whole pages: cc01 ca01",
        "MapMemory: 0",
        "rule: the destination shows the source's bytes: 1",
        "rule: the destination is Stack memory, RW: type b perm 3 attr 0 size 10000",
        "rule: the source is locked, inaccessible: type 5 perm 0 attr 1 size 10000",
        "rule: the heap keeps its size while lent out: fa01",
        "rule: a mapped source cannot be mapped again: d401",
        "rule: UnmapMemory needs the same triple: d401",
        "UnmapMemory: 0",
        "rule: writes through the destination are in the source: 1",
        "rule: the source is heap RW again: type 5 perm 3 attr 0 size 400000",
        "rule: the destination is unmapped again: type 0 perm 0 attr 0",
        "SetMemoryPermission(R): 0",
        "rule: the pages are read-only heap: type 5 perm 1 attr 0 size 1000",
        "rule: execute is not a heap permission: d801",
        "SetMemoryPermission(RW): 0 (byte d)",
        "SetMemoryAttribute(uncached): 0",
        "rule: the attribute shows in QueryMemory: type 5 perm 3 attr 8 size 2000",
        "rule: only the uncached bit may change: e801",
        "MapPhysicalMemory: 0",
        "rule: fresh pages read zero and take writes: 1 5",
        "rule: physical memory mapped in the alias region is Normal RW: type 2 perm 3 attr 0 size 200000",
        "rule: outside the alias region: dc01",
        "UnmapPhysicalMemory: 0",
        "rule: unmapped again: type 0 perm 0 attr 0",
    ]
