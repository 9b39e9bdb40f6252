"""Data-flow analysis of lifted functions, used by ``recompiler.analyse``.

One job a module, in pipeline order:
- ``expr``: symbolic values (constants, arithmetic, loads, opaque leaves) and their evaluation;
- ``transfer``: what one instruction does to the abstract state (registers, stack slots, flags);
- ``values``: the per-function fixed point over the CFG (state before each instruction, value
  sets of merged constants, bounds learned from compares on each edge);
- ``tables``: jump-table recovery from the value at a ``BR`` (any distance, any size);
- ``entry_states``: start values along jumps between functions (tail jumps, fall-throughs,
  table edges into another entry), for the ``BR``s still without a table;
- ``pointers``: code addresses a program builds (``adrp``/``add``, ``adr``, literal pools, data);
- ``stats``: what was found, per program (``nxrecomp recompile --stats``).
"""
