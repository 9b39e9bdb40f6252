/* A function that keeps its return address and SP in memory and never returns (as Go's
   runtime.morestack and runtime.mcall keep them in the goroutine's saved context); a later jump
   to the kept address with the kept SP is its return (Go's gogo).  The recompiler must not take
   it for a function that never returns: the code after its call runs.  The loop's state is in
   globals, so no callee-saved register is live across the call (the jump back restores none). */
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
        "  br x1\n");

void capture(void);
void jump_saved(void) __attribute__((noreturn));

void resume(void) {
    rounds++;
    printf("resume %d\n", rounds);
    fflush(stdout);
    jump_saved();
}

int main(int argc, char **argv) {
    n_rounds = argc > 1 ? atoi(argv[1]) : 3;
    for (i_round = 0; i_round < n_rounds; i_round++) {
        capture();
        acc += i_round * 7 + rounds;
        printf("after capture %d acc %ld\n", i_round, acc);
    }
    return (int)(acc & 63);
}
