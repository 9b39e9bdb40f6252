"""Validation of the compute packets (PROTOCOL.md "Compute"; the replay is gpu_host/compute.py):
``validate.plan`` calls ``check`` for COMPUTE_BUFFER, COMPUTE_CONST, COMPUTE_SURFACE and DISPATCH
with the state the submission bound so far; a problem comes back as the text after the packet's
name (validate raises it as the submission's SubmissionError), so nothing of a bad submission
reaches Vulkan.  What only the device can say (DISPATCH's group counts against
maxComputeWorkGroupCount) is checked where the dispatch is recorded (compute.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from gpu_host import packets as P
from gpu_host.objects import Objects

EMPTY = P.EMPTY
SURFACE_FORMATS = ("RGBA8", "BGRA8")  # colour formats of 4-byte texels a surface pool entry may have
COMPUTE_OPS = frozenset({P.OP_COMPUTE_BUFFER, P.OP_COMPUTE_CONST, P.OP_COMPUTE_SURFACE, P.OP_DISPATCH})


@dataclass
class CheckState:
    """What the compute packets bound so far in one submission (validation's view)."""

    buffers: dict[int, tuple] = field(default_factory=dict)  # slot -> COMPUTE_BUFFER
    consts: dict[int, int] = field(default_factory=dict)  # bank offset -> COMPUTE_CONST value


def _range(objects: Objects, pool: int, offset: int, size: int, what: str = "") -> str | None:
    psize = objects.memory.pool_size(pool)
    if psize is None:
        return f"field {what}pool {pool} is not a registered pool"
    if size == 0 or offset + size > psize:
        return f"{what}range {offset:#x}+{size:#x} is empty or runs past pool {pool}'s end {psize:#x}"
    return None


def check(cmd: tuple, objects: Objects, st: CheckState, add_range: Callable[[tuple[int, int, int]], None]) -> str | None:
    """One compute packet checked against the registered objects; the pool ranges it reads are
    added to the submission's snapshot (``add_range``).  Returns what is wrong, naming the field."""
    op = cmd[0]
    if op == P.OP_COMPUTE_BUFFER:
        slot, pool, off, size, at, write = cmd[1:7]
        bad = _range(objects, pool, off, size)
        if bad:
            return bad
        if at != EMPTY and (at % 8 or at + 8 > P.MAX_COMPUTE_BANK):
            return f"field at = {at:#x} is not a multiple of 8 inside a 64 KiB bank"
        if write:
            can_write = getattr(objects.memory, "can_write", None)
            if can_write is not None and not can_write(pool):
                return f"field write: pool {pool} was mapped read-only (its memfd refuses writes)"
        add_range((pool, off, size))
        st.buffers[slot] = cmd
    elif op == P.OP_COMPUTE_CONST:
        if cmd[1] % 4:
            return f"field at = {cmd[1]:#x} is not a multiple of 4"
        st.consts[cmd[1]] = cmd[2]
    elif op == P.OP_COMPUTE_SURFACE:
        tid = cmd[2]
        if tid == EMPTY:
            return None
        t = objects.textures.get(tid)
        if t is None:
            return f"field texture {tid} is not a registered texture"
        if not t.render_target or t.fmt.name not in SURFACE_FORMATS or t.samples > 1 or t.cube:
            return (
                f"field texture {tid} ({t.fmt.name}, {t.samples} sample(s), {t.layers} layer(s)"
                f"{', render target' if t.render_target else ''}) is not a one-sample, non-cube "
                f"{'/'.join(SURFACE_FORMATS)} render target (a surface pool entry: one layer for the "
                "2D pool, several for the 2D array pool; a 1D one's for the 1D or 1D array pool)"
            )
    else:  # DISPATCH
        _, prog, x, y, z, bank, mask, ppool, poff, psize, pat = cmd
        if prog not in objects.compute_programs:
            return f"field program {prog} is not a registered compute program"
        if bank < 16 or bank % 16:
            return f"field bank_size = {bank} is not a multiple of 16 from 16 to 65536"
        for k in range(P.COMPUTE_BUFFER_SLOTS):
            if mask >> k & 1:
                b = st.buffers.get(k)
                if b is None:
                    return f"field buffer_mask = {mask:#x}: storage buffer slot {k} is not bound"
                if b[5] != EMPTY and b[5] + 8 > bank:
                    return f"storage buffer slot {k}'s address at {b[5]:#x} lies past the {bank}-byte bank"
        for at in st.consts:
            if at + 4 > bank:
                return f"COMPUTE_CONST at {at:#x} lies past the {bank}-byte bank (field bank_size)"
        if psize:
            if pat % 4 or pat + psize > bank:
                return (
                    f"fields params_at/params_size = {pat:#x}+{psize:#x} do not fit the {bank}-byte bank "
                    "(or params_at is not a multiple of 4)"
                )
            bad = _range(objects, ppool, poff, psize, "params_")
            if bad:
                return bad
            add_range((ppool, poff, psize))
    return None
