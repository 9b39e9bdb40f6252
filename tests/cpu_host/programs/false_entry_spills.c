/* A function split in three inside its loop, whose last part spills callee-saved registers
   into the function's frame.  Libjq's bison parser `yyparse` in Debian's jq: words of its tables
   lie in the executable segment, and some decode as a `bl` to an instruction in its parse loop,
   so analysis takes each such target for a function (every BL's target is an entry), and
   yyparse became 11 lifted functions that tail-call each other.  Here `table_words` holds two
   such words.  `work` runs its prologue and a call, and the call's return point is the first
   label's function, which computes X21 and X22 and falls into the second label's.  That one
   holds the rest of the loop, which runs across its entry: from its entry it reads X21 before
   writing it, spills what it computes from it into [sp, #8] around a call, and stores X22 as it
   came into [sp, #16] (both above its SP: the frame `work` made) to read it back after the
   loop.  Taken for prologue saves, those stores made it own X21 and X22 (a save's read is no
   input), so the first label's tail call into it stored neither, and it read the stale values
   `work` left in NxCpu: jq's yyparse lost X23 (yyn) so, and every run of jq reported a syntax
   error in its own builtins.  tests/recompiler/test_false_entry_spills.py runs it against
   qemu-aarch64. */
#include <stdio.h>

long work(long n);
long keep_busy(long n);

__attribute__((noinline)) long step(long x) { return x * 3 + 1; }

__asm__(
    ".text\n"
    ".global work\n"
    ".type work, %function\n"
    "work:\n"
    "  stp x29, x30, [sp, #-48]!\n"
    "  mov x29, sp\n"
    "  stp x19, x20, [sp, #16]\n"
    "  stp x21, x22, [sp, #32]\n"
    "  sub sp, sp, #32\n"
    "  mov x19, x0\n" /* the count */
    "  mov x20, #0\n" /* the sum */
    "  mov x21, #1\n" /* values the code below replaces before it reads them */
    "  mov x22, #3\n"
    "  cbz x0, .Lnone\n"
    "  bl step\n"
    ".Lfirst:\n" /* an entry (table_words' first bl): entered after the call */
    "  and x21, x0, #7\n"
    "  add x22, x19, #1000\n"
    ".Lloop:\n"
    "  add x20, x20, x21\n"
    ".Lsecond:\n" /* an entry (table_words' second bl): the loop runs across it */
    "  str x22, [sp, #16]\n" /* X22 as it came, into the frame above its SP */
    "  subs x19, x19, #1\n"
    "  b.mi .Ldone\n"
    "  add x21, x21, x19\n" /* reads X21 as it came */
    "  str x21, [sp, #8]\n" /* a spill of its own value around the call */
    "  mov x0, x21\n"
    "  bl step\n"
    "  ldr x21, [sp, #8]\n"
    "  add x20, x20, x0\n"
    "  b .Lloop\n"
    ".Ldone:\n"
    "  ldr x1, [sp, #16]\n"
    "  add x0, x20, x1, lsl #20\n"
    ".Lout:\n"
    "  add sp, sp, #32\n"
    "  ldp x21, x22, [sp, #32]\n"
    "  ldp x19, x20, [sp, #16]\n"
    "  ldp x29, x30, [sp], #48\n"
    "  ret\n"
    ".Lnone:\n"
    "  mov x0, #0\n"
    "  b .Lout\n"
    ".size work, .-work\n"
    /* leaves other values in X21 and X22's NxCpu slots: it keeps its own there across a call */
    ".global keep_busy\n"
    ".type keep_busy, %function\n"
    "keep_busy:\n"
    "  stp x29, x30, [sp, #-32]!\n"
    "  mov x29, sp\n"
    "  stp x21, x22, [sp, #16]\n"
    "  add x21, x0, #77\n"
    "  add x22, x0, #99\n"
    "  bl step\n"
    "  add x0, x0, x21\n"
    "  add x0, x0, x22\n"
    "  ldp x21, x22, [sp, #16]\n"
    "  ldp x29, x30, [sp], #32\n"
    "  ret\n"
    ".size keep_busy, .-keep_busy\n"
    /* data in the executable segment, never run: its words decode as calls of the labels */
    ".global table_words\n"
    ".type table_words, %object\n"
    "table_words:\n"
    "  bl .Lfirst\n"
    "  bl .Lsecond\n"
    ".size table_words, .-table_words\n");

int main(int argc, char **argv) {
  (void)argv;
  long total = 0;
  for (long n = 0; n < 6; n++) {
    long busy = keep_busy(n + argc);
    long r = work(n + argc);
    printf("work(%ld) = %ld (sum %ld, X22 spilled %ld), keep_busy %ld\n", n + argc, r, r & 0xfffff, r >> 20, busy);
    total += r;
  }
  return (int)(total % 7);
}
