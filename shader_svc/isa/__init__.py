"""The architecture-neutral ISA core: bit fields, the decoded-instruction record both ISAs
produce, the operand kinds their tables share, nvdisasm's texts, and the table-driven decoder,
printer (``decoder.py``) and assembler (``assembler.py``).  ``sm53/`` and ``sm86/`` hold only
what is per ISA on top of this: word size and control layout, field positions, their own
operand kinds, checks and texts, and their tables."""
