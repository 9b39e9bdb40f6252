"""The native recorder of the NVN front end (``recorder.c``): the per-draw command-buffer calls
recorded in C into binary packets (gpu_host/PROTOCOL.md "Binary packets"), bound at the guest's
entry points with no Python on the call path.

Built like the project's other C libraries (``nxrecomp.common.clib``: zig's clang, content-hashed in
``<cache_dir>/cpu_host``, cffi ABI mode).  The library holds one process's recorder state (one
NVN service a process): ``NativeRecorder`` is Python's handle on it — it mirrors what the C code
needs of the objects frontend.py creates (pools, programs, texture/sampler pool slots), opens and
closes recordings, appends the packets frontend.py still makes in Python, and binds the hot calls
(``HOT``) over the Python functions the registry bound, keeping those as each call's fallback
(errors named as before, command buffers whose struct moved).  Setting ``cpu_host.nvn_recorder``:
``native`` (the default: this file; a build failure stops the start naming the compiler's
error), ``python`` (the packet tuples and msgpack of before)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from cpu_host.gpu_client.blob import Block, packet_bytes
from gpu_host import packets as P
from nxrecomp.common import clib

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "recorder.c"
RUNTIME = HERE.parents[2] / "runtime" / "core"  # nxrt.h: NxCpu as the runtime lays it out
OK, SLOW, BAD = 0, 1, 2
CDEF = """
typedef struct { uint64_t offset; uint32_t count; uint32_t stage; } Chunk;
int nxr_init(uint64_t yield_fn, uint64_t range_ok_fn);
void nxr_bench_init(void);
void nxr_reset(void);
const char *nxr_fn_name(int i);
void nxr_set_fallback(int i, uint64_t fn);
int nxr_pool(uint32_t id, uint64_t addr, uint64_t size);
int nxr_program(uint64_t id, int reads_pools);
int nxr_texture_slot(uint32_t slot, uint32_t texture);
int nxr_sampler_slot(uint32_t slot, uint32_t sampler);
int nxr_begin(uint64_t id, uint64_t addr);
int nxr_alias(uint64_t id, uint64_t addr);
int nxr_take(uint64_t id, uint8_t **buf, uint64_t *len, Chunk **chunks, uint32_t *nchunks);
void nxr_free(void *p);
void nxr_free_buf(uint8_t *p);
int nxr_arena(uint8_t *base, uint64_t size, int bell);
int64_t nxr_arena_offset(const uint8_t *p);
int nxr_append(uint64_t id, const uint8_t *data, uint64_t len, uint32_t count);
int nxr_attribs(uint64_t id, uint32_t n, const uint32_t *attrs);
int nxr_stride(uint64_t id, uint32_t stride);
int nxr_try(int fn, uint64_t cpu, char *err);
uint64_t nxr_hot(int i);
int nxr_bench_frame(uint64_t cpu, uint64_t cb_addr, uint64_t prog_ptrs, uint32_t draws, uint64_t ubo_addr,
                    uint32_t ubos, uint32_t frame, uint64_t handles, uint32_t ntex);
