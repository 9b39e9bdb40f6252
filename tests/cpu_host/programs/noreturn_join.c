/* A jump table whose base is spilled to a frame slot, and a call of a function that never
   returns followed by code that reuses that slot for a counter and joins the dispatch loop
   (gpgv's format parser: the block after its `__stack_chk_fail` call).  No path runs that code
   after the call, but a value analysis that lets the path go on merges the counter into the
   table base and loses the table (a run-time lift).  tests/recompiler/test_noreturn_join.py
   runs it against qemu-aarch64. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noreturn, noinline)) void die(void) { _Exit(7); }
long run_ops(const unsigned char *ops);

__asm__(
    ".text\n"
    ".global run_ops\n"
    ".type run_ops, %function\n"
    "run_ops:\n"
    "  sub sp, sp, #32\n"
    "  stp x29, x30, [sp, #16]\n"
    "  add x29, sp, #16\n"
    "  adrp x2, op_table\n"
    "  add x2, x2, :lo12:op_table\n"
    "  str x2, [sp, #8]\n" /* the table base, spilled */
    "  mov x3, #0\n"
    "1:\n"
    "  ldrb w4, [x0], #1\n"
    "  cbz w4, 9f\n"
    "  sub w4, w4, #'a'\n"
    "  cmp w4, #3\n"
    "  b.hi 8f\n"
    "  ldr x2, [sp, #8]\n"
    "  ldrh w5, [x2, w4, uxtw #1]\n"
    "  adr x6, 2f\n"
    "  add x5, x6, w5, sxth #2\n"
    "  br x5\n"
    "2:\n"
    "  add x3, x3, #1\n"
    "  b 1b\n"
    "3:\n"
    "  lsl x3, x3, #1\n"
    "  b 1b\n"
    "4:\n"
    "  add x3, x3, #10\n"
    "  b 1b\n"
    "5:\n"
    "  sub x3, x3, #3\n"
    "  b 1b\n"
    "8:\n"
    "  bl die\n" /* never returns; what follows is reached by no path */
    "  str w3, [sp, #8]\n"
    "  b 1b\n"
    "9:\n"
    "  mov x0, x3\n"
    "  ldp x29, x30, [sp, #16]\n"
    "  add sp, sp, #32\n"
    "  ret\n"
    ".size run_ops, .-run_ops\n"
    ".section .rodata\n"
    ".balign 2\n"
    "op_table: .hword (2b-2b)/4, (3b-2b)/4, (4b-2b)/4, (5b-2b)/4\n"
    ".text\n");

int main(int argc, char **argv) {
  const char *prog = argc > 1 ? argv[1] : "abacdab";
  printf("%s -> %ld\n", prog, run_ops((const unsigned char *)prog));
  return 0;
}
