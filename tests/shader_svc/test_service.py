"""The shader service over real gRPC on loopback: a ptxas-built kernel translated through the
service runs on lavapipe and equals numpy; the second request is a disk-cache hit; a new server
process serves it from the cache; bad programs get INVALID_ARGUMENT naming the problem and the
server keeps answering (health + a good translation afterwards)."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import grpc
import numpy as np
import pytest

from compute_dispatch import open_device, run_spirv, upload
from proto import shader_pb2 as P, shader_pb2_grpc as G
from service_checks import assert_invalid_and_serving, healthy
from shader_svc import identity, service
from shader_svc.disk_cache import DiskCache
from spirv_checks import spirv_val

ROOT = Path(__file__).resolve().parents[2]
BS = 64


@pytest.fixture()
def server(tmp_path):
    srv, port, t = service.start("127.0.0.1:0", tmp_path / "cache", workers=4)
    ch = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield G.ShaderTranslatorStub(ch), ch, t, tmp_path / "cache"
    ch.close()
    srv.stop(grace=None)
    t.close()


def _spawn_service(cache: Path) -> subprocess.Popen:
    """``nxrecomp shader-svc`` as its own process on ``cache``, on a free loopback port; its
    first stdout line says where it listens."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-m", "nxrecomp", "shader-svc", "--listen", "127.0.0.1:0", "--cache-dir", str(cache)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


def _prog(code: bytes, **kw) -> P.Program:
    return P.Program(
        arch=kw.get("arch", P.SM86), stage=kw.get("stage", P.COMPUTE), code=code, local_size=kw.get("local_size", [BS, 1, 1])
    )


def test_translate_runs_on_lavapipe_and_second_call_hits_cache(server, corpus_sm86):
    stub, ch, t, cache = server
    k = corpus_sm86["add_i32"]
    a = stub.Translate(_prog(k.code), timeout=60)
    assert not a.cached and a.spirv[:4] == struct.pack("<I", 0x07230203)
    assert a.translator == identity.translator_id()
    assert (cache / a.translator / f"{a.key}.spv").is_file()
    b = stub.Translate(_prog(k.code), timeout=60)
    assert b.cached and b.spirv == a.spirv and b.key == a.key
    s = stub.GetStats(P.StatsRequest())
    assert (s.translations, s.cache_hits, s.cache_misses, s.cache_entries) == (1, 1, 1, 1)
    assert not list(cache.rglob("*.tmp"))  # atomic writes leave no temp files
    spirv_val(b.spirv, cache, "check", required=False)
    # the cached SPIR-V computes what numpy computes
    import vk_compute

    with open_device() as dev:
        n = 200
        rng = np.random.default_rng(3)
        x, y = rng.integers(0, 2**32, n, dtype=np.uint32), rng.integers(0, 2**32, n, dtype=np.uint32)
        bufs = [upload(dev, arr) for arr in (x, y, np.zeros(n, np.uint32))]
        params = struct.pack("<QQQI", bufs[0].address, bufs[1].address, bufs[2].address, n)
        (out,) = run_spirv(dev, b.spirv, vk_compute.cbank0, k.cbank0_size, n, params, [bufs[2]], BS)
        assert np.array_equal(out, x + y)


def _code_with_word(code: bytes, index: int, lo: int, hi: int) -> bytes:
    return code[: 16 * index] + struct.pack("<QQ", lo, hi) + code[16 * (index + 1) :]


def _untranslated() -> bytes:
    """A valid program with an instruction not lowered yet (MUFU.TANH)."""
    from shader_svc.sm86 import assemble as asm

    return asm.assemble_program("S2R R0, SR_TID.X\nMUFU.TANH R1, R0\nEXIT\n")


def test_bad_programs_are_invalid_argument_and_server_keeps_serving(server, corpus_sm86):
    stub, ch, t, _ = server
    code = corpus_sm86["add_i32"].code
    lo2, hi2 = struct.unpack_from("<QQ", code, 32)
    garbage = np.random.default_rng(7).integers(0, 256, 16 * 40, dtype=np.uint8).tobytes()
    cases = [
        (_prog(code[:-5]), r"field code.*truncated: \d+ bytes is not a multiple of 16"),
        (_prog(_code_with_word(code, 2, (lo2 & ~0xFFF) | 0xFFF, hi2)), r"offset 0x20: unknown opcode 0xfff"),
        (_prog(_code_with_word(code, 2, lo2 | (1 << 63), hi2)), r"offset 0x20: word [0-9a-f]{32} refused"),
        (_prog(garbage), r"offset 0x0: (unknown opcode|word [0-9a-f]{32} refused)"),
        (_prog(b""), r"field code: empty program"),
        (_prog(code, arch=7), r"field arch: unknown architecture 7"),
        (_prog(code, local_size=[2048, 1, 1]), r"field local_size"),
        (_prog(_untranslated()), r"offset 0x[0-9a-f]+: .*not translated"),
    ]
    assert_invalid_and_serving(stub, ch, cases)
    assert stub.GetStats(P.StatsRequest()).errors == len(cases)
    assert not stub.Translate(_prog(code), timeout=60).cached  # bad input did not poison the cache


