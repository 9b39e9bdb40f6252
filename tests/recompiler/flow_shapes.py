"""The C+assembly source of tests/recompiler/test_flow_tables.py: each recovery shape of
``recompiler.analysis`` hand-written in assembly (so it keeps its shape whatever the compiler
does), called from a C ``main`` that prints what each returns."""

from __future__ import annotations

# the shapes, in AArch64 GNU assembly (one string a line)
_FAR_BASE = (
    """
    .globl far_base
    .type far_base, %function
    .p2align 2
far_base:
    stp x29, x30, [sp, #-32]!
    mov x29, sp
    stp x19, x20, [sp, #16]
    adrp x19, tabA
    add x19, x19, :lo12:tabA
    mov w20, w0
    cmp w1, #0
    b.ge 1f
    mov x19, #7
    mov w0, #-2
    b .LAout
1:  mov w0, w1
    bl far_helper
    mov w1, w0
    cmp w20, #9
    b.hi 2f
    ldrsw x2, [x19, w20, uxtw #2]
    add x2, x2, x19
    br x2
2:  mov w0, #-1
    b .LAout
"""
    + "".join(f".LA{k}:\n    add w0, w1, #{k * 11}\n    b .LAout\n" for k in range(10))
    + """
.LAout:
    ldp x19, x20, [sp, #16]
    ldp x29, x30, [sp], #32
    ret
"""
)

_SPILLED = (
    """
    .globl spilled
    .type spilled, %function
    .p2align 2
spilled:
    sub sp, sp, #48
    stp x29, x30, [sp, #32]
    add x29, sp, #32
    stur w0, [x29, #-4]
    stur w1, [x29, #-8]
    adrp x8, tabB
    add x8, x8, :lo12:tabB
    stur x8, [x29, #-16]
    mov w0, w1
    bl far_helper
    stur w0, [x29, #-8]
    ldur w8, [x29, #-4]
    subs w8, w8, #9
    b.hi .LBdef
    b .LBdisp
.LBdef:
    mov w0, #-1
    b .LBout
.LBdisp:
    ldur x8, [x29, #-16]
    ldursw x9, [x29, #-4]
    ldrsw x10, [x8, x9, lsl #2]
    add x8, x8, x10
    br x8
"""
    + "".join(f".LB{k}:\n    ldur w0, [x29, #-8]\n    add w0, w0, #{k * 13}\n    b .LBout\n" for k in range(10))
    + """
.LBout:
    ldp x29, x30, [sp, #32]
    add sp, sp, #48
    ret
"""
)

_BIG_OPEN = """
    .globl big_open
    .type big_open, %function
    .p2align 2
big_open:
    adrp x1, tabC
    add x1, x1, :lo12:tabC
    ldrsw x2, [x1, w0, sxtw #2]
    add x2, x2, x1
    br x2
""" + "".join(f".LC{k}:\n    mov w0, #{k * 3 + 1}\n    ret\n" for k in range(100))

_BIG_BOUNDED = """
    .globl big_bounded
    .type big_bounded, %function
    .p2align 2
big_bounded:
    cmp w0, #199
    b.hi 1f
    adrp x1, tabD
    add x1, x1, :lo12:tabD
    ldrb w2, [x1, w0, uxtw]
    adr x3, .LD0
    add x3, x3, w2, uxtb #2
    br x3
1:  mov w0, #-1
    ret
""" + "".join(f".LD{k}:\n    mov w0, #{k * 5 + 2}\n    ret\n" for k in range(100))

_SORT_FAR = """
    .globl sort_far
    .type sort_far, %function
    .p2align 2
sort_far:
    stp x29, x30, [sp, #-32]!
    mov x29, sp
    str x19, [sp, #16]
    adrp x19, cmp_desc
    mov x2, #4
    mov x4, #0
    mov x5, #1
    mov x6, #2
    mov x7, #3
    nop
    add x3, x19, :lo12:cmp_desc
    bl qsort
    ldr x19, [sp, #16]
    ldp x29, x30, [sp], #32
    ret
cmp_desc:
    ldr w8, [x0]
    ldr w9, [x1]
    cmp w9, w8
    cset w0, gt
    csinv w0, w0, wzr, ge
    ret
"""

_HELPER = """
    .text
    .globl far_helper
    .type far_helper, %function
    .p2align 2
far_helper:
    add w0, w0, #1
    ret
"""

_DATA = (
    """
    .section .rodata
    .p2align 2
tabA:
"""
    + "".join(f"    .word .LA{k} - tabA\n" for k in range(10))
    + "tabB:\n"
    + "".join(f"    .word .LB{k} - tabB\n" for k in range(10))
    + "tabD:\n"
    + "".join(f"    .byte (.LD{(k * 7) % 100} - .LD0) / 4\n" for k in range(200))
    + "    .p2align 2\ntabC:\n"
    + "".join(f"    .word .LC{k} - tabC\n" for k in range(100))
    + "    .word 0x7fff0000\n    .text\n"
)

_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>

int far_base(int sel, int n);
int spilled(int sel, int y);
int big_open(int sel);
int big_bounded(int sel);
void sort_far(int *v, long n);

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3;
    for (int s = -1; s < 12; s++) printf("A %d %d %d\n", s, far_base(s, n), far_base(s, -n));
    for (int s = -1; s < 12; s++) printf("B %d %d\n", s, spilled(s, n));
    long sum = 0;
    for (int s = 0; s < 100; s++) sum = sum * 31 + big_open((s * 37 + n) % 100);
    printf("C %ld\n", sum);
    sum = 0;
    for (int s = -3; s < 205; s++) sum = sum * 31 + big_bounded(s);
    printf("D %ld\n", sum);
    int v[9] = {5, 3, 9, 1, 7, n, 2, 8, -4};
    sort_far(v, 9);
    printf("E");
    for (int i = 0; i < 9; i++) printf(" %d", v[i]);
    printf("\n");
    return n % 7;
}
"""


def source() -> str:
    asm = _HELPER + _FAR_BASE + _SPILLED + _BIG_OPEN + _BIG_BOUNDED + _SORT_FAR + _DATA
    lines = "".join('"' + line.replace("\\", "\\\\").replace('"', '\\"') + '\\n"\n' for line in asm.splitlines())
    return _MAIN + "\n__asm__(\n" + lines + ");\n"
