"""The whole shared lowering: the base class of each ISA's lowering (``sm86/to_spirv.py``,
``sm53/to_spirv.py``)."""

from __future__ import annotations

from shader_svc.lower.control import ControlFlow
from shader_svc.lower.memory import Memory
from shader_svc.lower.semantics import Semantics
from shader_svc.lower.warp import Warp


class Lowering(ControlFlow, Memory, Warp, Semantics):
    """Registers, semantics, memory, warp and control flow; an ISA part adds its operand
    reading, its ``RULES`` table (lowering key -> handler method) and its control-flow hooks."""
