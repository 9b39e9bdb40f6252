"""NVN events in the GPU process: a 32-bit value in pool memory that a submission writes or adds
to (EVENT_SIGNAL) and waits on (EVENT_WAIT), while the CPU writes it through the shared memfd.

A submission with EVENT_WAITs is replayed in parts (``split``): each part runs to completion
(submit and wait, write-backs and event signals applied), then the wait polls the event's pool
bytes until its condition holds, then the next part runs.  Each later part starts with the state
packets current at the wait (``carried_state``), so it draws exactly as the unsplit submission
would.  The engine lock is released while polling, so registrations (the guest goes on after a
flush) are served meanwhile; a part is checked again against the objects as they are when it runs.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

from gpu_host import packets as P

log = logging.getLogger("gpu_host.events")

MASK = 0xFFFFFFFF
SIGNAL_WRITE, SIGNAL_ADD = 0, 1
WAIT_EQUAL, WAIT_GEQUAL_WRAP = 0, 1
POLL_FIRST_S, POLL_MAX_S = 0.0005, 0.01  # polls back off to 10 ms: a wait costs no CPU core

# State packets that hold from where they stand to the end of a submission (PROTOCOL.md), keyed by
# what they set: a later packet of the same key replaces an earlier one.
_STATE_KEYS = {
    P.OP_PROGRAM: "program",
    P.OP_VERTEX_LAYOUT: "layout",
    P.OP_VERTEX: "vertex",
    P.OP_INDEX: "index",
    P.OP_POOLS: "pools",
    P.OP_DEPTH_STENCIL: "ds",
    P.OP_RASTER: "raster",
    P.OP_DEPTH_BIAS: "bias",
    P.OP_BLEND_CONSTANT: "constants",
    P.OP_SCISSOR: "scissor",
    P.OP_MULTISAMPLE: "ms",
}


def problem(memory: Any, cmd: tuple) -> str | None:
    """Why an EVENT_SIGNAL / EVENT_WAIT cannot be served (``None``: it can): the pool registered,
    the 4 bytes aligned and inside it, and for a signal the pool mapped writable."""
    pool, off = cmd[1], cmd[2]
    psize = memory.pool_size(pool)
    if psize is None:
        return f"field pool {pool} is not a registered pool"
    if off % 4:
        return f"field offset {off:#x} is not 4-byte aligned (an event is a u32)"
    if off + 4 > psize:
        return f"event bytes {off:#x}+4 run past pool {pool}'s end {psize:#x}"
    can_write = getattr(memory, "can_write", None)
    if cmd[0] == P.OP_EVENT_SIGNAL and can_write is not None and not can_write(pool):
        return f"pool {pool} was mapped read-only (its memfd refuses writes), so the event cannot be signalled"
    return None


def read_value(memory: Any, pool: int, offset: int) -> int:
    # bytes() at once: a memoryview left alive would keep the mmap from closing
    return int.from_bytes(bytes(memory.read(pool, offset, 4)), "little")


def apply_signal(memory: Any, cmd: tuple) -> None:
    """EVENT_SIGNAL into pool memory (WRITE: the value; ADD: added, modulo 2^32)."""
    if not hasattr(memory, "write"):  # a recording being replayed: nothing to write to
        return
    _, pool, off, mode, value = cmd
    if mode == SIGNAL_ADD:
        value = (read_value(memory, pool, off) + value) & MASK
    memory.write(pool, off, value.to_bytes(4, "little"))


def satisfied(mode: int, seen: int, want: int) -> bool:
    """EQUAL, or GEQUAL_WRAP: the signed 32-bit difference ``seen - want`` is >= 0."""
    if mode == WAIT_EQUAL:
        return seen == want
    return (seen - want) & MASK < 0x80000000


_COMPUTE_BINDINGS = frozenset({P.OP_COMPUTE_BUFFER, P.OP_COMPUTE_CONST, P.OP_COMPUTE_SURFACE})


def carried_state(commands: list[tuple]) -> list[tuple]:
    """The packets that recreate the render state current after ``commands``: the targets (TARGET,
    DEPTH_TARGET or RENDER_TARGETS), then the viewport set since it (a target resets the viewport), then every other
    state packet's last value, uniform and texture bindings per slot, the compute bindings
    (COMPUTE_BUFFER / COMPUTE_SURFACE per slot, COMPUTE_CONST per bank offset)."""
    target = viewport = None
    viewports: dict[int, tuple] = {}  # shader-tex: VIEWPORT_INDEXED by index, reset by a target too
    state: dict[Any, tuple] = {}
    for cmd in commands:
        op = cmd[0]
        if op == P.OP_TARGET or op == P.OP_DEPTH_TARGET or op == P.OP_RENDER_TARGETS:
            target, viewport = cmd, None
            viewports = {}
        elif op == P.OP_BLEND or op == P.OP_BLEND_STATE:  # per colour target (BLEND: target 0)
            state[("blend", cmd[1] if op == P.OP_BLEND_STATE else 0)] = cmd
        elif op == P.OP_VIEWPORT:
            viewport = cmd
            viewports.pop(0, None)
        elif op == P.OP_VIEWPORT_INDEXED:
            viewports[cmd[1]] = cmd
            if cmd[1] == 0:
                viewport = None
        elif op == P.OP_UNIFORM or op == P.OP_TEXTURE:
            state[(op, cmd[1])] = cmd
        elif op in _COMPUTE_BINDINGS:  # per storage buffer / surface slot, per bank word (compute.py)
            state[(op, cmd[1])] = cmd
        else:
            key = _STATE_KEYS.get(op)
            if key is not None:
                state[key] = cmd
    return [c for c in (target, viewport) if c is not None] + list(viewports.values()) + list(state.values())


def split(commands: list[tuple]) -> list[tuple[int | None, list[tuple]]]:
    """The parts of a submission: ``(index of the EVENT_WAIT before it or None, commands)``; every
    part after the first starts with the state carried across its wait."""
    parts: list[tuple[int | None, list[tuple]]] = []
    start, wait_at = 0, None
    for i, cmd in enumerate(commands):
        if cmd[0] == P.OP_EVENT_WAIT:
            parts.append((wait_at, commands[start:i]))
            start, wait_at = i + 1, i
    parts.append((wait_at, commands[start:]))
    out = []
    for k, (w, cmds) in enumerate(parts):
        if k:  # the state current at the wait: everything before it, in order
            cmds = carried_state([c for c in commands[:w] if c[0] != P.OP_EVENT_WAIT]) + cmds
        out.append((w, cmds))
    return out


def wait(read: Callable[[], int | None], mode: int, want: int, timeout_s: float) -> tuple[bool | None, int]:
    """Poll ``read`` (the event's value; ``None``: the session is gone) until the condition
    holds: (True, value), timed out: (False, last value), session gone: (None, 0)."""
    deadline = time.monotonic() + timeout_s
    delay = POLL_FIRST_S
    while True:
        seen = read()
        if seen is None:
            return None, 0
        if satisfied(mode, seen, want):
            return True, seen
        if time.monotonic() >= deadline:
            return False, seen
        time.sleep(delay)
        delay = min(delay * 2, POLL_MAX_S)