"""
FLAGS = ["-O2", *clib.SHARED_FLAGS, "-Wall", "-Werror", "-Wno-comment", "-lpthread"]


def _build() -> Path:
    return clib.build_shared("nvnrec", [SOURCE], FLAGS, "cpu_host", inputs=(RUNTIME / "nxrt.h",), includes=(RUNTIME,))


lib = clib.Loaded(CDEF, _build)  # () -> (ffi, lib), built at the first call


class Commands:
    """A recording's packet stream in the C recorder, as frontend.py's ``Recording.commands``:
    ``append``/``+=`` of packet tuples (the calls still served in Python), the render targets
    they bind kept for the queue (``targets``)."""

    def __init__(self, rec: "NativeRecorder", cb: int) -> None:
        self.rec, self.cb = rec, cb
        self.targets: set[int] = set()

    def append(self, cmd: tuple) -> None:
        op = cmd[0]
        if op == P.OP_TARGET:
            self.targets.add(cmd[1])
        elif op == P.OP_DEPTH_TARGET:
            self.targets.update(t for t in cmd[1:3] if t != P.EMPTY)
        elif op == P.OP_RENDER_TARGETS:
            self.targets.update(t for t in (*cmd[1], cmd[2]) if t != P.EMPTY)
        data = packet_bytes(cmd)
        self.rec.L.nxr_append(self.cb, data, len(data), 1)

    def __iadd__(self, cmds: list[tuple]) -> "Commands":
        for c in cmds:
            self.append(c)
        return self


class NativeRecorder:
    """The process's C recorder (see the module's text)."""

    def __init__(self) -> None:
        self.ffi, self.L = lib()
        self.L.nxr_reset()
        self._keep: list[Any] = []
        self.arena: int | None = None  # the command arena's address, once use_arena set one
        self._bell = -1  # the recorder's duplicate of the doorbell it rings per staged chunk

    def use_arena(self, address: int, size: int, bell: int = -1) -> bool:
        """Record into the GPU client's command arena (``GpuClient.arena``: shared memory the GPU
        process maps) from now on, so submissions reference the recordings instead of copying
        them into the ring; each chunk a recording fills is staged there and ``bell`` (the ring's
        doorbell eventfd) rung, so the GPU process copies it while recording goes on.  The
        recorder rings its own duplicate of ``bell`` (valid whatever the client closes later).
        One arena a process: False where another one is set already."""
        mine = os.dup(bell) if bell >= 0 else -1
        if self.L.nxr_arena(self.ffi.cast("uint8_t *", address), size, mine):
            if mine >= 0:
                os.close(mine)
            return False
        if self._bell >= 0:
            os.close(self._bell)
        self.arena, self._bell = address, mine
        return True

    # -- objects, mirrored from frontend.py ------------------------------------------------
    def pool(self, id: int, addr: int, size: int) -> None:
        if self.L.nxr_pool(id, addr, size):
            raise MemoryError("native recorder: pool table full")

    def program(self, id: int, reads_pools: bool) -> None:
        if self.L.nxr_program(id, int(reads_pools)):
            raise MemoryError("native recorder: out of memory")

    def texture_slot(self, slot: int, texture: int) -> None:
        self.L.nxr_texture_slot(slot, texture)

    def sampler_slot(self, slot: int, sampler: int) -> None:
        self.L.nxr_sampler_slot(slot, sampler)

    # -- recordings ------------------------------------------------------------------------
    def begin(self, cb: int, addr: int) -> Commands:
        if self.L.nxr_begin(cb, addr):
            raise MemoryError("native recorder: too many command buffers recording at once (256)")
        return Commands(self, cb)

    def attribs(self, cb: int, attribs: list[list[int]]) -> None:
        flat = [v for a in attribs for v in a]
        self.L.nxr_attribs(cb, len(attribs), self.ffi.new("uint32_t[]", flat or [0]))

    def stride(self, cb: int, stride: int) -> None:
        self.L.nxr_stride(cb, stride & 0xFFFFFFFF)

    def end(self, cb: int) -> Block:
        """The finished recording: its chunks are views of the C recorder's buffer (no copy), which
        the Block owns (freed with it)."""
        ffi = self.ffi
        buf, n, chunks, nch = (ffi.new("uint8_t **"), ffi.new("uint64_t *"), ffi.new("Chunk **"), ffi.new("uint32_t *"))
        if self.L.nxr_take(cb, buf, n, chunks, nch):
            raise KeyError(f"native recorder: command buffer {cb} is not recording")
        data = ffi.gc(buf[0], self.L.nxr_free_buf)
        ch = ffi.gc(chunks[0], self.L.nxr_free)
        out, stages = [], []
        for i in range(nch[0]):
            end = ch[i + 1].offset if i + 1 < nch[0] else n[0]
            out.append((memoryview(ffi.buffer(data + ch[i].offset, end - ch[i].offset)), ch[i].count))
            stages.append(ch[i].stage)
        at = self.L.nxr_arena_offset(data) if self.arena is not None else -1
        if at < 0:
            return Block(tuple(out), (data, ch))
        table = (int(ffi.cast("uintptr_t", ch)), nch[0], n[0])
        return Block(tuple(out), (data, ch), (self.arena, at), tuple(stages) if any(stages) else None, table)

    # -- the hot calls -----------------------------------------------------------------------
    def names(self) -> list[str]:
        out, i = [], 0
        while (p := self.L.nxr_fn_name(i)) != self.ffi.NULL:
            out.append(self.ffi.string(p).decode())
            i += 1
        return out

    def try_call(self, index: int, cpu_addr: int) -> str | None:
        """Record hot call ``index`` for the CPU at ``cpu_addr``: None when recorded, else why not
        (frontend.py's words; "" where the Python function must look: an unknown command buffer
        or object)."""
        err = self.ffi.new("char[256]")
        rc = self.L.nxr_try(index, cpu_addr, err)
        return None if rc == OK else ("" if rc == SLOW else self.ffi.string(err).decode())

    def alias(self, cb: int, addr: int) -> None:
        self.L.nxr_alias(cb, addr)

    def install(self, game_ffi: Any, game_lib: Any, bindings: list, wrap: Callable[[int, Any], Any]) -> int:
        """Bind each hot call's host function at its guest addresses (over the Python binding);
        ``wrap(index, binding)`` makes the Python host function of a binding (the fallback).
        Returns how many addresses were bound natively."""
        addr = lambda name: int(game_ffi.cast("uintptr_t", game_ffi.addressof(game_lib, name)))  # noqa: E731
        self.L.nxr_init(addr("nx_hz_host_yield"), addr("nx_hz_range_ok"))
        index = {n: i for i, n in enumerate(self.names())}
        bound = 0
        for bi, b in enumerate(bindings):
            i = index.get(b.name)
            if i is None or b.function is None:
                continue
            cb = game_ffi.callback("void(NxCpu *)", wrap(bi, b))
            self._keep.append(cb)
            self.L.nxr_set_fallback(i, int(game_ffi.cast("uintptr_t", cb)))
            if game_lib.nx_host_bind(b.address, game_ffi.cast("void(*)(NxCpu *)", self.L.nxr_hot(i))) != 0:
                raise RuntimeError(f"host function table full at {b.name}")
            bound += 1
        return bound
