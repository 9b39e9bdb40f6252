/* A function that branches to a label of its own which a data word also names (glibc's
   _int_malloc in Debian's gpgv-static: a `cbnz` to the code after a call of malloc_printerr,
   whose address some rodata word happens to hold).  Analysis takes the word for a function
   pointer (a weak entry), so `work`'s body stopped there and the branch became a tail call into
   a function of its own; that function's epilogue restored X28 into its own local only, so
   `work`'s working value of X28, stored into NxCpu for the tail call, came back to the caller,
   and a callee that read X28 afterwards (`snap`, as setjmp does) saw it, not the caller's.  gpgv read its
   keyring wrong that way ("mpi larger than indicated length").
   tests/recompiler/test_branch_into_weak_entry.py runs it against qemu-aarch64. */
#include <stdio.h>
#include <stdlib.h>

long work(long x);
void snap(long *at);
long keeps(long x);
long step(long x) { return x * 3 + 1; }

__asm__(
    ".text\n"
    ".global work\n"
    ".type work, %function\n"
    "work:\n"
    "  stp x29, x30, [sp, #-48]!\n"
    "  mov x29, sp\n"
    "  stp x27, x28, [sp, #16]\n"
    "  add x28, x0, #100\n" /* a working value in a callee-saved register */
    "  cbnz x0, .Lshared\n"
    "  bl abort\n" /* never returns: nothing falls into the label */
    ".Lshared:\n"  /* the address the data word below names */
    "  add x0, x28, #1\n"
    "  ldp x27, x28, [sp, #16]\n"
    "  ldp x29, x30, [sp], #48\n"
    "  ret\n"
    ".size work, .-work\n"
    /* stores the X28 it was called with at X0 (as setjmp does), after a call */
    ".global snap\n"
    ".type snap, %function\n"
    "snap:\n"
    "  stp x29, x30, [sp, #-16]!\n"
    "  mov x29, sp\n"
    "  str x28, [x0]\n"
    "  mov x0, #7\n"
    "  bl step\n"
    "  ldp x29, x30, [sp], #16\n"
    "  ret\n"
    ".size snap, .-snap\n"
    /* keeps 42 in X28 across a call of work, and asks snap for X28 before and after it */
    ".global keeps\n"
    ".type keeps, %function\n"
    "keeps:\n"
    "  stp x29, x30, [sp, #-64]!\n"
    "  mov x29, sp\n"
    "  stp x27, x28, [sp, #16]\n"
    "  mov x27, x0\n"
    "  mov x28, #42\n"
    "  add x0, sp, #32\n"
    "  bl snap\n"
    "  mov x0, x27\n"
    "  bl work\n"
    "  str x0, [sp, #48]\n"
    "  add x0, sp, #40\n"
    "  bl snap\n"
    "  ldp x1, x2, [sp, #32]\n"
    "  ldr x0, [sp, #48]\n"
    "  add x0, x0, x1, lsl #16\n"
    "  add x0, x0, x2, lsl #32\n"
    "  ldp x27, x28, [sp, #16]\n"
    "  ldp x29, x30, [sp], #64\n"
    "  ret\n"
    ".size keeps, .-keeps\n"
    ".section .rodata\n"
    ".balign 8\n"
    ".global looks_like_code\n"
    "looks_like_code: .quad .Lshared\n"
    ".text\n");

extern const unsigned long looks_like_code;

int main(int argc, char **argv) {
  (void)argv;
  long r = keeps(argc + 4);
  printf("keeps(%d): X28 before the call %ld, after it %ld, work %ld\n", argc + 4, (r >> 16) & 0xffff, r >> 32,
         r & 0xffff);
  printf("word names code: %d\n", looks_like_code != 0);
  return (int)((r >> 32) % 7);
}
