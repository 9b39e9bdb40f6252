// Start of the `main` module: Horizon enters the process here with X0 = 0 and X1 = the main
// thread's handle, SP at the top of the main thread's stack (sized by main.npdm).
.section .text.crt0, "ax"
.global _start
.type _start, %function
_start:
    b 1f
    .word __nx_mod0 - _start
1:  mov x0, x1              // hz_sdk_start(main thread handle); it never returns
    b hz_sdk_start          // lives in the `sdk` module: bound by the host linker
.include "mod0.inc"
