"""``__device__`` globals of NVN compute programs through the real processes (issue 31;
gpu_host/PROTOCOL.md "Global data", cpu_host/horizon/hle/nvn/compute_globals.py).

Kernels of the shader corpus's ``ctl2_globals`` group built at -G (tests/shader_svc/cuda_build.py:
nvcc/NVRTC + ptxas from PyPI, a loud skip where they cannot be fetched): ``g2_virtual`` calls
virtual functions through vtables in ``.nv.global.init`` (code addresses the -G code loads from
global memory and calls with CALL.ABS), ``g2_device_data`` reads initialised arrays, writes a
zero-initialised one and follows a pointer held in global data.  The guest's NVNcomputeGlobals
table is made from the cubin's own relocations (what an offline packager would write: the
region's initialised bytes and code linked for address 0, every relocation against a data symbol
as region offset + addend); the NVN front end asks the real GPU process to place the region,
relocates for the address it answers, translates through a real shader service with the region
as Program.data, and the dispatch on lavapipe equals numpy.  The front end's relocation is
checked against the corpus harness's own loader (``cuda_globals.place`` at the same address:
code, bank 4 and region bytes identical).  A GPU process killed with the dispatch pending is
replaced: the client places the region again (a new process: another address), the program is
relocated and translated for it, and the replayed dispatch gives the same words.  Hostile
placements (overlapping regions, an unknown placement, sizes past the limit, a changed size, an
address that is not the placement's, regions past its end) are refused by name while the process
goes on serving."""

from __future__ import annotations

import io
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from gpu_guest import P, Gpu, gpu_log, shader_service_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shader_svc"))  # the corpus tools

BLOCK = 64
A_OFF, B_OFF, O_OFF, PAR_OFF = 0x400000, 0x410000, 0x420000, 0x430000
CODE_OFF, BANK_OFF, INIT_OFF = 0x10000, 0x200000, 0x300000
KERNELS = ("g2_virtual", "g2_device_data")


