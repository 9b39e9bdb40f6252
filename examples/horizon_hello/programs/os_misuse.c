/* os_misuse: one broken nn::os precondition per run, which the SDK would abort on; the host
 * must end the guest with a crash report naming the function and the object, never crash
 * itself.  The case is the left stick's X of npad 0 at input frame 0 (the run's --input
 * script), so one build serves every case. */
#include "hz_sdk.h"
#include "nn.h"

static NnMutexType mtx, never_initialised;
static NnEventType ev;
static NnSemaphoreType sem;
static NnThreadType thread;
static NnMessageQueueType mq;
static uintptr_t mq_buf[2];
static const uint64_t read_only = 1;
static char stack[0x2000] __attribute__((aligned(NN_OS_STACK_ALIGN)));

static void nothing(void *p) { (void)p; }

void receive_into_heap(void *out);   /* global: the crash report names it */
void receive_into_heap(void *out) {
    nnosReceiveMessageQueue(out, &mq);
    hz_printf("received\n");      /* (and a real call above, not a tail call) */
}

int hz_main(void) {
    nnhidInitializeNpad();
    uint32_t id = 0;
    NnNpadState st;
    nnhidGetNpadFullKeyState(&st, &id);
    int c = st.lx;
    hz_printf("case %d\n", c);
    switch (c) {
    case 1: nnosLockMutex((NnMutexType *)0x10); break;                  /* unmapped */
    case 2: nnosLockMutex(&never_initialised); break;
    case 3: nnosInitializeMutex(&mtx, 0, 0); nnosUnlockMutex(&mtx); break;  /* not held */
    case 4: nnosInitializeMutex(&mtx, 0, 0); nnosLockMutex(&mtx); nnosLockMutex(&mtx); break;
    case 5: nnosInitializeMutex(&mtx, 0, 0); nnosSignalEvent((NnEventType *)&mtx); break;  /* wrong type */
    case 6: nnosInitializeSemaphore(&sem, 1, 2); nnosReleaseSemaphoreCount(&sem, 2); break;
    case 7: nnosStartThread(&thread); break;                              /* never created */
    case 8: nnosCreateThread(&thread, nothing, 0, stack + 16, 0x1000, 16); break;   /* misaligned stack */
    case 9:
        nnosInitializeMessageQueue(&mq, mq_buf, 2);
        nnosSendMessageQueue(&mq, 1);
        nnosReceiveMessageQueue((uintptr_t *)&read_only, &mq);
        break;
    case 10: nnosInitializeEvent(&ev, 0, 7); break;                       /* no such clear mode */
    case 11: {  /* a receiver (prio 10, preempts main) waits with its out pointer in the heap,
                 * which main then gives back: the receiver is handed the message and finds its
                 * out pointer gone */
        void *heap = 0;
        svcSetHeapSize(&heap, 0x200000);
        nnosInitializeMessageQueue(&mq, mq_buf, 2);
        nnosCreateThread(&thread, receive_into_heap, heap, stack, sizeof stack, 10);
        nnosStartThread(&thread);
        svcSetHeapSize(&heap, 0);
        nnosSendMessageQueue(&mq, 1);
        break;
    }
    default: hz_printf("no such case\n"); return 0;
    }
    hz_printf("not reached\n");
    return 0;
}
