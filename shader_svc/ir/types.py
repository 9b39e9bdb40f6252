"""The IR's value types: the machine's 32-bit registers and predicates, and the wider and
floating-point values the operations compute with, and pointers to a u32 in global or shared
memory (each lowers to one SPIR-V type)."""

from __future__ import annotations

from enum import Enum


class Type(Enum):
    BOOL = "bool"
    U32 = "u32"
    U64 = "u64"
    F32 = "f32"
    F64 = "f64"
    PTR_GLOBAL = "ptr_global"  # a u32 in global memory (a 64-bit physical address)
    PTR_SHARED = "ptr_shared"  # a u32 of the workgroup's shared memory
    PTR_LOCAL = "ptr_local"  # a u32 of the invocation's local memory
    WORDS = "words"  # the 1..4 u32 words one access loaded together (read with ``Word``)
    TEXEL = "texel"  # the four 32-bit components one texture access returns (read with ``TexelWord``)
