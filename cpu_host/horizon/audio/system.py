"""One audio renderer wired to the host output: what ``audren:u``'s OpenAudioRenderer creates.

``AudioSystem(parameter, memory, sink=None)``: the renderer, its 200 Hz clock and the output
(``output.open_output()`` from the settings unless a sink is given).  Each frame's device-sink
PCM is adapted to the output's channel count and written (never blocking).  ``on_frame`` is
called after every frame (the service signals the renderer's event there).  ``close()`` stops
the clock and closes the output (a WAV file is finalised then, atomically).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from cpu_host.horizon.audio.clock import RenderClock
from cpu_host.horizon.audio.output import Sink, adapt_channels, open_output
from cpu_host.horizon.audio.renderer import AudioRenderer, GuestMemory
from cpu_host.horizon.audio.request import RendererParameter


class AudioSystem:
    def __init__(self, parameter: bytes | RendererParameter, memory: GuestMemory, sink: Sink | None = None,
                 on_frame: Callable[[], None] | None = None) -> None:
        self.renderer = AudioRenderer(parameter, memory, self._device)
        self.sink = sink if sink is not None else open_output(self.renderer.p.sample_rate)
        self.clock = RenderClock(self.renderer, on_frame)
        self.device_sink_index: int | None = None

    def _device(self, index: int, pcm: np.ndarray) -> None:
        if self.device_sink_index is None:        # the first device sink is the console's output
            self.device_sink_index = index
        if index == self.device_sink_index:
            self.sink.write(adapt_channels(pcm, self.sink.channels))

    def update(self, request: bytes) -> tuple[int, bytes]:
        return self.clock.update(request)

    def start(self) -> None:
        self.clock.start()

    def close(self) -> None:
        self.clock.stop()
        self.sink.close()
