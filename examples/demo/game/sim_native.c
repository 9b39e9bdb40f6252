/* sim_native.c — the demo's simulation built natively for x86-64 from the same sim.h: one
 * line "BUTTONS LX LY" per frame on stdin, "frame N state X score S" out, as the game prints. */
#include <stdio.h>
#include "sim.h"

int main(void) {
    sim_init();
    unsigned long long buttons;
    int lx, ly;
    while (scanf("%llu %d %d", &buttons, &lx, &ly) == 3) {
        SimInput in = {0, buttons, lx, ly, 0, 0, 1};
        step(&in);
        printf("frame %u state %x score %u\n", g.frame, checksum(), g.score);
    }
    return 0;
}
