/* A data word that reads as the return address of a call (bash's rodata holds the getopt
   string "...C:DEI", whose last 8 bytes read 0x494544: the instruction after a `bl` in a
   function that sets readline variables).  Analysis takes the word for a function pointer, so
   the caller's body ends at its call; it must not be taken for a function that never returns
   (a call followed by nothing but the next function), or its own callers stop with a fatal
   error after calling it.  tests/recompiler/test_false_entry_after_call.py runs it against
   qemu-aarch64. */
#include <stdio.h>

long step(long x) { return x * 3 + 1; }
long twice(long x);

__asm__(
    ".text\n"
    ".global twice\n"
    ".type twice, %function\n"
    "twice:\n"
    "  stp x29, x30, [sp, #-32]!\n"
    "  mov x29, sp\n"
    "  str x19, [sp, #16]\n"
    "  bl step\n"
    ".Lafter_call:\n" /* the address the data word below names */
    "  mov x19, x0\n"
    "  bl step\n"
    "  add x0, x0, x19\n"
    "  ldr x19, [sp, #16]\n"
    "  ldp x29, x30, [sp], #32\n"
    "  ret\n"
    ".size twice, .-twice\n"
    ".section .rodata\n"
    ".balign 8\n"
    ".global looks_like_code\n"
    "looks_like_code: .quad .Lafter_call\n"
    ".text\n");

extern const unsigned long looks_like_code;

int main(int argc, char **argv) {
  (void)argv;
  long r = twice(argc + 4);
  printf("twice(%d) = %ld\n", argc + 4, r);
  for (int i = 0; i < 3; i++) r = twice(r % 100);
  printf("chain %ld, word names code: %d\n", r, looks_like_code != 0);
  return (int)(r % 7);
}
