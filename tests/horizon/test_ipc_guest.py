"""The whole IPC path from a recompiled guest: ``programs/ipc.c`` builds HIPC/CMIF/TIPC
messages from the public layout (switchbrew IPC_Marshalling, libnx sf/*.h) in its TLS and calls
the IPC SVCs; every expected line follows from a documented value (named beside it: switchbrew
SVC / Error_codes pages, Atmosphère's result definitions, libnx's structures) or from the inputs
this test wrote (scripted A button, deterministic clock, SD folder)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.horizon.hz_build import ROOT, make_bundle

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")  # cpu_host.shared_font's default
FIXED_EPOCH = 1_767_225_600  # cpu_host/horizon/hle/clock.py: deterministic runs start 2026-01-01


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hzipc")
    bundle = make_bundle("ipc", tmp)
    script = tmp / "input.txt"
    script.write_text("0 A\n")  # from frame 0: A held (HidNpadButton_A = bit 0)
    env = {
        **os.environ,
        "NXRECOMP_CPU_HOST_SD_DIR": str(tmp / "sd"),
        "NXRECOMP_CPU_HOST_DETERMINISTIC": "1",
        "NXRECOMP_CPU_HOST_SAVE_DIR": str(tmp / "saves"),
        "NXRECOMP_CPU_HOST_MAX_FRAMES": "30",
    }
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle), "--input", str(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    return r, tmp


def test_ipc_guest_observations(run) -> None:
    r, tmp = run
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    time_line = next(x for x in lines if x.startswith("GetCurrentTime"))
    assert FIXED_EPOCH <= int(time_line.split()[-1], 16) < FIXED_EPOCH + 60, time_line
    lifo = next(x for x in lines if x.startswith("full-key lifo"))
    count = int(lifo.split("count=")[1].split()[0])
    assert 1 <= count <= 17, lifo  # a lifo holds at most 17 entries
    lines = [x for x in lines if x not in (time_line, lifo)]
    assert lines == [
        "GetInfo(ProgramId, 0xFFFF8001): 0",  # 0xFFFF8001 is the current process (switchbrew)
        "GetInfo(ProgramId, 0xFFFF8000): e401",  # ... 0xFFFF8000 the current thread: InvalidHandle
        "GetThreadPriority(0xFFFF8000): 0",
        "GetProcessId(0xFFFF8001): 0",
        "ConnectToNamedPort(nope): f201",  # NotFound (121)
        "ConnectToNamedPort(12 chars): ee01",  # no NUL within 12 bytes: OutOfRange (119)
        "ConnectToNamedPort(sm:): 0",
        "GetServiceHandle before RegisterClient: 0 415",  # sm InvalidClient (21, 2)
        "RegisterClient: 0 0",
        "GetFirmwareVersion: 0 0 15.0.1 display=15.0.1",  # the version we report; display string at 0x68
        "ConvertCurrentObjectToDomain: 0 0 id=1",  # the session's object becomes domain object 1
        "QueryPointerBufferSize: 0 0 nonzero=1",
        "OpenApplicationProxy: 0 0 objects=1",  # one output object, as a domain id
        "GetCommonStateGetter: 0 0",
        "GetEventHandle: 0 0 copies=1",  # the event comes as a copy handle
        "message event signalled: 0 index=0",  # a message waits: the event is signalled
        "ReceiveMessage: 0 0 message=15",  # FocusStateChanged, first message of an application
        "ReceiveMessage again: 0 680",  # am NoMessage (128, 3)
        "message event after: ea01",  # empty queue: the wait times out (TimedOut 117)
        "GetCurrentFocusState: 0 0 1",  # InFocus
        "request to domain object 99: 0 3d80b",  # hipc DomainObjectNotFound (11, 492)
        "close domain object: 0 0",
        "request to the closed object: 0 3d80b",
        "TIPC GetServiceHandle(psm): 0 0 moves=1",  # TIPC: type 16 + 1, result first data word
        "GetBatteryChargePercentage: 0 0 100",
        "time shared memory: map 0 same source 1 clock matches 1",  # libnx's reading gives GetCurrentTime
        "GetSharedMemoryHandle: 0 0 copies=1",
        "MapSharedMemory(RW of an R object): d801",  # InvalidNewMemoryPermission (108)
        "MapSharedMemory(wrong size): ca01",  # InvalidSize (101)
        "MapSharedMemory: 0",
        "QueryMemory(shared): type=6 perm=1 size=40000",  # MemType_SharedMem, R, hid's 0x40000 bytes
        "npad styles: player1=1 handheld=2",  # NpadFullKey (bit 0), NpadHandheld (bit 1)
        "UnmapSharedMemory: 0",
        "SetCurrentProcess: 0 0",
        "OpenSdCardFileSystem: 0 0",
        "CreateFile: 0 0",
        "CreateFile again: 0 402",  # fs PathAlreadyExists (2, 2)
        "OpenFile: 0 0",
        "Write: 0 0",
        "GetSize: 0 0 17",
        "Read: 0 0 read 8 'over IPC'",  # 8 bytes from offset 8
        "OpenFile(missing): 0 202",  # fs PathNotFound (2, 1)
        "Log: 0 0",
        f"pl:u font: map 0 size={FONT.stat().st_size} sfnt=100",  # sfnt version 00 01 00 00 read as LE u32
        "OpenDisplay(Bogus): 0 e72",  # vi NotFound (114, 7)
        "GetDisplayResolution: 0 0 1920x1080",  # docked (cpu_host.docked's default)
        "vsync: 6 waits, about 60 Hz 1",
        "OpenLayer: 0 0 parcel ok 1 binder 1",  # libnx's checks of the parcel header
        "exit request: wait 0, ReceiveMessage 0 0 message=4",  # ExitRequested, after cpu_host.max_frames (30)
        "SendSyncRequest(bad handle): e401",  # InvalidHandle
        "SendSyncRequest(thread handle): e401",  # a thread is no session
        "A buffer at 0x10: d401",  # InvalidCurrentMemory (106)
        "B buffer in read-only data: d401",  # a receive buffer must be writable
        "bogus copy handle: e401",
        "1023 data words: e801",  # larger than the 0x100-byte TLS: InvalidCombination
        "bad magic: 0 1a60a",  # cmif InvalidInHeader (10, 211)
        "command type 9: 0 3260b",  # hipc UnknownCommandType (11, 403)
        "user buffer unaligned: cc01",  # InvalidAddress (102)
        "user buffer size 0x800: ca01",  # InvalidSize: a page multiple
        "user buffer request: 0 result=0",
        "CloseHandle(psm): 0",
        "SendSyncRequest(closed): e401",
        "SetMemoryPermission(data, R): 0 type=4 perm=1",  # CodeMutable may be reprotected (a RELRO)
        "SetMemoryPermission(code, R): d401",  # CodeStatic may not
        "CreateTransferMemory(perm W): d801",  # none, R or RW only: InvalidNewMemoryPermission
        "CreateTransferMemory: 0 perm=0 attr=1",  # the owner keeps no access; the pages are Locked
        "CreateTransferMemory(lent pages): d401",  # already lent: InvalidCurrentMemory
        "MapTransferMemory(wrong size): ca01",  # the whole object: InvalidSize
        "MapTransferMemory: 0 type=d perm=3 sees=11",  # MemType_TransferMemIsolated, the owner's bytes
        "UnmapTransferMemory: 0",
        "CloseHandle(transfer memory): 0",
        "owner after: perm=3 attr=0 value=22",  # back to the owner, with what was written
        "nv Open before Initialize: 0 0 error=3",  # NvError NotInitialized (libnx nvConvertError)
        "nv Initialize: 0 0 error=0",
        "nv Open(/dev/nvmap): 0 0 error=0",
        "nvmap CREATE: 0 error=0 handle nonzero 1",
        "nvmap ALLOC: 0 error=0",
        "nvmap PARAM(base): error=0 matches 1",  # NvMapParam_Base (3) = the ALLOC address
        "nvmap GET_ID/FROM_ID: error=0 same handle 1",
        "nvmap CREATE(0): error=11",  # NvError BadValue
        "nvhost-ctrl SYNCPT_WAIT: error=5",  # no GPU work moves syncpoint 0: Timeout
        "bye",
    ]
    assert "entry sampling match=1 buttons=1 attrs=1" in lifo  # scripted A; IsConnected
    assert (tmp / "sd" / "hello.txt").read_text() == "written over IPC\n"
    assert "hello through lm" in r.stderr  # lm's message text reaches the log


def test_unserved_command_is_named(tmp_path) -> None:
    """With cpu_host.ipc_unknown = fatal (the default) a command the host does not serve ends
    the program with a report naming service, interface and command id."""
    from tests.horizon.hz_build import bundle_from_c

    src = (ROOT / "examples/horizon_hello/programs/ipc.c").read_text()
    src = src.replace(
        "    /* appletOE as a domain",
        "    m = (Msg){.type = 4};\n    build(&m, 9999, 0, 0, 0);\n    call(setsys, &r, 0, 0);\n    /* appletOE as a domain",
        1,
    )
    bundle = bundle_from_c(src, {}, tmp_path / "w")
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 134, r.stderr
    assert (
        "IPC: service 'set:sys', interface nn::settings::ISystemSettingsServer, command 9999 is not served by the host"
    ) in r.stderr, r.stderr
    env = {
        **os.environ,
        "NXRECOMP_CPU_HOST_IPC_UNKNOWN": "stub",
        "NXRECOMP_CPU_HOST_SD_DIR": str(tmp_path / "sd"),
        "NXRECOMP_CPU_HOST_SAVE_DIR": str(tmp_path / "saves"),
    }
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 0, r.stderr  # stub: a logged success, the program goes on
    assert r.stdout.splitlines()[-1] == "bye"


def test_return_from_exception_is_a_report(tmp_path) -> None:
    """svcReturnFromException with no exception being handled ends the program with a report."""
    from tests.horizon.hz_build import bundle_from_c

    src = (ROOT / "examples/horizon_hello/programs/ipc.c").read_text()
    src = src[: src.index("int hz_main(void)")] + "int hz_main(void) { svcReturnFromException(0x1234); return 0; }\n"
    bundle = bundle_from_c(src, {}, tmp_path / "w")
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 134, r.stderr
    assert "guest crash: svcReturnFromException(result=0x1234) with no exception to return from" in r.stderr


ROMFS_MAIN = r"""
int hz_main(void) {
    Reply r;
    Msg m;
    uint64_t zero = 0;
    svcConnectToNamedPort(&sm, "sm:");
    m = (Msg){.type = 4, .send_pid = 1};
    build(&m, 0, &zero, 8, 0);
    call(sm, &r, 0, 0);
    Handle fsp = get_service("fsp-srv");
    m = (Msg){.type = 4};
    build(&m, 200, 0, 0, 0);
    Result rc = call(fsp, &r, 0, 0);
    Handle st = r.move[0];
    hz_printf("OpenDataStorageByCurrentProcess: %x %x\n", rc, r.result);
    m = (Msg){.type = 4};
    build(&m, 4, 0, 0, 0);
    rc = call(st, &r, 0, 8);
    hz_printf("GetSize: %x %x %d\n", rc, r.result, (int)u64at(r.data));
    struct { int64_t off; uint64_t size; } rd = {0, 0x50};
    m = (Msg){.type = 4, .nb = 1, .b_addr = {(uint64_t)(uintptr_t)fwbuf}, .b_size = {0x50}};
    build(&m, 0, &rd, sizeof rd, 0);
    rc = call(st, &r, 0, 0);
    hz_printf("Read: %x %x header size %x\n", rc, r.result, (int)u64at(fwbuf));
    return 0;
}
"""


def test_romfs_storage(tmp_path) -> None:
    """fsp-srv OpenDataStorageByCurrentProcess (200): the bundle's RomFS image as an IStorage; its
    first u64 is the RomFS header size, 0x50 (switchbrew RomFS)."""
    from tests.horizon.hz_build import bundle_from_c

    src = (ROOT / "examples/horizon_hello/programs/ipc.c").read_text()
    src = src[: src.index("int hz_main(void)")] + ROMFS_MAIN
    bundle = bundle_from_c(src, {"a.txt": b"hello"}, tmp_path / "w")
    size = (tmp_path / "w" / "rom.bin").stat().st_size
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["OpenDataStorageByCurrentProcess: 0 0", f"GetSize: 0 0 {size}", "Read: 0 0 header size 50"]


THREADS_MAIN = r"""
static Handle psm_s, clock_s, setsys_s;
static volatile int bad[3], done[3];
static char stacks[3][0x8000] __attribute__((aligned(16)));
static uint8_t fw[3][0x100] __attribute__((aligned(16)));

