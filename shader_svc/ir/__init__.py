"""The intermediate representation between an ISA's decoded instructions and SPIR-V: typed
values, the operations declared in one table (``ops.py``), blocks of operations built with
type checks (``block.py``), and ONE lowering of them to SPIR-V shared by both ISAs
(``to_spirv.py``).  An ISA part maps each of its instructions (one ``RULES`` row) to IR;
what an operation means is written once, in the lowering.

Written in IR so far: every operand read of both ISAs; FP32 arithmetic and FMNMX; the integer
ALU with its carries (SM86 IADD3/IMAD/LEA carry chains, SM53's condition code), shifts, XMAD,
LEA and the bit and byte operations; MUFU; compute's special registers; predicate logic and comparisons (ISETP/FSETP/DSETP/ICMP); FP64 arithmetic;
conversions (F2I/I2F/F2F/FRND/I2I); every memory space (global, shared, local, constant bank
at run-time addresses, generic addresses), atomics, barriers and the emulated warp's SHFL and
VOTE (``ops.py``'s last block).  The other families
call the SPIR-V helpers of ``shader_svc/lower`` directly; shader_svc/README.md "Intermediate
representation" lists what is where and the order in which the rest moves here.
"""
