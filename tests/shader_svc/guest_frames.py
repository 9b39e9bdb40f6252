"""Guest programs run end to end with their shaders as machine code (CPU host -> shader service
-> GPU process): the recompiled gfx program (examples/horizon_hello), every frame compared with
the numpy picture tests/horizon/test_horizon_nvn.py computes for the GLSL build, and the demo
game, compared with tests/demo's reference pictures of the GLSL build."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from examples.demo.shaders import build as shaders


def check_gfx_guest_frames(tmp_path: Path, arch: str) -> None:
    """Build the gfx program with /shaders/arch = ``arch`` ("sm86" or "sm53"), run 4 frames and
    compare each with the expected picture."""
    from examples.horizon_hello.build_exefs import build_exefs
    from recompiler.formats.pack_npdm import NpdmSpec
    from recompiler.formats.pack_romfs import pack_romfs
    from recompiler.horizon import recompile_exefs
    from tests.horizon.hz_build import nxrecomp
    from tests.horizon.test_horizon_nvn import cpu_lines, differs, expected_frame, frame_lines, read_frame

    exefs = build_exefs("gfx", tmp_path / "exefs", NpdmSpec(name="gfx"))
    files = {k: v for k, v in shaders.romfs_shaders(arch).items() if "/scene." not in k}
    assert files["/shaders/arch"] == arch.encode()
    rom = tmp_path / "rom.bin"
    rom.write_bytes(pack_romfs({**files, "/config/frames": b"4"}))
    recompile_exefs(exefs, tmp_path / "bundle", romfs=rom)
    run, frames = tmp_path / "run", tmp_path / "frames"
    r = nxrecomp("run", str(tmp_path / "bundle"), "--run-dir", str(run), "--frames-dir", str(frames), timeout=240)
    log = (run / "run.log").read_text()
    assert r.returncode == 0, log[-3000:]
    assert cpu_lines(log) == ["nvn entry points missing: 0", "device: 1", "pool: 1", "window: 1", *frame_lines(4), "done"], log[
        -3000:
    ]
    assert "shader: healthy" in log
    for f in range(1, 5):
        got, want = read_frame(frames / f"frame_{f:06d}.png"), expected_frame(f)
        bad = np.argwhere(differs(got, want))
        assert not len(bad), f"frame {f}: {len(bad)} pixels differ, first at {tuple(bad[0])}"


def check_demo_matches_reference(tmp_path: Path, *args: str) -> dict:
    """``nxrecomp demo`` with ``args`` for 60 frames: it exits cleanly and frames 1 and 60 equal
    tests/demo's reference pictures as tests/demo compares them.  Returns the play report."""
    from tests.demo.test_demo import REFERENCE, close_to_reference, play, read

    report = play(tmp_path / "out", 60, tmp_path / "saves", *args)
    assert report["exit_status"] == 0 and report["frames"] == 60
    frames = Path(report["frames_dir"])
    for f in (1, 60):
        ok, why = close_to_reference(read(frames / f"frame_{f:06d}.png"), read(REFERENCE / f"frame_{f:06d}.png"))
        assert ok, f"frame {f}: {why}"
    return report