def nvn_globals(cubin: bytes, kernel: str, isa: int):
    """(code, banks, region size, init bytes, relocations) of ``kernel`` as a guest hands them to
    nvnProgramSetShaders: linked for region address 0 (cuda_globals.place at 0), each relocation
    against a data symbol of the cubin as (where, kind, bank, offset, addend)."""
    import cuda_build
    import cuda_globals
    from elftools.elf.elffile import ELFFile

    from cpu_host.horizon.hle.nvn import compute_globals as G

    elf = ELFFile(io.BytesIO(cubin))
    offs, size = cuda_globals.layout(elf)
    symtab = elf.get_section_by_name(".symtab")

    def data_off(sym) -> int | None:
        name = elf.get_section(sym["st_shndx"]).name if isinstance(sym["st_shndx"], int) else ""
        return offs[name] + sym["st_value"] if name in offs else None

    placed = cuda_globals.place(cubin, kernel, isa, 0)
    roots = [
        elf.get_section(symtab.get_symbol(r["r_info_sym"])["st_shndx"]).name
        for r in cuda_globals._relocs(elf, ".nv.global.init")
        if data_off(symtab.get_symbol(r["r_info_sym"])) is None
    ]
    code, at = cuda_build.link(cubin, kernel, isa, data_addr=data_off, roots=roots, with_offsets=True)
    assert code == placed.code
    relocs = []

    def each(section: str):
        for r in cuda_globals._relocs(elf, section):
            d = data_off(symtab.get_symbol(r["r_info_sym"]))
            if d is not None:
                yield r, d + r.entry.get("r_addend", 0)

    for r, add in each(".nv.global.init"):
        assert r["r_info_type"] in (2, 4)  # 64-bit S + A
        relocs.append((G.WHERE_DATA, G.KIND_U64, 0, offs[".nv.global.init"] + r["r_offset"], add))
    for r, add in each(".nv.constant4"):
        relocs.append((G.WHERE_BANK, G.KIND_U64, 4, r["r_offset"], add))
    lo, hi = (56, 57) if isa == 86 else (43, 44)
    for sec, base in at.items():
        for r, add in each(sec):
            kind = {lo: G.KIND_LO32, hi: G.KIND_HI32}[r["r_info_type"]]
            relocs.append((G.WHERE_CODE, kind, 0, base + r["r_offset"], add))
    init_end = offs[".nv.global.init"] + elf.get_section_by_name(".nv.global.init")["sh_size"]
    init = placed.image[: -(-init_end // 4) * 4]
    banks = ((4, placed.bank4),) if placed.bank4 else ()
    return code, banks, size, init, relocs


@pytest.fixture(scope="module")
def built():
    """{isa: {kernel name: cubin.Kernel}} of the ctl2_globals group at -G."""
    import cuda_build
    import cuda_corpus as cc
    import nvtools

    out = {}
    for isa in (86, 53):
        try:
            out[isa] = cuda_build.build(cc.group_source("ctl2_globals"), isa, "G")
        except (cuda_build.NoCompiler, nvtools.ToolUnavailable) as e:
            pytest.skip(f"LOUD SKIP: no CUDA compiler/ptxas from PyPI: {e}")
    return out


@pytest.fixture(scope="module")
def shader_service(tmp_path_factory):
    """A real shader service on a loopback port; the front end's translate_shader reaches it."""
    with shader_service_env(tmp_path_factory.mktemp("shcache")):
        yield


@pytest.fixture(scope="module")
def env(built, shader_service):
    g = Gpu()
    yield g
    g.close()


def set_shaders(g, slot: int, isa: int, k, table=None, flags: int = 1) -> int:
    """nvnProgramInitialize + nvnProgramSetShaders of ``k`` with its NVNcomputeGlobals (made by
    ``nvn_globals``, or ``table`` = (size, init, relocs) given)."""
    from cpu_host.horizon.hle.nvn.tables import SHADER_MAGIC

    code, banks, size, init, relocs = nvn_globals(k.globals_cubin, k.name, isa)
    if table is not None:
        size, init, relocs = table
    banks = (*k.banks, *banks)
    s, ffi = g.svc, g.ffi
    ptr = g.at(slot)
    g.call(s.program_initialize, ptr)
    g.view[CODE_OFF : CODE_OFF + len(code)] = code
    rows, at = [], BANK_OFF
    for num, data in banks:
        g.view[at : at + len(data)] = data
        rows.append((num, len(data), g.base + at))
        at += (len(data) + 255) & ~255
    g.view[INIT_OFF : INIT_OFF + len(init)] = init
    tab = ffi.new("uint64_t[]", [w for n, sz, a in rows for w in (n | sz << 32, a)] or [0])
    rel = ffi.new("uint8_t[]", b"".join(struct.pack("<IIIIQq", w, kd, b, 0, o, a) for w, kd, b, o, a in relocs) or b"\0")
    glob = ffi.new(
        "uint64_t[4]",
        [size | len(init) << 32, g.base + INIT_OFF, len(relocs), int(ffi.cast("uintptr_t", rel))],
    )
    tab_at, glob_at = int(ffi.cast("uintptr_t", tab)), int(ffi.cast("uintptr_t", glob))
    ctrl = ffi.new(
        "uint32_t[14]",
        [SHADER_MAGIC, 1, isa, len(code), BLOCK, 1, 1, k.cbank0_size, len(rows), flags]
        + [tab_at & 0xFFFFFFFF, tab_at >> 32, glob_at & 0xFFFFFFFF, glob_at >> 32],
    )
    data = ffi.new("uint64_t[2]", [g.base + CODE_OFF, int(ffi.cast("uintptr_t", ctrl))])
    g._keep = (ctrl, data, tab, rel, glob)
    assert g.call(s.program_set_shaders, ptr, 1, int(ffi.cast("uintptr_t", data))) == 1
    return ptr


def case_of(name: str):
    import cuda_corpus as cc

    return next(c for c in cc.CASES if c.name == name)


def record(g, prog: int, case, seed: int) -> tuple[list, np.ndarray]:
    """Inputs of ``case`` into the pool; the front end's packets binding them and dispatching."""
    from cpu_host.horizon.hle.nvn.compute import ComputeFunctions

    x = case.inputs(np.random.default_rng(seed))
    pool = g.gpu.pool
    pool.write(A_OFF, x.a.tobytes())
    pool.write(B_OFF, x.b.tobytes())
    pool.write(O_OFF, x.out.tobytes())
    params = struct.pack("<QQQi", 0xA, 0xB, 0xC, x.n) + x.extra
    pool.write(PAR_OFF, params)
    s = g.svc
    cf = ComputeFunctions(s)
    g.call(s.cb_begin, g.cb)
    g.call(s.cb_program, g.cb, prog, 1)
    g.call(s.cb_uniform, g.cb, 1, 0, g.base + PAR_OFF, len(params))
    for k, (off, arr) in enumerate(((A_OFF, x.a), (B_OFF, x.b), (O_OFF, x.out))):
        g.call(cf.bind_storage, g.cb, 1, k, g.base + off, 4 * len(arr))
    g.call(cf.dispatch, g.cb, -(-x.threads // BLOCK), 1, 1)
    cmds = list(g.call(lambda c: s._rec(c, "test"), g.cb).commands)
    return cmds, np.asarray(case.ref(x), np.uint32)


def guest(env, monkeypatch):
    from test_compute_dispatch import Guest

    g = Guest(env, monkeypatch)
    g.gpu = env
    return g


def out_words(env, n: int) -> np.ndarray:
    return np.frombuffer(bytes(env.pool.mm[O_OFF : O_OFF + 4 * n]), np.uint32)


@pytest.mark.parametrize("isa", [86, 53])
def test_front_end_relocation_equals_the_corpus_loader(built, isa):
    """compute_globals.relocate at an address gives the code, bank 4 and region bytes the shader
    corpus's own loader (cuda_globals.place) gives there; no GPU needed."""
    import cuda_globals

    from cpu_host.horizon.hle.nvn import compute_globals as G

    for name in KERNELS:
        k = built[isa][name]
        code, banks, size, init, relocs = nvn_globals(k.globals_cubin, name, isa)
        g = G.Globals(size, init, tuple(G.Reloc(*r) for r in relocs))
        base = 0x7F12_3456_7800
        got_code, got_banks, image = G.relocate(g, isa, code, banks, base)
        want = cuda_globals.place(k.globals_cubin, name, isa, base)
        assert got_code == want.code and image == want.image[: len(image)]
        assert dict(got_banks).get(4, b"") == want.bank4
        assert relocs, f"{name}: no relocation against its globals"


@pytest.mark.parametrize("isa", [86, pytest.param(53, marks=pytest.mark.heavy)])  # CI: SM86 (time)
@pytest.mark.parametrize("name", KERNELS)
def test_globals_kernel_through_the_gpu_process_equals_numpy(env, built, monkeypatch, isa, name):
    g = guest(env, monkeypatch)
    k = built[isa][name]
    prog = set_shaders(g, 10, isa, k)
    program = g.svc.objects[int(g.mem[10])]
    addr = env.client.placed[program.placement]
    assert addr and addr % 16 == 0
    cmds, want = record(g, prog, case_of(name), 3 + isa)
    for c in cmds:
        assert P.check(c)
    before = env.client.dropped()
    env.client.wait(env.client.submit(cmds))
    assert env.client.dropped() == before, gpu_log(env.dir)[-2000:]
    assert np.array_equal(out_words(env, len(want)), want)


def test_a_replaced_gpu_process_places_the_data_again_and_the_dispatch_is_replayed(env, built, monkeypatch):
    g = guest(env, monkeypatch)
    k = built[86]["g2_virtual"]
    prog = set_shaders(g, 12, 86, k)
    program = g.svc.objects[int(g.mem[12])]
    before = env.client.placed[program.placement]
    cmds, want = record(g, prog, case_of("g2_virtual"), 77)
    env.submit_to_a_replaced_process(cmds)
    assert np.array_equal(out_words(env, len(want)), want)
    after = env.client.placed[program.placement]
    assert after  # placed again by the new process (lavapipe: usually at another address)
    # and a fresh dispatch on the new process still computes exactly
    cmds, want = record(g, prog, case_of("g2_virtual"), 78)
    env.client.wait(env.client.submit(cmds))
    assert np.array_equal(out_words(env, len(want)), want)
    print(f"placement address before {before:#x}, after the restart {after:#x}")


def test_hostile_placements_are_refused_by_name_and_serving_goes_on(env, built, monkeypatch):
    import grpc

    from cpu_host.horizon.hle.abi import GuestError
    from nxrecomp.common import settings
    from proto import gpu_pb2

    c = env.client
    stub, s = c.stub, c.session
    addr = stub.PlaceData(gpu_pb2.DataDesc(session=s, id=9001, size=4096), timeout=60).address
    R = gpu_pb2.DataRegion
    limit = settings.get("gpu_host", "max_global_data")
    cases = [
        (
            gpu_pb2.DataDesc(
                session=s, id=9001, size=4096, address=addr, regions=[R(offset=0, data=b"\1" * 64), R(offset=32, data=b"\2" * 8)]
            ),
            "placement 9001: field regions[1] overlaps regions[0] (0x20+0x8 and 0x0+0x40)",
        ),
        (gpu_pb2.DataDesc(session=s, id=9002, size=64, address=addr), "placement 9002: field address"),
        (gpu_pb2.DataDesc(session=s, id=9003, size=limit + 4), f"more than gpu_host.max_global_data ({limit})"),
        (gpu_pb2.DataDesc(session=s, id=9001, size=8192), "field size 8192 differs from its placed 4096 bytes"),
        (gpu_pb2.DataDesc(session=s, id=9001, size=4096, address=addr + 16), "is not the placement's address"),
        (
            gpu_pb2.DataDesc(session=s, id=9001, size=4096, address=addr, regions=[R(offset=4090, data=b"\1" * 8)]),
            "field regions[0]: bytes 0xffa+0x8 run past the placement's 4096 bytes",
        ),
        (gpu_pb2.DataDesc(session=s, id=9004, size=0), "placement 9004: field size 0"),
    ]
    for desc, msg in cases:
        with pytest.raises(grpc.RpcError) as e:
            stub.PlaceData(desc, timeout=60)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and msg in e.value.details(), e.value.details()
    assert "names a placement that is not placed" in "".join(ln for ln in gpu_log(env.dir).splitlines() if "placement 9002" in ln)
    # a message past gRPC's 4 MiB limit never reaches the process (GpuClient.place_data sends
    # regions in 1 MiB messages)
    with pytest.raises(grpc.RpcError) as e:
        stub.PlaceData(
            gpu_pb2.DataDesc(session=s, id=9001, size=4096, address=addr, regions=[R(offset=0, data=bytes(5 << 20))]), timeout=60
        )
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert c.alive()
    from cpu_host.gpu_client.registry import DataDesc

    seen = []
    big = c.place_data(DataDesc(9100, 3 << 20, lambda a: seen.append(a) or [(64, bytes(range(256)) * (10 << 10))]))
    assert seen == [big] and c.placed[9100] == big  # 2.5 MiB of regions, in 1 MiB messages
    # the front end refuses bad tables by name before anything is placed
    g = guest(env, monkeypatch)
    k = built[86]["g2_virtual"]
    code, banks, size, init, relocs = nvn_globals(k.globals_cubin, k.name, 86)
    bad = [
        ((size, init, [(7, 0, 0, 0, 0)]), "NVNglobalReloc 0: where 7"),
        ((size, init, [(0, 1, 0, 0, 0)]), "NVNglobalReloc 0: kind 1 for where 0"),
        ((size, init, [(0, 0, 0, len(init), 0)]), "data offset"),
        ((size, init, [(1, 1, 0, 8, 0)]), "is not an SM86 instruction"),
        ((size, init, [(0, 0, 0, 0, size + 8)]), "lies outside the"),
        ((size + 2, init, relocs), "is not a positive multiple of 4"),
        ((size, init + b"\0" * (size + 4 - len(init)), relocs), "init_size"),
    ]
    for table, msg in bad:
        with pytest.raises(GuestError, match=msg):
            set_shaders(g, 14, 86, k, table=table)
    with pytest.raises(GuestError, match="flags 0x6"):
        set_shaders(g, 14, 86, k, flags=6)
    # and a good program still places, translates and computes
    prog = set_shaders(g, 16, 86, k)
    cmds, want = record(g, prog, case_of("g2_virtual"), 5)
    c.wait(c.submit(cmds))
    assert np.array_equal(out_words(env, len(want)), want)
    # its SPIR-V registered naming a placement the session does not hold (an unknown placement id)
    desc = c.registry.objects[("ProgramDesc", int(g.mem[16]))]
    spv = desc.rebuild(c.placed)
    with pytest.raises(grpc.RpcError) as e:
        stub.RegisterProgram(gpu_pb2.ProgramDesc(session=c.session, id=9191, vertex_spirv=spv, data=[777]), timeout=30)
    assert "program 9191: field data[0] = 777 names no placement of this session" in e.value.details()
    assert c.alive()


@pytest.mark.heavy  # about 50 s: two supervised restarts (the direct kill test above runs in CI)
def test_supervisor_restarts_a_killed_gpu_process_and_the_placement_is_replayed(built, shader_service, monkeypatch):
    """The supervisor's kill/restart (nxrecomp.app.supervisor, warm standby): the GPU process is
    SIGKILLed twice between dispatches of a placed-data program; each time the client re-attaches
    to the restarted process, places the region again (its address is the new process's), the
    program is relocated and translated for it, and the next dispatch equals numpy."""
    import os
    import shutil
    import signal
    import tempfile
    import threading
    import types

    from cpu_host.gpu_client.client import GpuClient
    from nxrecomp.app.supervise_bundle import gpu_spec
    from nxrecomp.app.supervisor import Policy, Supervisor
    from test_compute_dispatch import Guest

    run_dir = Path(tempfile.mkdtemp(prefix="nxsg"))
    sup = Supervisor([gpu_spec(run_dir, str(run_dir / "frames"))], run_dir / "run.log", Policy(max_crashes=100))
    th = threading.Thread(target=sup.run, daemon=True)
    th.start()
    client = GpuClient(run_dir, ring_capacity=1 << 22)
    try:
        client.connect(timeout=60)
        gpu = types.SimpleNamespace(client=client, pool=client.create_pool(1, 8 << 20))
        g = Guest(gpu, monkeypatch)
        g.gpu = gpu
        prog = set_shaders(g, 18, 86, built[86]["g2_virtual"])
        placement = g.svc.objects[int(g.mem[18])].placement
        addresses = [client.placed[placement]]
        for round in range(3):
            if round:
                os.kill(sup.pid("gpu"), signal.SIGKILL)
            cmds, want = record(g, prog, case_of("g2_virtual"), 40 + round)
            client.wait(client.submit(cmds), timeout=120)
            got = np.frombuffer(bytes(gpu.pool.mm[O_OFF : O_OFF + 4 * len(want)]), np.uint32)
            assert np.array_equal(got, want), f"round {round}"
            addresses.append(client.placed[placement])
        assert sup.restarts("gpu") == 2 and client.reconnects == 2
        print("placement addresses", [hex(a) for a in addresses])
    finally:
        client.close()
        sup.stop()
        th.join(30)
        shutil.rmtree(run_dir, ignore_errors=True)


def test_a_buffer_made_after_a_freed_one_gets_its_own_device_address():
    """Compute.address asks each Buffer once and keeps the answer on it: a freed buffer's VkBuffer
    handle can come back for the next buffer (lavapipe's handles are heap pointers), whose memory
    and device address differ, so a handle-keyed cache (the old code) answered the freed one's
    address for placements made after an Attach freed the previous session's."""
    import vulkan as vk

    from gpu_host.compute import Compute
    from gpu_host.vkdevice import BUFFER_DEVICE_ADDRESS, Device

    dev = Device()
    comp = Compute(dev)
    usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | BUFFER_DEVICE_ADDRESS
    try:
        reused = 0
        for size in (4096, 1 << 20, 65536, 3 << 20):
            keep = dev.buffer(1 << 16, usage)  # memory stays taken: the next buffer is elsewhere
            first = dev.buffer(size, usage)
            a = comp.address(first)
            handle = first.handle
            dev.free_buffer(first)
            second = dev.buffer(size * 2, usage)
            reused += second.handle == handle
            info = vk.ffi.new(
                "VkBufferDeviceAddressInfo*", {"sType": vk.VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, "buffer": second.handle}
            )
            assert comp.address(second) == int(comp._addr_fn(dev.device, info)), (hex(a), size)
            dev.free_buffer(second)
            dev.free_buffer(keep)
        print(f"handles reused: {reused} of 4")
    finally:
        comp.close()
        dev.close()


def test_a_recording_refuses_a_program_whose_placements_it_lacks_by_name(built, shader_service, monkeypatch, tmp_path):
    """``--record`` writes the placements a compute program's code addresses; ``nxrecomp replay``
    has no placements (their addresses were the recording process's), so it refuses the program
    by name instead of running code that addresses memory that is not there."""
    import types

    from cpu_host.gpu_client.client import GpuClient
    from gpu_guest import start_gpu, stop_gpu
    from gpu_host import replay_file
    from nxrecomp.common.errors import NxError
    from test_compute_dispatch import Guest

    rec = tmp_path / "globals.nxgpu"
    proc, d = start_gpu(args=["--record", str(rec)])
    try:
        c = GpuClient(d, ring_capacity=1 << 20)
        c.connect(timeout=30)
        gpu = types.SimpleNamespace(client=c, pool=c.create_pool(1, 8 << 20))
        g = Guest(gpu, monkeypatch)
        g.gpu = gpu
        prog = set_shaders(g, 20, 86, built[86]["g2_virtual"])
        cmds, want = record(g, prog, case_of("g2_virtual"), 9)
        c.wait(c.submit(cmds))
        assert np.array_equal(np.frombuffer(bytes(gpu.pool.mm[O_OFF : O_OFF + 4 * len(want)]), np.uint32), want)
        c.close()
    finally:
        stop_gpu(proc)
    with pytest.raises((NxError, ValueError), match=r"field data\[0\] = \d+ names no placement of this session"):
        replay_file.replay_file(rec, tmp_path / "out")
