"""Machine code to SPIR-V, the architecture-neutral part: what both ISAs' lowerings share.

``base.LowerBase`` holds the module being written, the register model (machine registers and
predicates as function variables), constants and the function's emission; the mixins add the
semantics both encodings share (``semantics``: FP comparisons, NaN-suppressing min/max,
saturating conversions, exactly rounded FFMA/DFMA, directed rounding, truth tables), the
memory spaces, atomics and the emulated 32-lane warp (``memory``: the IR both ISA parts build for
them and its SPIR-V), and the control flow
(``control``: structured from ``spirv/structure.py``'s plan, or a dispatcher loop).
``lowering.Lowering`` is their sum, the base class of ``sm86`` and ``sm53``'s compute
lowerings; ``graphics.GraphicsLowering`` adds the vertex/fragment interface both ISAs' graphics
lowerings use.  An ISA part adds its operand reading and a table from its instructions'
lowering keys to handler methods (``RULES``), and the hooks of its control flow.
"""
