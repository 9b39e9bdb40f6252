/* startup: the modules' initialisers run before the program, in rtld's order — modules in
 * reverse load order (sdk before main), so main's constructor sees the sdk already set up. */
#include "hz_sdk.h"

static int main_init_order;
static int sdk_ready_when_main_init;
__attribute__((constructor)) static void main_constructor(void) {
    main_init_order = ++hz_init_sequence;
    sdk_ready_when_main_init = hz_sdk_init_order != 0;
}

int hz_main(void) {
    hz_printf("rule: initialisers run before the entry, modules in reverse load order (sdk, then main)\n");
    hz_printf("sdk init %d, main init %d, sdk ready at main's init %d\n", hz_sdk_init_order, main_init_order,
              sdk_ready_when_main_init);
    return 0;
}
