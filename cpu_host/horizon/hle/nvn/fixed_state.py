"""The NVN front end's fixed-function state: our structures (nvn.h) filled by their setters and
read when a command buffer binds them. ``NvnFixedState`` is mixed into ``frontend.NvnService``,
whose state and helpers (``_obj``, ``_new``, ``_gpu``, the lock) its methods use."""

from __future__ import annotations

import logging
import math
import struct
from typing import Callable

from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.nvn.objects import (
    Texture,
)
from gpu_host import packets as P

from cpu_host.horizon.hle.nvn.tables import (
    POLYGON_OFFSET_LINE,
    POLYGON_OFFSET_FILL,
    MAX_TARGETS,
    _enum,
    _faces,
    _blend_packet,
    _extra_blend_packets,
)

log = logging.getLogger("cpu_host.nvn")


class NvnFixedState:
    # -- fixed-function state: our structures (nvn.h), filled here, read at bind -----------------
    @staticmethod
    def _state_at(c: Call, what: str, arg: int = 0) -> int:
        addr = c.arg(arg)
        if addr == 0:
            raise GuestError(f"{what}: null state pointer")
        return addr

    def _words(self, c: Call, what: str, n: int, arg: int = 0) -> list[int]:
        return list(struct.unpack(f"<{n}I", c.read(self._state_at(c, what, arg), 4 * n, what)))

    def _put(self, c: Call, what: str, offset: int, *values: int) -> None:
        c.write(self._state_at(c, what) + offset, struct.pack(f"<{len(values)}I", *values), what)

    def state_defaults(self, what: str, words: tuple) -> Callable[[Call], None]:
        return lambda c: self._put(c, what, 0, *words)

    def state_field(self, what: str, offset: int, limit: int | None = None) -> Callable[[Call], None]:
        """A setter of one u32 field (argument 1); ``limit``: the largest value allowed (None:
        a boolean, stored as 0/1)."""

        def setter(c: Call) -> None:
            v = c.sarg32(1)
            if limit is None:
                v = int(v != 0)
            else:
                _enum(what, "value", v, limit)
            self._put(c, what, offset, v)

        return setter

    def ds_stencil_func(self, c: Call) -> None:
        what = "nvnDepthStencilStateSetStencilFunc"
        faces, func = _faces(what, c.sarg32(1)), c.sarg32(2)
        _enum(what, "func", func, len(P.COMPARE_OPS) - 1)
        for face in faces:
            self._put(c, what, 16 * face + 12, func)  # front at 16, back at 32: words 0..2 ops, 3 func

    def ds_stencil_op(self, c: Call) -> None:
        what = "nvnDepthStencilStateSetStencilOp"
        faces = _faces(what, c.sarg32(1))
        ops = [c.sarg32(i) for i in (2, 3, 4)]
        for name, v in zip(("fail", "depth_fail", "depth_pass"), ops):
            _enum(what, name, v, len(P.STENCIL_OPS) - 1)
        for face in faces:
            self._put(c, what, 16 * face, *ops)

    def blend_func(self, c: Call) -> None:
        what = "nvnBlendStateSetBlendFunc"
        vals = [c.sarg32(i) for i in (1, 2, 3, 4)]
        for name, v in zip(("src_color", "dst_color", "src_alpha", "dst_alpha"), vals):
            _enum(what, name, v, len(P.BLEND_FACTORS) - 1)
        self._put(c, what, 4, *vals)

    def blend_equation(self, c: Call) -> None:
        what = "nvnBlendStateSetBlendEquation"
        vals = [c.sarg32(1), c.sarg32(2)]
        for name, v in zip(("color", "alpha"), vals):
            _enum(what, name, v, len(P.BLEND_OPS) - 1)
        self._put(c, what, 20, *vals)

    def color_blend_enable(self, c: Call) -> None:
        what = "nvnColorStateSetBlendEnable"
        target = c.sarg32(1)
        _enum(what, "target", target, MAX_TARGETS - 1)
        mask = self._words(c, what, 1)[0] & ~(1 << target) | (c.arg32(2) != 0) << target
        self._put(c, what, 0, mask)

    def channel_mask(self, c: Call) -> None:
        what = "nvnChannelMaskStateSetChannelMask"
        target = c.sarg32(1)
        _enum(what, "target", target, MAX_TARGETS - 1)
        bits = sum((c.arg32(2 + i) != 0) << i for i in range(4))
        mask = self._words(c, what, 1)[0] & ~(0xF << 4 * target) | bits << 4 * target
        self._put(c, what, 0, mask)

    def ms_samples(self, c: Call) -> None:
        what = "nvnMultisampleStateSetSamples"
        n = c.sarg32(1)
        if n not in (0, *P.SAMPLE_COUNTS):
            raise GuestError(f"{what}: samples {n} is not 0 or one of {P.SAMPLE_COUNTS}")
        self._put(c, what, 0, n)

    def cb_depth_stencil_state(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferBindDepthStencilState"
            rec = self._rec(c, what)
            w = self._words(c, what, 16, 1)
            _enum(what, "depth_func", w[2], len(P.COMPARE_OPS) - 1)
            for i, face in ((4, "front"), (8, "back")):
                for j, name in enumerate(("fail", "depth_fail", "depth_pass")):
                    _enum(what, f"{face} {name}", w[i + j], len(P.STENCIL_OPS) - 1)
                _enum(what, f"{face} func", w[i + 3], len(P.COMPARE_OPS) - 1)
            rec.ds[0:4] = [w[0] != 0, w[1] != 0, w[2], w[3] != 0]
            rec.ds[4:8] = w[4:8]  # front fail, depth fail, pass, func (ref and masks stay)
            rec.ds[11:15] = w[8:12]
            rec.commands.append((P.OP_DEPTH_STENCIL, *rec.ds))

    def cb_stencil_value(self, index: int, what: str) -> Callable[[Call], None]:
        """SetStencilRef / ValueMask / Mask: field ``index`` of each face (ref, read mask, write
        mask), 8 bits."""

        def setter(c: Call) -> None:
            with self.lock:
                rec = self._rec(c, what)
                for face in _faces(what, c.sarg32(1)):
                    rec.ds[8 + 7 * (face - 1) + index] = c.arg32(2) & 0xFF
                rec.commands.append((P.OP_DEPTH_STENCIL, *rec.ds))

        return setter

    def cb_polygon_state(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferBindPolygonState"
            rec = self._rec(c, what)
            cull, front, mode, offsets = self._words(c, what, 4, 1)
            _enum(what, "cull_face", cull, len(P.CULL_MODES) - 1)
            _enum(what, "front_face", front, len(P.FRONT_FACES) - 1)
            _enum(what, "polygon_mode", mode, len(P.POLYGON_MODES) - 1)
            bias = bool(offsets & (POLYGON_OFFSET_FILL if mode == 0 else POLYGON_OFFSET_LINE))
            rec.commands.append((P.OP_RASTER, cull, front, mode, bias))

    def cb_blend_state(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferBindBlendState"
            rec = self._rec(c, what)
            target, sc, dc, sa, da, ce, ae, _ = self._words(c, what, 8, 1)
            _enum(what, "target", target, MAX_TARGETS - 1)
            for name, v in (("src_color", sc), ("dst_color", dc), ("src_alpha", sa), ("dst_alpha", da)):
                _enum(what, name, v, len(P.BLEND_FACTORS) - 1)
            for name, v in (("color_equation", ce), ("alpha_equation", ae)):
                _enum(what, name, v, len(P.BLEND_OPS) - 1)
            if target == 0:
                rec.blend = (sc, dc, sa, da, ce, ae)
                rec.commands.append(_blend_packet(rec))
            else:
                rec.blends[target] = (sc, dc, sa, da, ce, ae)
                rec.commands += _extra_blend_packets(rec)

    def cb_channel_mask_state(self, c: Call) -> None:
        with self.lock:
            rec = self._rec(c, "nvnCommandBufferBindChannelMaskState")
            rec.channel_mask = self._words(c, "nvnCommandBufferBindChannelMaskState", 1, 1)[0]
            rec.commands.append(_blend_packet(rec))
            rec.commands += _extra_blend_packets(rec)

    def cb_multisample_state(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferBindMultisampleState"
            rec = self._rec(c, what)
            samples, a2c = self._words(c, what, 2, 1)
            if samples not in (0, *P.SAMPLE_COUNTS):
                raise GuestError(f"{what}: samples {samples} is not 0 or one of {P.SAMPLE_COUNTS}")
            rec.commands.append((P.OP_MULTISAMPLE, max(samples, 1), a2c != 0))

    def cb_downsample(self, c: Call) -> None:
        """nvnCommandBufferDownsample(cb, src, dst): a multisampled colour texture resolved into a
        one-sample one of the same size and format (RESOLVE; the GPU process checks the rest)."""
        with self.lock:
            what = "nvnCommandBufferDownsample"
            rec = self._rec(c, what)
            src = self._obj(c, 1, Texture, f"{what} src")
            dst = self._obj(c, 2, Texture, f"{what} dst")
            if src.samples == 1:
                raise GuestError(f"{what}: the source texture has one sample (nothing to downsample)")
            if dst.samples != 1:
                raise GuestError(f"{what}: the destination texture has {dst.samples} samples; it must have one")
            if (src.width, src.height, src.format) != (dst.width, dst.height, dst.format):
                raise GuestError(
                    f"{what}: source {src.format} {src.width}x{src.height} and destination "
                    f"{dst.format} {dst.width}x{dst.height} differ"
                )
            rec.commands.append((P.OP_RESOLVE, src.id, dst.id))

    def cb_scissor(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferSetScissor"
            rec = self._rec(c, what)
            x, y, w, h = (c.sarg32(i) for i in (1, 2, 3, 4))
            if min(x, y, w, h) < 0:
                raise GuestError(f"{what}: rectangle {x}, {y}, {w}x{h} has a negative field")
            rec.commands.append((P.OP_SCISSOR, *(min(v, 16384) for v in (x, y, w, h))))

    def _floats(self, c: Call, arg: int, n: int, what: str) -> tuple[float, ...]:
        vals = struct.unpack(f"<{n}f", c.read(c.arg(arg), 4 * n, what))
        if not all(math.isfinite(v) for v in vals):
            raise GuestError(f"{what}: {vals} are not all finite")
        return vals

    def cb_depth_bias(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferSetDepthBias"
            rec = self._rec(c, what)
            rec.commands.append((P.OP_DEPTH_BIAS, *self._floats(c, 1, 3, what)))

    def cb_blend_color(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferSetBlendColor"
            rec = self._rec(c, what)
            rec.commands.append((P.OP_BLEND_CONSTANT, *self._floats(c, 1, 4, what)))

    def cb_clear_depth_stencil(self, c: Call) -> None:
        with self.lock:
            what = "nvnCommandBufferClearDepthStencil"
            rec = self._rec(c, what)
            (depth,) = self._floats(c, 1, 1, what)
            if not 0.0 <= depth <= 1.0:
                raise GuestError(f"{what}: depth {depth} is not in 0..1")
            aspects = (1 if c.arg32(2) else 0) | (2 if c.arg32(4) & 0xFF else 0)
            if aspects:
                rec.commands.append((P.OP_CLEAR_DEPTH_STENCIL, depth, c.arg32(3) & 0xFF, aspects))