def test_batch_streams_progress_and_per_program_errors(server, corpus_sm86):
    stub, ch, t, _ = server
    good = [corpus_sm86[n].code for n in ("add_i32", "branch", "int_ops")]
    progs = [_prog(good[0]), _prog(good[1][:-1]), _prog(good[1]), _prog(good[2]), _prog(good[0])]
    evs = list(stub.TranslateBatch(P.ProgramList(programs=progs), timeout=120))
    assert [(e.index, e.done, e.total) for e in evs] == [(i, i + 1, 5) for i in range(5)]
    assert evs[1].error_code == grpc.StatusCode.INVALID_ARGUMENT.value[0] and "truncated" in evs[1].error
    assert all(evs[i].translation.spirv and not evs[i].error for i in (0, 2, 3, 4))
    assert [evs[i].translation.cached for i in (0, 2, 3, 4)] == [False, False, False, True]
    assert evs[4].translation.spirv == evs[0].translation.spirv


def test_new_server_process_serves_from_cache_and_prepares(server, corpus_sm86, tmp_path):
    stub, ch, t, cache = server
    k1, k2 = corpus_sm86["add_i32"], corpus_sm86["branch"]
    first = [stub.Translate(_prog(k.code), timeout=60) for k in (k1, k2)]
    # a new process (through the CLI) on the same cache folder
    proc = _spawn_service(cache)
    try:
        line = proc.stdout.readline()
        m = re.search(r"listening on (127\.0\.0\.1:\d+) translator ([0-9a-f]+)", line)
        assert m, line
        assert m.group(2) == t.id
        ch2 = grpc.insecure_channel(m.group(1))
        s2 = G.ShaderTranslatorStub(ch2)
        again = s2.Translate(_prog(k1.code), timeout=60)
        assert again.cached and again.spirv == first[0].spirv
        # damage one entry on disk: the new process notices and translates it again
        (cache / t.id / f"{first[1].key}.spv").write_bytes(b"NXSPV1\0\0" + b"\0" * 40)
        bogus = "0" * 64
        evs = list(s2.Prepare(P.KeyList(keys=[first[0].key, first[1].key, bogus]), timeout=60))
        assert [(e.done, e.total) for e in evs] == [(1, 3), (2, 3), (3, 3)]
        assert evs[0].translation.cached and evs[0].translation.spirv == first[0].spirv
        assert not evs[1].translation.cached and evs[1].translation.spirv == first[1].spirv
        assert evs[2].error_code == grpc.StatusCode.NOT_FOUND.value[0] and bogus in evs[2].error
        s = s2.GetStats(P.StatsRequest())
        assert (s.translations, s.cache_hits, s.errors, s.cache_entries) == (1, 2, 1, 2)
        # an empty list prepares every program ever seen: both are now this translator's hits
        evs = list(s2.Prepare(P.KeyList(), timeout=60))
        assert sorted(e.translation.key for e in evs) == sorted(f.key for f in first)
        assert all(e.translation.cached and not e.error for e in evs)
        assert healthy(ch2)
        ch2.close()
    finally:
        proc.terminate()
        assert proc.wait(timeout=15) == 0


def test_older_translation_is_carried_while_retranslated(server, corpus_sm86):
    stub, ch, t, cache = server
    code = corpus_sm86["branch"].code
    from shader_svc.translate import make_program

    key = make_program(P.SM86, P.COMPUTE, code, (BS, 1, 1)).key()
    old_id = "a" * 32
    DiskCache(cache, old_id).put(key, b"older translator's spirv")
    a = stub.Translate(_prog(code), timeout=60)
    assert (a.cached, a.translator, a.spirv) == (True, old_id, b"older translator's spirv")
    t.drain()
    b = stub.Translate(_prog(code), timeout=60)
    assert (b.cached, b.translator) == (True, t.id) and b.spirv[:4] == struct.pack("<I", 0x07230203)
    s = stub.GetStats(P.StatsRequest())
    assert (s.carried, s.translations, s.cache_hits, s.retranslating) == (1, 1, 1, 0)


