/* Direct jumps out of a function with its frame still live: the code jumped to returns on the
   jumper's behalf, restoring the jumper's callee-saved registers (GCC's hot/cold splitting,
   shared epilogues, hand-written assembly).  Taken for tail calls, those restores went into the
   other function's C locals only, and the jumper's working X28, stored into NxCpu for the jump,
   came back to its caller there; a callee that read X28 afterwards (`snap`, as setjmp does) saw
   it, not the caller's.  tests/recompiler/test_live_frame_jumps.py runs it against qemu-aarch64.

   - `hot` jumps (`cbnz`) to `hot.cold`, a function of its own (an FDE: GCC's `foo.cold`), which
     restores the frame and returns itself; `hot2` jumps to `hot2.cold`, which jumps back into
     `hot2`'s epilogue (GCC's cold part going back to the hot path).
   - `cross` jumps into `owner`'s shared epilogue, a label that a rodata word names (a weak
     entry inside `owner`'s span, whose own branch there makes it `owner`'s label).
   - `falls` runs on into an address that a word in the code (a literal after big's last branch) names as
     the target of a `bl` (the linear sweep's entry; Debian's busybox-static has one in rodata).
   - `big` has a frame too large for an immediate (`mov x12, #4144; sub sp, sp, x12`) and makes
     a real tail call after restoring it: no live frame.
   Each `keeps_*` keeps 42 in X28 and asks `snap` for X28 before and after its call. */
#include <stdio.h>

long hot(long x), hot2(long x), cross(long x), owner(long x), falls(long x), big(long x);
long keeps_hot(long x), keeps_hot2(long x), keeps_cross(long x), keeps_falls(long x);
long step(long x) { return x * 3 + 1; }
long tail(long x) { return x + 1000; }

#define KEEPS(name, callee)       \
  ".global " name "\n"            \
  ".type " name ", %function\n"   \
  name ":\n"                      \
  "  stp x29, x30, [sp, #-64]!\n" \
  "  mov x29, sp\n"               \
  "  stp x27, x28, [sp, #16]\n"   \
  "  mov x27, x0\n"               \
  "  mov x28, #42\n"              \
  "  add x0, sp, #32\n"           \
  "  bl snap\n"                   \
  "  mov x0, x27\n"               \
  "  bl " callee "\n"             \
  "  str x0, [sp, #48]\n"         \
  "  add x0, sp, #40\n"           \
  "  bl snap\n"                   \
  "  ldp x1, x2, [sp, #32]\n"     \
  "  ldr x0, [sp, #48]\n"         \
  "  add x0, x0, x1, lsl #16\n"   \
  "  add x0, x0, x2, lsl #32\n"   \
  "  ldp x27, x28, [sp, #16]\n"   \
  "  ldp x29, x30, [sp], #64\n"   \
  "  ret\n"                       \
  ".size " name ", .-" name "\n"

