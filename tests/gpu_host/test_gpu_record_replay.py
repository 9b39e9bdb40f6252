"""Record a live run's command stream + memory; ``nxrecomp replay`` renders it alone to the
same frames, run after run."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np

from cpu_host.gpu_client.client import GpuClient
from cpu_host.gpu_client.registry import SamplerDesc, TextureDesc
from cpu_host.gpu_client.shaders import GlslSource
from gpu_guest import COLOR_FS, COLOR_VS, TEX_FS, TEX_VS, BoxGame, P, Scene, rect_uv_px, start_gpu, attach, stop_gpu
from gpu_host import blocklinear


def nxrecomp(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nxrecomp", *args], capture_output=True, text=True, timeout=300)


def test_record_then_replay_identical_frames(tmp_path):
    rec = tmp_path / "run.nxgpu"
    proc, d = start_gpu(args=["--record", str(rec)])
    live: dict[int, str] = {}
    try:
        c = GpuClient(d, ring_capacity=1 << 20)
        attach(c, proc)
        pool = c.create_pool(1, 1 << 20)
        c.register_program(1, GlslSource(COLOR_VS, COLOR_FS))
        c.register_program(2, GlslSource(TEX_VS, TEX_FS))
        c.register(TextureDesc(7, 0, 0, BoxGame.W, BoxGame.H, "RGBA8", render_target=True))
        rng = np.random.default_rng(0)
        tex = rng.integers(0, 256, (16, 64), dtype=np.uint8)
        pool.write(300000, blocklinear.swizzle(tex, 1))
        c.register(TextureDesc(8, 1, 300000, 16, 16, "RGBA8", block_linear=True, block_height_log2=1))
        c.register(SamplerDesc(9))
        astc = rng.integers(0, 256, (4, 4 * 16), dtype=np.uint8)  # 16x16 ASTC 4x4: random blocks
        pool.write(310000, blocklinear.swizzle(astc, 0))
        c.register(TextureDesc(10, 1, 310000, 16, 16, "ASTC_4x4", block_linear=True, block_height_log2=0))
        bc1 = rng.integers(0, 256, (4, 4 * 8), dtype=np.uint8)  # 16x16 BC1: 4x4 blocks of 8 bytes
        pool.write(320000, blocklinear.swizzle(bc1, 0))
        c.register(TextureDesc(11, 1, 320000, 16, 16, "BC1", block_linear=True, block_height_log2=0))
        game = BoxGame(seed=11)
        for frame in range(1, 13):
            game.step()
            cmds = game.commands(pool, frame, 7)[:-1]
            sc = Scene(pool, 400000 + (frame % 4) * 4096)
            cmds += [
                (P.OP_PROGRAM, 2),
                (P.OP_VERTEX_LAYOUT, 16, 0, [[0, 2, 0], [1, 2, 8]]),
                (P.OP_VERTEX, *sc.put(rect_uv_px(frame, 40, frame + 16, 56, 64, 64).tobytes())),
                (P.OP_TEXTURE, 0, 8, 9),
                (P.OP_DRAW, 6, 1, 0, 0),
            ]
            for tid, x in ((10, 0), (11, 20)):  # compressed textures, recorded too
                cmds += [
                    (P.OP_VERTEX, *sc.put(rect_uv_px(x, frame, x + 16, frame + 16, 64, 64).tobytes())),
                    (P.OP_TEXTURE, 0, tid, 9),
                    (P.OP_DRAW, 6, 1, 0, 0),
                ]
            cmds += [(P.OP_PRESENT, frame, 7)]
            c.wait(c.submit(cmds))
            live[frame] = c.frame(frame).sha256
        c.close()
    finally:
        stop_gpu(proc)
        shutil.rmtree(d, ignore_errors=True)
    assert rec.exists(), "recording not closed into place"
    outs = []
    for i in range(2):
        out = tmp_path / f"out{i}"
        r = nxrecomp("replay", str(rec), "--out", str(out))
        assert r.returncode == 0, r.stderr
        outs.append(dict(line.split()[::-1] for line in (out / "frames.txt").read_text().splitlines()))
        assert len(list(out.glob("frame_*.png"))) == 12
    assert outs[0] == outs[1]
    assert {int(v): k for k, v in outs[0].items()} == live


def test_replay_of_a_bad_file_is_one_clear_line(tmp_path):
    bad = tmp_path / "bad.nxgpu"
    bad.write_bytes(b"\x81\xa3abc\x01")  # a msgpack map, but not a recording header
    r = nxrecomp("replay", str(bad), "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith(f"nxrecomp replay: error: {bad}, field header: not a GPU recording")
    r = nxrecomp("replay", str(tmp_path / "missing"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "cannot open recording" in r.stderr
