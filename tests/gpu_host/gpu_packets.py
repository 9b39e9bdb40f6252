"""Builders the GPU tests and benches share: texture registrations, pool memories that need no CPU
host, and issue 32's realistic frame as packet tuples (gpu_host/packets.py's ops).

One place for what test_gpu_nxpkt.py, test_gpu_native_replay.py, bench/gpu_split.py,
bench/gpu_texdecode.py and bench/gpu_pipelines.py each built by hand.  Nothing here checks
anything: the tests that use these builders compare against their own oracles."""

from __future__ import annotations

from typing import Any

from gpu_host import packets as P

PIPE_EVERY, TEX_EVERY = 50, 5  # issue 32's realistic frame: a pipeline change every 50 draws, a texture bind every 5


def texture(
    id: int,
    width: int,
    height: int,
    format: str = "RGBA8",
    *,
    pool: int = 0,
    offset: int = 0,
    pitch: int = 0,
    render_target: bool = False,
    block_linear: bool = False,
    block_height_log2: int = 0,
    samples: int | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``Engine.register_texture`` / ``Objects.add_texture`` for one
    texture (pitch-linear unless ``block_linear``; ``samples`` only where given)."""
    out: dict[str, Any] = dict(
        id=id,
        pool=pool,
        offset=offset,
        width=width,
        height=height,
        format=format,
        block_linear=block_linear,
        block_height_log2=block_height_log2,
        pitch=pitch,
        render_target=render_target,
    )
    if samples is not None:
        out["samples"] = samples
    return out


def target(id: int, width: int, height: int, format: str = "RGBA8", samples: int | None = None) -> dict[str, Any]:
    """A render target in no pool memory (``texture``'s arguments)."""
    return texture(id, width, height, format, render_target=True, samples=samples)


def from_desc(t: Any) -> dict[str, Any]:
    """``texture``'s arguments from a client ``TextureDesc``."""
    return texture(
        t.id,
        t.width,
        t.height,
        t.format,
        pool=t.pool,
        offset=t.offset,
        pitch=t.pitch,
        render_target=t.render_target,
        block_linear=t.block_linear,
    )


class SizedPools:
    """A Memory with pool sizes only (validation reads no bytes)."""

    def __init__(self, sizes: dict[int, int]) -> None:
        self.sizes = sizes

    def pool_size(self, pool: int) -> int | None:
        return self.sizes.get(pool)


class ArrayMemory:
    """Pool memory from bytearrays (the engine's Memory protocol), no CPU host needed."""

    def __init__(self, pools: dict[int, bytearray]) -> None:
        self.pools = pools

    def pool_size(self, pool: int) -> int | None:
        return len(self.pools[pool]) if pool in self.pools else None

    def read(self, pool: int, offset: int, size: int) -> memoryview:
        return memoryview(self.pools[pool])[offset : offset + size]


def realistic_frame(
    draws: int,
    frame: int,
    *,
    target: int,
    programs: tuple[int, ...],
    textures: tuple[int, ...],
    sampler: int,
    ubo_at: int,
    ubos: int,
    present: int | None = None,
) -> list[tuple]:
    """Issue 32's frame: ``draws`` draws of a textured quad (pool 1, offset 0, 96 bytes) into
    ``target``, the program cycling through ``programs`` every PIPE_EVERY draws, the texture
    through ``textures`` every TEX_EVERY, a uniform range of 48 bytes before every draw (pool 1,
    ``ubo_at + 256 * ((i + frame) % ubos)``); presented as ``present`` (default ``frame``)."""
    cmds = [
        (P.OP_TARGET, target),
        (P.OP_CLEAR, 0, 0, 0, 1),
        (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
        (P.OP_VERTEX, 1, 0, 96),
    ]
    for i in range(draws):
        if i % PIPE_EVERY == 0:
            cmds.append((P.OP_PROGRAM, programs[(i // PIPE_EVERY) % len(programs)]))
        if i % TEX_EVERY == 0:
            cmds.append((P.OP_TEXTURE, 0, textures[(i // TEX_EVERY) % len(textures)], sampler))
        cmds.append((P.OP_UNIFORM, 0, 1, ubo_at + 256 * ((i + frame) % ubos), 48))
        cmds.append((P.OP_DRAW, 6, 1, 0, 0))
    return cmds + [(P.OP_PRESENT, frame if present is None else present, target)]