__asm__(
    ".text\n"
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

    /* hot / hot.cold: the cold part restores the frame and returns */
    ".global hot\n"
    ".type hot, %function\n"
    "hot:\n"
    "  .cfi_startproc\n"
    "  stp x29, x30, [sp, #-48]!\n"
    "  .cfi_def_cfa_offset 48\n"
    "  .cfi_offset 29, -48\n"
    "  .cfi_offset 30, -40\n"
    "  mov x29, sp\n"
    "  stp x27, x28, [sp, #16]\n"
    "  .cfi_offset 27, -32\n"
    "  .cfi_offset 28, -24\n"
    "  add x28, x0, #100\n" /* a working value in a callee-saved register */
    "  cbnz x0, hot.cold\n"
    "  mov x0, #0\n"
    "  ldp x27, x28, [sp, #16]\n"
    "  ldp x29, x30, [sp], #48\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size hot, .-hot\n"
    ".type hot.cold, %function\n"
    "hot.cold:\n"
    "  .cfi_startproc\n"
    "  .cfi_def_cfa_offset 48\n"
    "  .cfi_offset 29, -48\n"
    "  .cfi_offset 30, -40\n"
    "  .cfi_offset 27, -32\n"
    "  .cfi_offset 28, -24\n"
    "  mov x0, x28\n"
    "  bl step\n"
    "  ldp x27, x28, [sp, #16]\n"
    "  ldp x29, x30, [sp], #48\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size hot.cold, .-hot.cold\n"

    /* hot2 / hot2.cold: the cold part jumps back into the hot part's epilogue */
    ".global hot2\n"
    ".type hot2, %function\n"
    "hot2:\n"
    "  .cfi_startproc\n"
    "  stp x29, x30, [sp, #-48]!\n"
    "  .cfi_def_cfa_offset 48\n"
    "  .cfi_offset 29, -48\n"
    "  .cfi_offset 30, -40\n"
    "  mov x29, sp\n"
    "  stp x27, x28, [sp, #16]\n"
    "  .cfi_offset 27, -32\n"
    "  .cfi_offset 28, -24\n"
    "  add x28, x0, #200\n"
    "  tbnz x0, #0, hot2.cold\n"
    "  mov x0, x28\n"
    ".Lhot2_back:\n"
    "  add x0, x0, #5\n"
    "  ldp x27, x28, [sp, #16]\n"
    "  ldp x29, x30, [sp], #48\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size hot2, .-hot2\n"
    ".type hot2.cold, %function\n"
    "hot2.cold:\n"
    "  .cfi_startproc\n"
    "  .cfi_def_cfa_offset 48\n"
    "  .cfi_offset 29, -48\n"
    "  .cfi_offset 30, -40\n"
    "  .cfi_offset 27, -32\n"
    "  .cfi_offset 28, -24\n"
    "  mov x0, x28\n"
    "  bl step\n"
    "  b .Lhot2_back\n"
    "  .cfi_endproc\n"
    ".size hot2.cold, .-hot2.cold\n"

    /* owner: its shared epilogue is a label a rodata word names; cross jumps into it */
    ".global owner\n"
    ".type owner, %function\n"
    "owner:\n"
    "  stp x29, x30, [sp, #-48]!\n"
    "  mov x29, sp\n"
    "  stp x27, x28, [sp, #16]\n"
    "  add x28, x0, #300\n"
    "  cbnz x0, .Lshared\n"
    "  bl abort\n" /* never returns: nothing falls into the label */
    ".Lshared:\n"
    "  add x0, x28, #1\n"
    "  ldp x27, x28, [sp, #16]\n"
    "  ldp x29, x30, [sp], #48\n"
    "  ret\n"
    ".size owner, .-owner\n"
    ".global cross\n"
    ".type cross, %function\n"
    "cross:\n"
    "  stp x29, x30, [sp, #-48]!\n"
    "  mov x29, sp\n"
    "  stp x27, x28, [sp, #16]\n"
    "  add x28, x0, #400\n"
    "  b .Lshared\n"
    ".size cross, .-cross\n"

    /* falls: runs on into an address the `bl` word after big's `ret` names */
    ".global falls\n"
    ".type falls, %function\n"
    "falls:\n"
    "  stp x29, x30, [sp, #-48]!\n"
    "  mov x29, sp\n"
    "  stp x27, x28, [sp, #16]\n"
    "  add x28, x0, #500\n"
    ".Lfalls_mid:\n"
    "  mov x0, x28\n"
    "  bl step\n"
    "  ldp x27, x28, [sp, #16]\n"
    "  ldp x29, x30, [sp], #48\n"
    "  ret\n"
    ".size falls, .-falls\n"

    /* big: a 4144-byte frame (SP moved through x12), restored before its tail call */
    ".global big\n"
    ".type big, %function\n"
    "big:\n"
    "  mov x12, #4144\n"
    "  sub sp, sp, x12\n"
    "  stp x29, x30, [sp]\n"
    "  mov x29, sp\n"
    "  stp x27, x28, [sp, #16]\n"
    "  add x28, x0, #600\n"
    "  str x28, [sp, #4000]\n"
    "  ldr x0, [sp, #4000]\n"
    "  ldp x27, x28, [sp, #16]\n"
    "  ldp x29, x30, [sp]\n"
    "  mov x12, #4144\n"
    "  add sp, sp, x12\n"
    "  b tail\n"
    "  bl .Lfalls_mid\n" /* a word after the last branch: a literal that decodes as a `bl` */
    ".size big, .-big\n"

    KEEPS("keeps_hot", "hot") KEEPS("keeps_hot2", "hot2") KEEPS("keeps_cross", "cross") KEEPS("keeps_falls", "falls")

    ".section .rodata\n"
    ".balign 8\n"
    ".global looks_like_code\n"
    "looks_like_code: .quad .Lshared\n"
    ".text\n");

extern const unsigned long looks_like_code;

static void show(const char *what, long x, long r) {
  printf("%s(%ld): X28 before the call %ld, after it %ld, result %ld\n", what, x, (r >> 16) & 0xffff, r >> 32,
         r & 0xffff);
}

int main(int argc, char **argv) {
  (void)argv;
  long x = argc + 4;
  long h = keeps_hot(x), h2 = keeps_hot2(x), c = keeps_cross(x), f = keeps_falls(x);
  show("hot", x, h);
  show("hot2", x, h2);
  show("cross", x, c);
  show("falls", x, f);
  printf("owner %ld, big %ld, word names code: %d\n", owner(x), big(x), looks_like_code != 0);
  return (int)(((h ^ h2 ^ c ^ f) >> 32) % 7);
}
