// The same start as crt0.s, but the start-up ends in an endless branch-to-self once the
// program returns (as some runtimes' NSO crt0 does) instead of returning to the loader.
.section .text.crt0, "ax"
.global _start
.hidden _start
.type _start, %function
_start:
    b 1f
    .word __nx_mod0 - _start
    .ascii "HOMEBREW"
    .space 0x70
1:  mov x3, x30
    adr x2, _start
    bl hb_start
2:  b 2b
.include "mod0.inc"
