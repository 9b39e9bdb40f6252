// Start of a homebrew-style test program (ours): the NRO header's first 0x10 bytes, the
// "HOMEBREW" tag, then 0x80-byte gap the NRO header fills; entry with the loader's X0/X1/X30.
.section .text.crt0, "ax"
.global _start
.hidden _start
.type _start, %function
_start:
    b 1f
    .word __nx_mod0 - _start
    .ascii "HOMEBREW"
    .space 0x70
1:  mov x3, x30             // hb_start(x0 = loader config or 0, x1 = -1 or handle, x2 = base, x3 = return)
    adr x2, _start
    b hb_start
.include "mod0.inc"
