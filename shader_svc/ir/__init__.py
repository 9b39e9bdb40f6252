"""The intermediate representation between an ISA's decoded instructions and SPIR-V: typed
values, the operations declared in one table (``ops.py``), blocks of operations built with
type checks (``block.py``), the program as one function of basic blocks (``block.Function``),
its optimiser (``optimize.py``) and ONE lowering of the operations to SPIR-V shared by both ISAs
(``to_spirv.py``).  An ISA part maps each of its instructions (one ``RULES`` row) to IR; what an
operation means is written once, in the lowering.

Every instruction family of both ISAs, compute and graphics, is written in IR: a handler builds
rows only (SPIR-V written while the function is built is refused, ``lower/base.py``).
shader_svc/README.md "Intermediate representation" lists the families and their rows.
"""