def test_every_program_served_is_in_the_program_store(server, corpus_sm86):
    """disk_cache.py: programs/ holds each program seen, so a later boot can prepare it; a cache
    hit and a carried older translation store it too (here their translations exist without the
    program file, as in a cache from before the store or with programs/ emptied), and Prepare
    then finds them."""
    stub, ch, t, cache = server
    from shader_svc.translate import make_program

    hit, carried = (make_program(P.SM86, P.COMPUTE, corpus_sm86[n].code, (BS, 1, 1)) for n in ("add_i32", "saxpy"))
    a = stub.Translate(_prog(corpus_sm86["add_i32"].code), timeout=60)
    assert not a.cached and a.key == hit.key()
    (cache / "programs" / f"{hit.key()}.prog").unlink()
    DiskCache(cache, "c" * 32).put(carried.key(), b"older translator's spirv")
    assert stub.Translate(_prog(corpus_sm86["add_i32"].code), timeout=60).cached
    assert stub.Translate(_prog(corpus_sm86["saxpy"].code), timeout=60).translator == "c" * 32
    t.drain()
    store = DiskCache(cache, t.id)
    assert store.program_keys() == sorted([hit.key(), carried.key()])
    assert store.get_program(hit.key()) == hit.serialize() and store.get_program(carried.key()) == carried.serialize()
    s = stub.GetStats(P.StatsRequest())
    assert (s.cache_hits, s.carried) == (1, 1)


def test_translator_identity_follows_its_sources(tmp_path):
    src = Path(identity.__file__).parent
    for name in identity.SOURCES:
        p = src / name
        (shutil.copytree if p.is_dir() else shutil.copy)(p, tmp_path / name)
    a = identity.translator_id(tmp_path)
    assert a == identity.translator_id(src)
    f = tmp_path / "sm86" / "decode.py"
    f.write_text(f.read_text() + "\n# changed\n")
    b = identity.translator_id(tmp_path)
    assert a != b
    old, new = DiskCache(tmp_path / "c", a), DiskCache(tmp_path / "c", b)
    old.put("ab" * 32, b"spirv")
    assert old.get("ab" * 32) == b"spirv" and new.get("ab" * 32) is None


def test_prepare_with_carry_serves_older_files_at_once(server, corpus_sm86):
    """A boot after a translator change: Prepare(carry) answers from the older translator's
    (version-1 format) files without translating, the reflection computed from the program;
    the background re-translation then files this translator's own; Prepare without carry
    translates at once."""
    import hashlib

    from shader_svc import disk_cache

    stub, ch, t, cache = server
    from shader_svc.translate import make_program

    progs = [make_program(P.SM86, P.COMPUTE, corpus_sm86[n].code, (BS, 1, 1)) for n in ("branch", "saxpy")]
    old = DiskCache(cache, "b" * 32)
    for p in progs:
        old.put_program(p.key(), p.serialize())
        body = b"old spirv " + p.key().encode()
        disk_cache.write_atomic(old.spv_path(p.key()), disk_cache.MAGIC_V1 + hashlib.sha256(body).digest() + body)
    evs = list(stub.Prepare(P.KeyList(carry=True), timeout=60))
    assert [e.translation.translator for e in evs] == ["b" * 32] * 2
    assert all(e.translation.spirv == b"old spirv " + e.translation.key.encode() for e in evs)
    assert sorted(e.translation.key for e in evs) == sorted(p.key() for p in progs)
    assert {len(e.translation.reflection.global_pointers) for e in evs} == {2}
    t.drain()
    s = stub.GetStats(P.StatsRequest())
    assert (s.carried, s.translations) == (2, 2)
    evs = list(stub.Prepare(P.KeyList(carry=True), timeout=60))
    assert [e.translation.translator for e in evs] == [t.id] * 2
    # without carry, a program only the old translator has is translated before the answer
    p3 = make_program(P.SM86, P.COMPUTE, corpus_sm86["add_i32"].code, (BS, 1, 1))
    old.put_program(p3.key(), p3.serialize())
    old.put(p3.key(), b"old")
    (ev,) = list(stub.Prepare(P.KeyList(keys=[p3.key()]), timeout=60))
    assert ev.translation.translator == t.id and ev.translation.spirv[:4] == struct.pack("<I", 0x07230203)


def test_sigterm_landing_on_a_grpc_thread_still_stops_the_process(tmp_path):
    """A process-directed signal may be delivered to any thread that does not block it; Python
    runs the handler on the main thread only when that thread next executes bytecode.  Send
    SIGTERM straight to one of gRPC's threads (tgkill): the service must still exit, cleanly."""
    proc = _spawn_service(tmp_path / "cache")
    try:
        assert "listening on" in proc.stdout.readline()
        others = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task") if int(t) != proc.pid]
        assert others, "the service runs gRPC threads besides the main one"
        sys_tgkill = 234  # x86-64
        assert ctypes.CDLL(None, use_errno=True).syscall(sys_tgkill, proc.pid, max(others), signal.SIGTERM) == 0
        t0 = time.monotonic()
        assert proc.wait(timeout=service.STOP_SECONDS + 5) == 0
        assert time.monotonic() - t0 < service.STOP_SECONDS
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
