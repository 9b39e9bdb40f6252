// Start of a library module (`sdk`, `subsdk*`): only the MOD0 pointer matters; nothing
// enters a library module at its start.
.section .text.crt0, "ax"
.global __hz_module_start
.hidden __hz_module_start
__hz_module_start:
    b 1f
    .word __nx_mod0 - __hz_module_start
1:  brk #0
.include "mod0.inc"
