"""The results of a texture instruction into registers, shared by the bound and bindless
lowerings of every stage (``gfx_textures``, ``gfx_bindless``, ``texture``): the components the
instruction's write mask enables go, in order, to its destination registers, one 32-bit word
each (the Maxwell/Turing texture instructions' packing, as nvdisasm and ptxas lay them out)."""

from __future__ import annotations

from shader_svc.ir.block import Block


def set_texel_words(b: Block, vec: int, mask: int, dests: list[int], fl: bool) -> None:
    """Component ``c`` of the texel ``vec`` for each bit ``c`` set in ``mask`` (low bit first),
    the k-th enabled one into ``dests[k]`` (255: dropped, the slot still used), as the
    ``TexelWord`` of it (``fl``: of f32 components)."""
    k = 0
    for c in range(4):
        if mask >> c & 1:
            r = dests[k]
            k += 1
            if r != 255:
                b.set_reg(r, b.emit("TexelWord", vec, comp=c, float=fl))
