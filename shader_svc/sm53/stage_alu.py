"""SM53 ALU rows of every stage (issue 31, shader-u2): the lowering keys of the arithmetic
tables (``lower_int.INT_RULES``, ``lower_float.FLOAT_RULES``, ``lower_half.HALF_RULES``,
``lower_extra.EXTRA_RULES``) that read and write only registers, predicates, the condition
code and constant banks, which the graphics lowering (``to_spirv_gfx.Gfx53``, built on the
compute lowering's handlers) admits as the compute lowering does.  Left out: FSWZADD (its
quad lane order is not established in graphics stages), the FP64 rows DMNMX/DSET and
FFMA32I's exact FFMA (Float64, which the GPU process's device does not enable; Gfx53 refuses
Float64 by name besides), CS2R (compute's special registers)."""

from __future__ import annotations

from shader_svc.sm53.lower_extra import EXTRA_RULES
from shader_svc.sm53.lower_float import FLOAT_RULES
from shader_svc.sm53.lower_half import HALF_RULES
from shader_svc.sm53.lower_int import INT_RULES

STAGE_ALU53 = frozenset({**INT_RULES, **FLOAT_RULES, **HALF_RULES, **EXTRA_RULES}) - {
    "FSWZADD",
    "DMNMX",
    "DSET",
    "FFMA32I",
    "CS2R",
}
