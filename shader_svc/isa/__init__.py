"""The architecture-neutral part of the instruction sets: bit fields, the decoded-instruction
record both ISAs produce, and the operand kinds their tables are made of.  ``sm53/`` and
``sm86/`` hold only their tables, field layouts and printers on top of this."""
