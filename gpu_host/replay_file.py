"""``nxrecomp replay FILE``: render a recording alone (no CPU host) and dump its frames, so frames
can be compared across runs, versions and drivers."""

from __future__ import annotations

from pathlib import Path

from gpu_host import record
from gpu_host.engine import Engine
from gpu_host.objects import ObjectError
from gpu_host.replay import FrameOut
from gpu_host.snapshot import Snapshot
from gpu_host.vkdevice import Device
from nxrecomp.common.errors import NxError
from nxrecomp.common.progress import Progress


class RecordedPools:
    """Pool sizes from the recording; bytes come from each submission's recorded snapshot."""

    def __init__(self) -> None:
        self.sizes: dict[int, int] = {}

    def pool_size(self, pool: int) -> int | None:
        return self.sizes.get(pool)

    def read(self, pool: int, offset: int, size: int) -> memoryview:
        raise NxError(f"recording lacks bytes of pool {pool} at {offset:#x}+{size:#x}")


def replay_file(path: Path, out: Path, device: str = "") -> list[FrameOut]:
    from nxrecomp.common import settings

    events = list(record.read(path))
    pools = RecordedPools()
    out.mkdir(parents=True, exist_ok=True)
    dev = Device(device or settings.get("gpu_host", "device"))
    eng = Engine(dev, pools, out, keep_frames=1)
    frames: list[FrameOut] = []
    audio: list[list] = []  # the run's sound, appended after the GPU's events (nxrecomp/bundle/wav.py)
    eng.on_frame = frames.append
    try:
        with Progress("replaying", len(events)) as prog:
            for n, ev in enumerate(events):
                try:
                    if ev.kind == "audio":
                        audio.append(ev.args)
                    else:
                        _apply(eng, pools, ev, frames, path, n)
                except (ObjectError, TypeError, ValueError) as e:
                    raise NxError(f"event {n} ({ev.kind}): {e}", path=str(path)) from None
                prog.advance()
    finally:
        eng.close()
        dev.close()
    tmp = out / ".frames.txt.tmp"
    tmp.write_text("".join(f"{f.frame} {f.sha256}\n" for f in frames))
    tmp.replace(out / "frames.txt")
    if audio:
        from nxrecomp.bundle.wav import write_events

        write_events(audio, out / "audio.wav")
    return frames


def _apply(eng: Engine, pools: RecordedPools, ev: record.Event, frames: list, path: Path, n: int) -> None:
    a = ev.args
    if ev.kind == "pool":
        pools.sizes[int(a[0])] = int(a[1])
        eng.note_pool(int(a[0]), int(a[1]), bool(a[2]) if len(a) > 2 else False)
    elif ev.kind == "texture":
        eng.register_texture(**a[0])
    elif ev.kind == "sampler":
        eng.register_sampler(*a)
    elif ev.kind == "program":
        eng.register_program(*a[:3], tuple(a[3]) if len(a) > 3 else (), a[4] if len(a) > 4 else ())  # gfx-geom: geometry
    elif ev.kind == "submit":
        seq, packets, mem = a
        snap = Snapshot(dict(pools.sizes), {(p, o, s): b for p, o, s, b in mem})
        if eng.submit(seq, packets, snapshot=snap) is None:
            raise NxError(f"event {n}: recorded submission {seq} does not replay (see the log)", path=str(path))
    else:
        raise NxError(f"event {n}: unknown kind {ev.kind!r}", path=str(path))
