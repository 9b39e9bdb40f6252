"""The native replay's per-submission Python (gpu_host/native_replay.py) kept off the frame path,
with the frames unchanged (issue 32: 10,000 draws replayed in <= 4 ms of GPU-process CPU time).

- A submission whose programs do not read the bindless pools writes no set-1 descriptor set
  (nxreplay.c binds set 1 only for a program with pools; writing the empty set through the
  `vulkan` binding cost 1-2 ms of Python a submission).
- The packets Python reads per submission (VERTEX_LAYOUT for a pipeline key, ...) are decoded
  once for their bytes, not once a submission; a different packet (another layout) is decoded
  afresh, so the pipeline follows it.
- ``Engine.last_replay_cpu_ms``: the replay's thread CPU time, beside the wall time.

Every frame is compared with the Python replay's (``gpu_host.native_replay = off``) of the same
submissions; lavapipe.
"""

from __future__ import annotations

from cpu_host.gpu_client.memory import Pool
from cpu_host.gpu_client.shaders import GlslSource
from gpu_guest import COLOR_FS, COLOR_VS, TEX_FS, TEX_VS
from gpu_packets import texture
from test_gpu_native_replay import TEX, UB, VB, VB_UV, H, W, fill
from gpu_host import binpackets, nxpkt
from gpu_host import packets as P
from gpu_host.engine import Engine
from gpu_host.objects import MappedPools
from gpu_host.vkdevice import Device

COLOR = [(P.OP_PROGRAM, 1), (P.OP_VERTEX_LAYOUT, 8, 0, [[0, 2, 0]]), (P.OP_VERTEX, 1, VB, 48)]
TEXD = [(P.OP_PROGRAM, 2), (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]), (P.OP_VERTEX, 1, VB_UV, 96)]


def frame(n: int, parts: list[list[tuple]]) -> bytes:
    """A binary submission: each part's program and layout, eight uniform draws each, presented as n."""
    s = [(P.OP_TARGET, 7), (P.OP_CLEAR, 0.1, 0.2, 0.3, 1.0), (P.OP_TEXTURE, 0, 10, 1)]
    for k, part in enumerate(parts):
        s += part
        for i in range(8):
            s += [(P.OP_UNIFORM, 0, 1, UB + 256 * ((i + k + n) % 16), 48), (P.OP_DRAW, 6, 1, 0, 0)]
    return binpackets.convert(s + [(P.OP_PRESENT, n, 7)])


# program 1 reading the textured rectangle's buffer with a 16-byte stride: a layout not seen before
WIDE = [(P.OP_PROGRAM, 1), (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0]]), (P.OP_VERTEX, 1, VB_UV, 96)]
PARTS = [[COLOR, TEXD], [COLOR, TEXD], [TEXD], [COLOR], [WIDE]]
FRAMES = [frame(n, parts) for n, parts in enumerate(PARTS, 1)]


def run(mode: str, monkeypatch) -> tuple[list[str], list[int], list[int], list[tuple[float, float]]]:
    """(frame hashes, set-1 sets written, nxpkt.decode calls, (wall ms, CPU ms)) per submission."""
    monkeypatch.setenv("NXRECOMP_GPU_HOST_NATIVE_REPLAY", mode)
    decodes = [0]
    real = nxpkt.decode

    def counted(data: bytes) -> list[tuple]:
        decodes[0] += 1
        return real(data)

    monkeypatch.setattr(nxpkt, "decode", counted)  # the real decoder, calls counted
    pool = Pool(1, 1 << 16)
    fill(pool)
    mp = MappedPools()
    mp.add(1, pool.fd, pool.size)
    dev = Device()
    eng = Engine(dev, mp, keep_frames=16)
    try:
        assert (eng.native is not None) == (mode == "on")
        eng.register_program(1, *GlslSource(COLOR_VS, COLOR_FS).spirv())
        eng.register_program(2, *GlslSource(TEX_VS, TEX_FS).spirv())
        eng.register_texture(**texture(7, W, H, render_target=True))
        eng.register_texture(**texture(10, 8, 8, pool=1, offset=TEX, pitch=32))
        eng.register_sampler(1, False, False)
        shas, sets, calls, times = [], [], [], []
        for seq, blob in enumerate(FRAMES, 1):
            decodes[0] = 0
            res = eng.submit_blob(seq, blob)
            assert res is not None and res.draws == 8 * len(PARTS[seq - 1]), seq
            shas.append(res.frames[0].sha256)
            sets.append(eng.replayer.pool_sets.used)
            calls.append(decodes[0])
            times.append((eng.last_replay_ms, eng.last_replay_cpu_ms))
        if mode == "on":
            assert eng.native.native == len(FRAMES)  # every one replayed in C
        return shas, sets, calls, times
    finally:
        eng.close()
        dev.close()
        pool.close()


def test_native_submission_costs(monkeypatch):
    py, _, _, _ = run("off", monkeypatch)
    nat, sets, calls, times = run("on", monkeypatch)
    assert nat == py and len(set(py)) == len(FRAMES)  # the same frames, all different
    assert sets == [0] * len(FRAMES)  # no program with pools: no set-1 set written
    # frame 1 decodes its two layouts; frame 2 (the same packets) none; frames 3 and 4 the same
    # layouts' bytes again: none; frame 5's new layout is decoded (its frame equal to Python's)
    assert calls[0] >= 2 and calls[1:4] == [0, 0, 0] and calls[4] >= 1, calls
    for wall, cpu in times:
        assert 0 < cpu <= wall + 1.0, (wall, cpu)  # thread CPU: one thread's share of the wall time


def test_timing_log_has_the_replay_cpu(tmp_path):
    """gpu_host.timing_log's line per binary submission (PROTOCOL.md "Ring"): seq, the consumer's
    five clock readings in order, then the replay's thread CPU milliseconds (no more than its wall
    time between the replay's begin and end readings)."""
    from cpu_host.gpu_client.registry import TextureDesc
    from gpu_guest import Gpu
    from test_gpu_blob_ring import submit_blob

    log = tmp_path / "timing.log"
    gpu = Gpu({"NXRECOMP_GPU_HOST_TIMING_LOG": str(log)})
    try:
        gpu.client.register(TextureDesc(7, 0, 0, W, H, "RGBA8", render_target=True))
        seqs = []
        for n in (1, 2):
            seqs.append(
                submit_blob(gpu, [binpackets.convert([(P.OP_TARGET, 7), (P.OP_CLEAR, 0, n / 2, 1, 1), (P.OP_PRESENT, n, 7)])])
            )
            gpu.client.wait(seqs[-1], timeout=30)
            assert gpu.client.frame(n).width == W
    finally:
        gpu.close()
    lines = [line.split() for line in log.read_text().splitlines()]
    assert [int(f[0]) for f in lines] == seqs
    for f in lines:
        assert len(f) == 7, f
        wake, drained, start, end, done, cpu = map(float, f[1:])
        assert wake <= drained <= start <= end <= done, f
        assert 0 < cpu <= (end - start) * 1000 + 0.5, f
