/* A word of read-only data that decodes as a BL into the middle of a function: linked with
   --no-rosegment, .rodata shares the executable segment with .text (as Debian's libm, libmpfr,
   libjq), and the word BLWORD (set at build time from the first build's addresses) is a BL to
   the switch's BR in step(). */
#include <stdio.h>
#include <stdint.h>

#ifndef BLWORD
#define BLWORD 0u
#endif

__attribute__((used)) const uint32_t words_in_rodata[4] = {0x12345678u, BLWORD, 0x9abcdef0u, 0x0badf00du};

__attribute__((noinline)) long step(unsigned op, long a, long b) {
    switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return b ? a / b : -1;
    case 4: return a ^ (b << 3);
    case 5: return (a << 7) | (b & 0x7f);
    case 6: return a > b ? a : b;
    case 7: return a < b ? a : b;
    case 8: return ~a + 3 * b;
    case 9: return (a * 31 + b) % 1000003;
    default: return 42;
    }
}

int main(int argc, char **argv) {
    long acc = argc, sum = 0;
    for (unsigned k = 0; k < 40; k++) {
        acc = step((k * 7 + (unsigned)(acc & 3)) % 11, acc, (long)k + 5);
        sum += acc & 0xffff;
        if (k % 10 == 9)
            printf("k=%u acc=%ld sum=%ld\n", k, acc, sum);
    }
    printf("word %08x\n", (unsigned)words_in_rodata[(argc + 2) & 3]);
    return 0;
}