static void worker(void *arg) {
    int id = (int)(uintptr_t)arg;
    Reply r;
    Msg m;
    for (int i = 0; i < 300; i++) {
        m = (Msg){.type = 4};
        build(&m, 0, 0, 0, 0);
        if (call(psm_s, &r, 0, 4) || r.result || u32at(r.data) != 100) bad[id]++;
        m = (Msg){.type = 4};
        build(&m, 0, 0, 0, 0);
        if (call(clock_s, &r, 0, 8) || r.result || u64at(r.data) < 1767225600ull) bad[id]++;
        m = (Msg){.type = 4, .c_mode = 3, .c_addr = (uint64_t)(uintptr_t)fw[id], .c_size = 0x100};
        build(&m, 4, 0, 0, 0);
        if (call(setsys_s, &r, 0, 0) || r.result || fw[id][0] != 15) bad[id]++;
    }
    done[id] = 1;
}

int hz_main(void) {
    Reply r;
    Msg m;
    uint64_t zero = 0;
    svcConnectToNamedPort(&sm, "sm:");
    m = (Msg){.type = 4, .send_pid = 1};
    build(&m, 0, &zero, 8, 0);
    call(sm, &r, 0, 0);
    psm_s = get_service("psm");
    setsys_s = get_service("set:sys");
    Handle tu = get_service("time:u");
    m = (Msg){.type = 4};
    build(&m, 0, 0, 0, 0);
    call(tu, &r, 0, 0);
    clock_s = r.move[0];
    HzThread t[3];
    for (int i = 0; i < 3; i++) {
        hz_thread_create(&t[i], worker, (void *)(uintptr_t)i, stacks[i], sizeof stacks[i], 44, i);
        hz_thread_start(&t[i]);
    }
    for (int i = 0; i < 3; i++) hz_thread_join(&t[i]);
    hz_printf("done %d %d %d bad %d %d %d\n", done[0], done[1], done[2], bad[0], bad[1], bad[2]);
    return 0;
}
"""


def test_ipc_from_three_threads(tmp_path) -> None:
    """Three guest threads on the three cores share sessions (sm:, psm, time, set:sys), 900
    requests each: every reply lands in its own thread's TLS (or C buffer) and is right."""
    from tests.horizon.hz_build import bundle_from_c

    src = (ROOT / "examples/horizon_hello/programs/ipc.c").read_text()
    src = src[: src.index("int hz_main(void)")] + THREADS_MAIN
    bundle = bundle_from_c(src, {}, tmp_path / "w")
    env = {**os.environ, "NXRECOMP_CPU_HOST_DETERMINISTIC": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "hz-run", str(bundle)], cwd=ROOT, capture_output=True, text=True, timeout=180, env=env
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["done 1 1 1 bad 0 0 0"]
