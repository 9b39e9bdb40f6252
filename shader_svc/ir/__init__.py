"""The intermediate representation between an ISA's decoded instructions and SPIR-V: typed
values, the operations declared in one table (``ops.py``), blocks of operations built with
type checks (``block.py``), and ONE lowering of them to SPIR-V shared by both ISAs
(``to_spirv.py``).  An ISA part maps each of its instructions (one ``RULES`` row) to IR;
what an operation means is written once, in the lowering.

Written in IR so far: every operand read of both ISAs; FP32 arithmetic (FADD, FMUL, FFMA with
.FTZ/.SAT, compute and graphics stages) and FMNMX; the carry-free integer ALU (SM86 MOV, IADD3,
IMAD, LOP3 with its predicate, SEL, IMNMX; SM53 MOV, LOP, LOP3 with their predicate results,
SEL, IMNMX, POPC); predicate logic (SM86 PLOP3, SM53 PSETP).  The other families
call the SPIR-V helpers of ``shader_svc/lower`` directly; shader_svc/README.md "Intermediate
representation" lists the order in which they move here.
"""
