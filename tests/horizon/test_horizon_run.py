"""Step 2 of the Horizon slice: the recompiled guest runs on the host-served kernel.  Each
expected line follows from a Horizon rule (stated beside it) or from the main.npdm the test
wrote; the guest prints what it observed through OutputDebugString."""

from __future__ import annotations

import re

import pytest

from recompiler.formats.pack_npdm import NpdmSpec
from tests.horizon.hz_build import make_bundle, nxrecomp

PROGRAM_ID = 0x0100ABCD00010000


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hzrun")
    spec = NpdmSpec(name="hello", program_id=PROGRAM_ID, main_thread_priority=44, main_thread_core=0)
    return {"hello": make_bundle("hello", tmp, spec), "crash": make_bundle("crash", tmp)}


def test_hello(bundles) -> None:
    r = nxrecomp("hz-run", str(bundles["hello"]), timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    ticks = int(lines[2].split(": ")[1])
    # GetSystemTick runs at 19.2 MHz: a 50 ms sleep lasts at least 960000 ticks
    assert 960000 <= ticks < 960000 * 4, ticks
    assert lines[:2] + lines[3:] == [
        "hello from horizon",
        "relocated pointer: 7",  # ABS64 bound by name to main's own .data
        "SetHeapSize(0x1000): ca01",  # sizes are multiples of 2 MiB: InvalidSize
        "SetHeapSize(0x400000): 0, in heap region: 1",  # the heap lies inside GetInfo(4/5)'s region
        "heap words: 12345678 9abcdef0",  # the whole heap is usable memory
        "QueryMemory(heap): 0 addr_ok=1 size=400000 type=5 perm=3",  # Heap, RW, heap-sized block
        "QueryMemory(code): 0 type=3 perm=5",  # .text is CodeStatic, R-X
        "QueryMemory(data): 0 type=4 perm=3",  # .data is CodeMutable, RW
        "QueryMemory(stack): 0 perm=3",
        "heap shrunk to: 200000",  # SetHeapSize also shrinks
        f"program id: 0 {PROGRAM_ID:x}",  # GetInfo(18) = ACI0's program id
        "core mask: 0 7",  # ThreadInfo cores 0..2
        "priority mask: 0 ffffffff0000000",  # ThreadInfo priorities 28..59
        "unknown info id: f001",  # InvalidEnumValue
        "info of a bad handle: e401",  # InvalidHandle
        "OutputDebugString(unmapped): d401",  # InvalidCurrentMemory, the host goes on
        "QueryMemory(out to read-only code): d401",
        "WaitSynchronization(65 handles): ee01",  # at most 64 handles: OutOfRange
        "WaitSynchronization(unmapped list): d401",
        "main thread priority: 44 on core 0",  # main.npdm's main thread priority and core
        "bye",
    ]


def test_break_writes_a_crash_report(bundles) -> None:
    r = nxrecomp("hz-run", str(bundles["crash"]), timeout=60)
    assert r.returncode == 134, (r.returncode, r.stderr)
    assert r.stdout == "about to break at depth 2\n"
    assert "guest crash: svcBreak(reason=0x0" in r.stderr
    frames = re.findall(r"#\d+\s+0x[0-9a-f]+ (\w+)\+0x[0-9a-f]+ (\w+)\+", r.stderr)
    # the guest's call chain, innermost first, named from the modules' symbols
    assert frames[:5] == [
        ("sdk", "svcBreak"),
        ("main", "crash_innermost"),
        ("main", "crash_middle"),
        ("main", "hz_main"),
        ("sdk", "hz_sdk_start"),
    ], r.stderr


def test_not_a_horizon_bundle(tmp_path) -> None:
    r = nxrecomp("hz-run", str(tmp_path))
    assert r.returncode == 2 and "manifest.json" in r.stderr and "Traceback" not in r.stderr
