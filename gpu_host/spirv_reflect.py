"""Just enough SPIR-V reflection to refuse a program whose resources do not match the GPU
process's fixed descriptor layout (a mismatch is undefined behaviour that can crash a driver).

Layout: set 0, bindings 0-3 uniform blocks, bindings 4-7 combined image samplers; no push
constants or storage buffers.  Set 1 holds the guest's bindless pools (the shader service's
lowering of TEX.B and kin): binding 0 an array of ``POOL_TEXTURES`` 2D sampled images, binding 1
an array of ``POOL_SAMPLERS`` samplers; a program using them reports ``pools``.  Also reports the
vertex stage's input locations, the view kind of each set-0 sampler and whether the code's
lookups through it compare with a reference (Dref) or not (``lookups``, checked against the
bound sampler's compare op at every draw).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

SPIRV_MAGIC = 0x07230203
OP_DECORATE, OP_VARIABLE, OP_TYPE_POINTER, OP_ENTRY_POINT = 71, 59, 32, 15
OP_TYPE_IMAGE, OP_TYPE_SAMPLER, OP_TYPE_ARRAY, OP_CONSTANT = 25, 26, 28, 43
OP_TYPE_SAMPLED_IMAGE = 27
OP_LOAD, OP_COPY_OBJECT = 61, 83
# image lookups through a combined image sampler (its id the third operand): those that compare
# with a reference (Dref) and those that do not; OpImageFetch / OpImageRead take no sampler
DREF_LOOKUPS = frozenset({89, 90, 93, 94, 97, 307, 308, 311, 312, 315})
PLAIN_LOOKUPS = frozenset({87, 88, 91, 92, 96, 305, 306, 309, 310, 314})
DIM_2D, DIM_3D, DIM_CUBE = 1, 2, 3
POOL_TEXTURES = 16  # set 1 binding 0: the texture pool's entries 0..15 (shader_svc's TEXTURE_POOL)
POOL_SAMPLERS = 4  # set 1 binding 1: the sampler pool's entries 0..3 (shader_svc's SAMPLER_POOL)
DEC_SPEC_ID, DEC_BUILTIN, DEC_LOCATION, DEC_BINDING, DEC_SET = 1, 11, 30, 33, 34
SC_UNIFORM_CONSTANT, SC_INPUT, SC_UNIFORM, SC_PUSH_CONSTANT, SC_STORAGE_BUFFER = 0, 1, 2, 9, 12
UBO_BINDINGS = range(0, 4)
SAMPLER_BINDINGS = range(4, 8)


class SpirvError(ValueError):
    pass


@dataclass(frozen=True)
class Reflection:
    execution_model: int
    input_locations: frozenset[int]
    bindings: frozenset[int]
    pools: bool = False  # reads the bindless pools of descriptor set 1
    # (binding, kind) of each set-0 sampler: "2d", "2d_array", "cube", "cube_array" or "other"
    # (what image view it must be given: a view of another type is undefined behaviour)
    sampler_kinds: tuple[tuple[int, str], ...] = ()
    # (binding, "dref" / "plain" / "both") of each set-0 sampler the code looks up: whether its
    # lookups compare with a reference.  A compare sampler under a plain lookup, or a plain
    # sampler under a Dref lookup, is undefined in Vulkan: the draw is refused (validate.py)
    lookups: tuple[tuple[int, str], ...] = ()
    # the SpecIds of the module's specialisation constants (gfx-layers: a geometry module that
    # writes Layer declares pipelines.LAYER_COUNT_SPEC_ID, the framebuffer's layer count)
    spec_ids: frozenset[int] = frozenset()


def reflect(code: bytes, what: str) -> Reflection:
    if len(code) < 20 or len(code) % 4:
        raise SpirvError(f"{what}: {len(code)} bytes is not a SPIR-V module")
    words = struct.unpack(f"<{len(code) // 4}I", code)
    if words[0] != SPIRV_MAGIC:
        raise SpirvError(f"{what}: bad SPIR-V magic {words[0]:#x}")
    deco: dict[int, dict[int, int]] = {}
    ptr_sc: dict[int, int] = {}
    ptr_to: dict[int, int] = {}
    arrays: dict[int, tuple[int, int]] = {}  # array type -> (element type, length constant)
    consts: dict[int, int] = {}
    images: dict[int, tuple[int, int]] = {}  # image type -> (dim, sampled)
    arrayed: dict[int, int] = {}  # image type -> Arrayed
    sampled_images: dict[int, int] = {}  # sampled image type -> its image type
    sampler_types: set[int] = set()
    variables: list[tuple[int, int]] = []
    ptr_of: dict[int, int] = {}  # variable -> its pointer type
    models = []
    loaded: dict[int, int] = {}  # OpLoad / OpCopyObject result -> what it was read from
    uses: dict[int, set[str]] = {}  # variable -> "dref" / "plain" lookups through it
    i = 5
    while i < len(words):
        wc, op = words[i] >> 16, words[i] & 0xFFFF
        if wc == 0 or i + wc > len(words):
            raise SpirvError(f"{what}: instruction at word {i} has bad word count {wc}")
        ins = words[i : i + wc]
        if op == OP_DECORATE and wc >= 3:
            deco.setdefault(ins[1], {})[ins[2]] = ins[3] if wc >= 4 else 1
        elif op == OP_TYPE_POINTER and wc == 4:
            ptr_sc[ins[1]] = ins[2]
            ptr_to[ins[1]] = ins[3]
        elif op == OP_TYPE_ARRAY and wc == 4:
            arrays[ins[1]] = (ins[2], ins[3])
        elif op == OP_CONSTANT and wc == 4:
            consts[ins[2]] = ins[3]
        elif op == OP_TYPE_IMAGE and wc >= 9:
            images[ins[1]] = (ins[3], ins[7])
            arrayed[ins[1]] = ins[5]
        elif op == OP_TYPE_SAMPLED_IMAGE and wc == 3:
            sampled_images[ins[1]] = ins[2]
        elif op == OP_TYPE_SAMPLER and wc == 2:
            sampler_types.add(ins[1])
        elif op == OP_VARIABLE and wc >= 4:
            variables.append((ins[2], ins[3]))
            ptr_of[ins[2]] = ins[1]
        elif op == OP_ENTRY_POINT and wc >= 3:
            models.append(ins[1])
        elif op in (OP_LOAD, OP_COPY_OBJECT) and wc >= 4:
            loaded[ins[2]] = ins[3]
        elif (op in DREF_LOOKUPS or op in PLAIN_LOOKUPS) and wc >= 4:
            src = ins[3]
            for _ in range(8):  # the variable the sampled image was loaded from
                if src not in loaded:  # (bounded: a hostile module may loop its ids)
                    break
                src = loaded[src]
            uses.setdefault(src, set()).add("dref" if op in DREF_LOOKUPS else "plain")
        i += wc
    if len(models) != 1:
        raise SpirvError(f"{what}: expected one entry point, found {len(models)}")
    inputs, bindings = set(), set()
    kinds: dict[int, str] = {}
    lookups: dict[int, str] = {}
    pools = False

    def kind_of(vid: int) -> str:
        img = sampled_images.get(ptr_to.get(ptr_of.get(vid, -1), -1), -1)
        dim = images.get(img, (None, None))[0]
        base = {DIM_2D: "2d", DIM_CUBE: "cube", DIM_3D: "3d"}.get(dim)  # 3D: never arrayed
        return "other" if base is None else base + ("_array" if arrayed.get(img) else "")

    def pool_array(vid: int, b: int) -> None:
        """Set 1's bindings must be exactly the layout's arrays (a count or type that differs
        from the descriptor set layout is undefined behaviour in the driver)."""
        elem, length = arrays.get(ptr_to.get(ptr_of.get(vid, -1), -1), (-1, -1))
        n = consts.get(length)
        if b == 0:
            ok = n == POOL_TEXTURES and images.get(elem, (None, None)) in ((DIM_2D, 1),)
            want = f"an array of {POOL_TEXTURES} sampled 2D images"
        else:
            ok = n == POOL_SAMPLERS and elem in sampler_types
            want = f"an array of {POOL_SAMPLERS} samplers"
        if not ok:
            raise SpirvError(f"{what}: set 1 binding {b} (%{vid}) is not {want}")

    for vid, sc in variables:
        d = deco.get(vid, {})
        if sc in (SC_PUSH_CONSTANT, SC_STORAGE_BUFFER):
            raise SpirvError(
                f"{what}: variable %{vid} uses storage class {sc} (push constants / storage buffers are not supported)"
            )
        if sc == SC_UNIFORM_CONSTANT and d.get(DEC_SET, 0) == 1:
            if d.get(DEC_BINDING) not in (0, 1):
                raise SpirvError(
                    f"{what}: resource %{vid} in set 1 at binding {d.get(DEC_BINDING)}, "
                    "must be 0 (texture pool) or 1 (sampler pool)"
                )
            pool_array(vid, d[DEC_BINDING])
            pools = True
            continue
        if sc in (SC_UNIFORM, SC_UNIFORM_CONSTANT):
            if d.get(DEC_SET, 0) != 0 or DEC_BINDING not in d:
                raise SpirvError(f"{what}: resource %{vid} is not in descriptor set 0 with a binding (or set 1's pools)")
            b = d[DEC_BINDING]
            want = UBO_BINDINGS if sc == SC_UNIFORM else SAMPLER_BINDINGS
            if b not in want:
                kind = "uniform block" if sc == SC_UNIFORM else "sampler"
                raise SpirvError(f"{what}: {kind} %{vid} at binding {b}, must be in {want.start}..{want.stop - 1}")
            bindings.add(b)
            if sc == SC_UNIFORM_CONSTANT:
                kinds[b] = kind_of(vid)
                u = uses.get(vid)
                if u:
                    lookups[b] = "both" if len(u) == 2 else next(iter(u))
        elif sc == SC_INPUT and DEC_LOCATION in d and DEC_BUILTIN not in d:
            inputs.add(d[DEC_LOCATION])
    spec_ids = frozenset(d[DEC_SPEC_ID] for d in deco.values() if DEC_SPEC_ID in d)
    return Reflection(
        models[0],
        frozenset(inputs),
        frozenset(bindings),
        pools,
        tuple(sorted(kinds.items())),
        tuple(sorted(lookups.items())),
        spec_ids,
    )
