"""What the demo's report knows about a run beyond frames: gathered while it plays and from
its log afterwards.

- shader preparation: the shader service's own counters (``GetStats`` of proto/shader.proto:
  translations, cache hits/misses, programs carried over from an older translator's files,
  seconds spent translating), asked every half second while
  the run plays (the service is gone when the run ends; the last answer is kept);
- processes: the supervisor's events (started, healthy, restarts, standby promoted), timed
  from the start of the run;
- first frame: the time the GPU process wrote the first frame's PNG, from the start of the run;
- device: the GPU process's ``vulkan device NAME`` line (it logs it at info level; the demo
  asks it for info level unless NXRECOMP_LOG_LEVEL says otherwise) and whether it was headless."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

POLL_S = 0.5


@dataclass
class ShaderStats:
    translations: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    errors: int = 0
    translate_seconds: float = 0.0
    carried: int = 0  # served from an older translator's file while this one re-translates


@dataclass
class ShaderWatch:
    """Polls the shader service's GetStats at ``address`` in a thread until ``stop()``."""

    address: str
    last: ShaderStats | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> "ShaderWatch":
        self._thread = threading.Thread(target=self._loop, name="shader-stats", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        import grpc

        from proto import shader_pb2, shader_pb2_grpc

        with grpc.insecure_channel(self.address) as ch:
            stub = shader_pb2_grpc.ShaderTranslatorStub(ch)
            while not self._stop.is_set():
                try:
                    s = stub.GetStats(shader_pb2.StatsRequest(), timeout=POLL_S)
                    self.last = ShaderStats(
                        s.translations, s.cache_hits, s.cache_misses, s.errors, round(s.translate_seconds, 3), s.carried
                    )
                except grpc.RpcError:
                    pass  # not up yet, or already stopped
                self._stop.wait(POLL_S)

    def stop(self) -> ShaderStats | None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        return self.last


def process_events(events: list[tuple[float, str, str]], t0: float) -> list[dict]:
    """The supervisor's events as ``{"t_s", "process", "what"}``, seconds from ``t0``."""
    return [{"t_s": round(t - t0, 3), "process": p, "what": w} for t, p, w in events]


def gpu_restarts(events: list[dict]) -> list[dict]:
    """GPU process crashes and what replaced them (a promoted standby or a fresh start)."""
    return [
        e
        for e in events
        if e["process"] == "gpu" and ("restarting" in e["what"] or "promoted" in e["what"] or "crash loop" in e["what"])
    ]


def first_healthy(events: list[dict]) -> dict[str, float]:
    """Seconds from the start of the run until each process first served."""
    out: dict[str, float] = {}
    for e in events:
        if e["what"].startswith("healthy"):
            out.setdefault(e["process"], e["t_s"])
    return out


def first_frame_s(frames_dir: Path, t0_wall: float) -> float | None:
    """Seconds from the start of the run (wall clock ``t0_wall``) until frame 1's PNG was written."""
    p = Path(frames_dir) / "frame_000001.png"
    try:
        return round(p.stat().st_mtime - t0_wall, 3)
    except OSError:
        return None


_DEVICE = re.compile(r"\bvulkan device (.+?)\s*$")
_HEADLESS = re.compile(r"\bheadless \(no window: (.+)\)\s*$")
_WINDOW = re.compile(r"\bwindow '(.*)' (\d+)x(\d+)")


def device(log_text: str) -> dict:
    """The Vulkan device the GPU process used and how it presented (from its log lines)."""
    name = present = None
    for line in log_text.splitlines():
        if not line.startswith("gpu "):
            continue
        if m := _DEVICE.search(line):
            name = m.group(1)
        elif m := _HEADLESS.search(line):
            present = f"headless ({m.group(1)})"
        elif m := _WINDOW.search(line):
            present = f"window {m.group(2)}x{m.group(3)}"
    return {"vulkan_device": name, "presentation": present or "headless"}


def coop_events(game_said: list[str]) -> list[str]:
    """The game's co-op lines (``coop: ...``: joined, players appearing and leaving, totals)."""
    return [s for s in game_said if s.startswith("coop:") or " coop:" in s]


def wall_and_mono() -> tuple[float, float]:
    """The same instant on both clocks (file times are wall clock, supervisor events monotonic)."""
    return time.time(), time.monotonic()
