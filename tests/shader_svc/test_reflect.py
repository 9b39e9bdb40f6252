"""Reflection of the resources a ptxas-built SM86 kernel uses, against what its PTX source says:
which 64-bit kernel parameters are global pointers and how they are used (ld/st/atom/red), that
every parameter the PTX loads lies in a reported constant range, shared memory and barriers.
The PTX is read by a small independent reader here; the reflection reads only machine code.
Also: the service's Translate reply carries the reflection, fresh and from the cache."""

from __future__ import annotations

import re
from pathlib import Path

import grpc
import pytest

from proto import shader_pb2 as P, shader_pb2_grpc as G
from shader_svc import service
from shader_svc.sm86 import decode as dec
from shader_svc.sm86.reflect import reflect

PTX_FILES = sorted((Path(__file__).parent / "ptx").glob("*.ptx"))
PARAM_BASE = 0x160  # SM86 kernel parameters in constant bank 0
SIZES = {"u64": 8, "s64": 8, "b64": 8, "u32": 4, "s32": 4, "f32": 4, "b32": 4}


def ptx_facts(src: str) -> dict:
    """{'params': {name: (offset, size)}, 'loaded': names, 'pointers': {offset: (read, written, atomic)},
    'shared': bool, 'barrier': bool} from the PTX text."""
    sig = re.search(r"\.entry\s+\w+\s*\(([^)]*)\)", src).group(1)
    params, off = {}, PARAM_BASE
    for ty, name in re.findall(r"\.param\s+\.(\w+)\s+(\w+)", sig):
        size = SIZES[ty]
        off = (off + size - 1) // size * size
        params[name] = (off, size)
        off += size
    body = src[src.index("{") :]
    origin: dict[str, set[str]] = {}
    loaded: set[str] = set()
    use: dict[str, list[bool]] = {}
    for stmt in (s.strip() for s in re.split(r"[;\n]", body)):
        stmt = re.sub(r"^@!?%p\d+\s+", "", stmt)
        if not stmt or stmt.startswith("//"):
            continue
        op, _, rest = stmt.partition(" ")
        args = [a.strip() for a in rest.split(",")]
        if op.startswith("ld.param"):
            name = args[1].strip("[]")
            loaded.add(name)
            origin[args[0]] = {name}
        elif op.startswith(("add.u64", "add.s64", "mov.b64", "mov.u64", "cvta")):
            origin[args[0]] = set().union(*(origin.get(a, set()) for a in args[1:]))
        else:
            addr = next((a for a in args if a.startswith("[")), None)
            if addr is None or ".global" not in op:
                continue
            reg = re.match(r"\[(%\w+)", addr).group(1)
            for name in origin.get(reg, set()):
                u = use.setdefault(name, [False, False, False])
                if op.startswith("ld."):
                    u[0] = True
                elif op.startswith("st."):
                    u[1] = True
                elif op.startswith(("atom.", "red.")):
                    u[0] = u[1] = u[2] = True
    return {
        "params": params,
        "loaded": loaded,
        "pointers": {params[n][0]: tuple(u) for n, u in use.items()},
        "shared": bool(re.search(r"\b(ld|st|atom)\.shared", body)),
        "barrier": "bar.sync" in body,
    }


@pytest.mark.parametrize("ptx", PTX_FILES, ids=lambda p: p.stem)
def test_reflection_matches_the_ptx_source(ptx, corpus_sm86):
    facts = ptx_facts(ptx.read_text())
    r = reflect(dec.decode_stream(corpus_sm86[ptx.stem].code))
    got = {g.offset: (g.read, g.written, g.atomic) for g in r.global_pointers if g.bank == 0}
    assert got == facts["pointers"]
    assert all(g.bank == 0 for g in r.global_pointers)
    for name in facts["loaded"]:
        off, size = facts["params"][name]
        assert any(c.bank == 0 and c.offset <= off and off + size <= c.offset + c.size for c in r.const_ranges), (
            name,
            hex(off),
            r.const_ranges,
        )
    assert (r.shared_memory, r.barriers) == (facts["shared"], facts["barrier"])


def test_the_ptx_reader_sees_what_the_kernels_do():
    # the oracle itself, on two kernels whose use is plain from their comments
    f = ptx_facts((Path(__file__).parent / "ptx" / "saxpy.ptx").read_text())
    assert f["pointers"] == {0x160: (True, False, False), 0x168: (True, True, False)}
    assert f["params"]["alpha"] == (0x170, 4) and f["params"]["n"] == (0x174, 4)
    f = ptx_facts((Path(__file__).parent / "ptx" / "atomics.ptx").read_text())
    assert f["pointers"][0x168] == (True, True, True)


def test_translate_reply_carries_reflection_fresh_and_cached(tmp_path, corpus_sm86):
    srv, port, t = service.start("127.0.0.1:0", tmp_path / "cache", workers=2)
    ch = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        stub = G.ShaderTranslatorStub(ch)
        code = corpus_sm86["saxpy"].code
        req = P.Program(arch=P.SM86, stage=P.COMPUTE, code=code, local_size=[64, 1, 1])
        want = reflect(dec.decode_stream(code))
        for cached in (False, True):
            a = stub.Translate(req, timeout=60)
            assert a.cached == cached
            assert [(g.offset, g.read, g.written, g.atomic) for g in a.reflection.global_pointers] == [
                (g.offset, g.read, g.written, g.atomic) for g in want.global_pointers
            ]
            assert [(c.bank, c.offset, c.size) for c in a.reflection.const_ranges] == [
                (c.bank, c.offset, c.size) for c in want.const_ranges
            ]
        (ev,) = list(stub.Prepare(P.KeyList(keys=[a.key])))
        assert len(ev.translation.reflection.global_pointers) == 2
    finally:
        ch.close()
        srv.stop(grace=None)
        t.close()
