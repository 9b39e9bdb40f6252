/* A function that keeps its return address and SP in memory and never returns (as Go's
   runtime.morestack and runtime.mcall keep them in the goroutine's saved context); a later jump
   to the kept address with the kept SP is its return (Go's gogo).  The recompiler must not take
   it for a function that never returns: the code after its call runs.  The loop's state is in
   globals, so no callee-saved register is live across the call (the jump back restores none).
   The jump back sets X30 (as gogo sets the goroutine's saved LR): ``lr`` mode prints the X30
   its caller sees after the call, which is not the call's return address. */
#include <stdio.h>
#include <stdlib.h>

unsigned long saved_lr, saved_sp;
volatile int rounds, n_rounds, i_round;
volatile long acc;

__asm__(".text\n"
        ".global capture\n"
        ".type capture,%function\n"
        "capture:\n"
        "  adrp x1, saved_lr\n"
        "  str x30, [x1, :lo12:saved_lr]\n"
        "  mov x2, sp\n"
        "  adrp x1, saved_sp\n"
        "  str x2, [x1, :lo12:saved_sp]\n"
        "  bl resume\n"
        "  brk #0\n"
        ".global jump_saved\n"
        ".type jump_saved,%function\n"
        "jump_saved:\n"
        "  adrp x1, saved_sp\n"
        "  ldr x2, [x1, :lo12:saved_sp]\n"
        "  mov sp, x2\n"
        "  adrp x1, saved_lr\n"
        "  ldr x1, [x1, :lo12:saved_lr]\n"
        "  mov x30, #0x1234\n"
        "  br x1\n"
        ".global call_capture_lr\n"
        ".type call_capture_lr,%function\n"
        "call_capture_lr:\n"
        "  stp x29, x30, [sp, #-16]!\n"
        "  bl capture\n"
        "  mov x0, x30\n"
        "  ldp x29, x30, [sp], #16\n"
        "  ret\n");

void capture(void);
unsigned long call_capture_lr(void);
void jump_saved(void) __attribute__((noreturn));

void resume(void) {
    rounds++;
    printf("resume %d\n", rounds);
    fflush(stdout);
    jump_saved();
}

int main(int argc, char **argv) {
    if (argc > 2) {
        printf("lr %#lx\n", call_capture_lr());
        return 0;
    }
    n_rounds = argc > 1 ? atoi(argv[1]) : 3;
    for (i_round = 0; i_round < n_rounds; i_round++) {
        capture();
        acc += i_round * 7 + rounds;
        printf("after capture %d acc %ld\n", i_round, acc);
    }
    return (int)(acc & 63);
}
