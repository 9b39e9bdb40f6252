/* nn.h — the nn:: SDK functions the CPU host serves (cpu_host/horizon/hle/), declared for C
 * guest programs under their public mangled names (the names a game's dynamic symbol table
 * shows).  The calls go through the PLT to the host-import region; the host binds them.
 * Signatures follow the public API documentation of homebrew projects; no Nintendo header. */
#ifndef NN_H
#define NN_H
#include <stdint.h>
#include <stddef.h>

typedef uint32_t NnResult;
#define NN_FS_RESULT(desc) (2u | (uint32_t)(desc) << 9)
#define NN_FS_PATH_NOT_FOUND        NN_FS_RESULT(1)
#define NN_FS_PATH_ALREADY_EXISTS   NN_FS_RESULT(2)
#define NN_FS_TARGET_LOCKED         NN_FS_RESULT(7)
#define NN_FS_MOUNT_NAME_EXISTS     NN_FS_RESULT(60)
#define NN_FS_TARGET_NOT_FOUND      NN_FS_RESULT(1002)
#define NN_FS_OUT_OF_RANGE          NN_FS_RESULT(3005)
#define NN_FS_INVALID_OPEN_MODE     NN_FS_RESULT(6072)
#define NN_FS_EXTENSION_WITHOUT_APPEND NN_FS_RESULT(6201)
#define NN_FS_UNSUPPORTED           NN_FS_RESULT(6300)

/* nn::fs */
typedef struct { void *handle; } NnFileHandle;
typedef struct { int flags; } NnWriteOption;          /* 1: flush */
typedef struct { uint64_t hi, lo; } NnUid;
enum { NN_FS_READ = 1, NN_FS_WRITE = 2, NN_FS_APPEND = 4 };
enum { NN_FS_ENTRY_DIRECTORY = 0, NN_FS_ENTRY_FILE = 1 };

NnResult nnfsQueryMountRomCacheSize(size_t *out) __asm__("_ZN2nn2fs22QueryMountRomCacheSizeEPm");
NnResult nnfsMountRom(const char *name, void *cache, size_t cache_size) __asm__("_ZN2nn2fs8MountRomEPKcPvm");
NnResult nnfsMountSaveDataForDebug(const char *name) __asm__("_ZN2nn2fs21MountSaveDataForDebugEPKc");
NnResult nnfsMountSaveData(const char *name, const NnUid *uid) __asm__("_ZN2nn2fs13MountSaveDataEPKcRKNS_7account3UidE");
NnResult nnfsEnsureSaveData(const NnUid *uid) __asm__("_ZN2nn2fs14EnsureSaveDataERKNS_7account3UidE");
void nnfsUnmount(const char *name) __asm__("_ZN2nn2fs7UnmountEPKc");
NnResult nnfsCommitSaveData(const char *name) __asm__("_ZN2nn2fs14CommitSaveDataEPKc");
NnResult nnfsGetEntryType(int *out, const char *path) __asm__("_ZN2nn2fs12GetEntryTypeEPNS0_18DirectoryEntryTypeEPKc");
NnResult nnfsCreateFile(const char *path, int64_t size) __asm__("_ZN2nn2fs10CreateFileEPKcl");
NnResult nnfsDeleteFile(const char *path) __asm__("_ZN2nn2fs10DeleteFileEPKc");
NnResult nnfsCreateDirectory(const char *path) __asm__("_ZN2nn2fs15CreateDirectoryEPKc");
NnResult nnfsOpenFile(NnFileHandle *out, const char *path, int mode) __asm__("_ZN2nn2fs8OpenFileEPNS0_10FileHandleEPKci");
void nnfsCloseFile(NnFileHandle h) __asm__("_ZN2nn2fs9CloseFileENS0_10FileHandleE");
NnResult nnfsReadFile(NnFileHandle h, int64_t offset, void *buf, size_t size) __asm__("_ZN2nn2fs8ReadFileENS0_10FileHandleElPvm");
NnResult nnfsReadFileSized(size_t *out, NnFileHandle h, int64_t offset, void *buf, size_t size)
    __asm__("_ZN2nn2fs8ReadFileEPmNS0_10FileHandleElPvm");
NnResult nnfsWriteFile(NnFileHandle h, int64_t offset, const void *buf, size_t size, const NnWriteOption *opt)
    __asm__("_ZN2nn2fs9WriteFileENS0_10FileHandleElPKvmRKNS0_11WriteOptionE");
NnResult nnfsFlushFile(NnFileHandle h) __asm__("_ZN2nn2fs9FlushFileENS0_10FileHandleE");
NnResult nnfsGetFileSize(int64_t *out, NnFileHandle h) __asm__("_ZN2nn2fs11GetFileSizeEPlNS0_10FileHandleE");
NnResult nnfsSetFileSize(NnFileHandle h, int64_t size) __asm__("_ZN2nn2fs11SetFileSizeENS0_10FileHandleEl");

/* nn::os, nn::time */
int64_t nnosGetSystemTick(void) __asm__("_ZN2nn2os13GetSystemTickEv");
int64_t nnosGetSystemTickFrequency(void) __asm__("_ZN2nn2os22GetSystemTickFrequencyEv");
int64_t nnosConvertToTimeSpan(int64_t tick) __asm__("_ZN2nn2os17ConvertToTimeSpanENS0_4TickE");
void nnosSleepThread(int64_t ns) __asm__("_ZN2nn2os11SleepThreadENS_8TimeSpanE");
NnResult nntimeInitialize(void) __asm__("_ZN2nn4time10InitializeEv");
NnResult nntimeGetCurrentTime(int64_t *posix) __asm__("_ZN2nn4time23StandardUserSystemClock14GetCurrentTimeEPNS0_9PosixTimeE");

/* nn::os threads and synchronisation objects (served by cpu_host/horizon/hle/os.py and
 * cpu_host/runtime/horizon/horizon_os.c).  The types are opaque storage of the SDK's public sizes; the
 * host keeps its own layout inside.  Priorities are nn::os numbers: 0 (highest) .. 31, the
 * default 16 (kernel priority 44).  Timeouts are nanoseconds (nn::TimeSpan). */
typedef struct { uint64_t storage[0x1C0 / 8]; } NnThreadType;
typedef struct { uint64_t storage[0x20 / 8]; } NnMutexType;
typedef struct { uint64_t storage[0x8 / 8]; } NnConditionVariableType;
typedef struct { uint64_t storage[0x28 / 8]; } NnEventType;
typedef struct { uint64_t storage[0x28 / 8]; } NnSemaphoreType;
typedef struct { uint64_t storage[0x50 / 8]; } NnMessageQueueType;
enum { NN_OS_EVENT_MANUAL_CLEAR = 0, NN_OS_EVENT_AUTO_CLEAR = 1 };
enum { NN_OS_CV_TIMEOUT = 0, NN_OS_CV_NO_TIMEOUT = 1 };
#define NN_OS_DEFAULT_PRIORITY 16
#define NN_OS_STACK_ALIGN 0x1000

NnResult nnosCreateThread(NnThreadType *t, void (*fn)(void *), void *arg, void *stack, size_t size, int prio)
    __asm__("_ZN2nn2os12CreateThreadEPNS0_10ThreadTypeEPFvPvES3_S3_mi");
NnResult nnosCreateThreadOnCore(NnThreadType *t, void (*fn)(void *), void *arg, void *stack, size_t size, int prio,
                                int ideal_core) __asm__("_ZN2nn2os12CreateThreadEPNS0_10ThreadTypeEPFvPvES3_S3_mii");
void nnosStartThread(NnThreadType *t) __asm__("_ZN2nn2os11StartThreadEPNS0_10ThreadTypeE");
void nnosWaitThread(NnThreadType *t) __asm__("_ZN2nn2os10WaitThreadEPNS0_10ThreadTypeE");
void nnosDestroyThread(NnThreadType *t) __asm__("_ZN2nn2os13DestroyThreadEPNS0_10ThreadTypeE");
NnThreadType *nnosGetCurrentThread(void) __asm__("_ZN2nn2os16GetCurrentThreadEv");
int nnosChangeThreadPriority(NnThreadType *t, int prio) __asm__("_ZN2nn2os20ChangeThreadPriorityEPNS0_10ThreadTypeEi");
int nnosGetThreadPriority(const NnThreadType *t) __asm__("_ZN2nn2os17GetThreadPriorityEPKNS0_10ThreadTypeE");
int nnosGetThreadCurrentPriority(const NnThreadType *t) __asm__("_ZN2nn2os24GetThreadCurrentPriorityEPKNS0_10ThreadTypeE");
void nnosYieldThread(void) __asm__("_ZN2nn2os11YieldThreadEv");
void nnosSetThreadName(NnThreadType *t, const char *name) __asm__("_ZN2nn2os13SetThreadNameEPNS0_10ThreadTypeEPKc");
const char *nnosGetThreadNamePointer(const NnThreadType *t) __asm__("_ZN2nn2os20GetThreadNamePointerEPKNS0_10ThreadTypeE");
int nnosGetCurrentCoreNumber(void) __asm__("_ZN2nn2os20GetCurrentCoreNumberEv");
void nnosSetThreadCoreMask(NnThreadType *t, int ideal_core, uint64_t mask)
    __asm__("_ZN2nn2os17SetThreadCoreMaskEPNS0_10ThreadTypeEim");
void nnosGetThreadCoreMask(int *ideal_core, uint64_t *mask, const NnThreadType *t)
    __asm__("_ZN2nn2os17GetThreadCoreMaskEPiPmPKNS0_10ThreadTypeE");

void nnosInitializeMutex(NnMutexType *m, int recursive, int lock_level) __asm__("_ZN2nn2os15InitializeMutexEPNS0_9MutexTypeEbi");
void nnosFinalizeMutex(NnMutexType *m) __asm__("_ZN2nn2os13FinalizeMutexEPNS0_9MutexTypeE");
void nnosLockMutex(NnMutexType *m) __asm__("_ZN2nn2os9LockMutexEPNS0_9MutexTypeE");
int nnosTryLockMutex(NnMutexType *m) __asm__("_ZN2nn2os12TryLockMutexEPNS0_9MutexTypeE");
void nnosUnlockMutex(NnMutexType *m) __asm__("_ZN2nn2os11UnlockMutexEPNS0_9MutexTypeE");
int nnosIsMutexLockedByCurrentThread(const NnMutexType *m) __asm__("_ZN2nn2os28IsMutexLockedByCurrentThreadEPKNS0_9MutexTypeE");

void nnosInitializeConditionVariable(NnConditionVariableType *c)
    __asm__("_ZN2nn2os27InitializeConditionVariableEPNS0_21ConditionVariableTypeE");
void nnosFinalizeConditionVariable(NnConditionVariableType *c)
    __asm__("_ZN2nn2os25FinalizeConditionVariableEPNS0_21ConditionVariableTypeE");
void nnosSignalConditionVariable(NnConditionVariableType *c)
    __asm__("_ZN2nn2os23SignalConditionVariableEPNS0_21ConditionVariableTypeE");
void nnosBroadcastConditionVariable(NnConditionVariableType *c)
    __asm__("_ZN2nn2os26BroadcastConditionVariableEPNS0_21ConditionVariableTypeE");
void nnosWaitConditionVariable(NnConditionVariableType *c, NnMutexType *m)
    __asm__("_ZN2nn2os21WaitConditionVariableEPNS0_21ConditionVariableTypeEPNS0_9MutexTypeE");
int nnosTimedWaitConditionVariable(NnConditionVariableType *c, NnMutexType *m, int64_t ns)
    __asm__("_ZN2nn2os26TimedWaitConditionVariableEPNS0_21ConditionVariableTypeEPNS0_9MutexTypeENS_8TimeSpanE");

void nnosInitializeEvent(NnEventType *e, int signaled, int clear_mode)
    __asm__("_ZN2nn2os15InitializeEventEPNS0_9EventTypeEbNS0_14EventClearModeE");
void nnosFinalizeEvent(NnEventType *e) __asm__("_ZN2nn2os13FinalizeEventEPNS0_9EventTypeE");
void nnosSignalEvent(NnEventType *e) __asm__("_ZN2nn2os11SignalEventEPNS0_9EventTypeE");
void nnosWaitEvent(NnEventType *e) __asm__("_ZN2nn2os9WaitEventEPNS0_9EventTypeE");
int nnosTryWaitEvent(NnEventType *e) __asm__("_ZN2nn2os12TryWaitEventEPNS0_9EventTypeE");
int nnosTimedWaitEvent(NnEventType *e, int64_t ns) __asm__("_ZN2nn2os14TimedWaitEventEPNS0_9EventTypeENS_8TimeSpanE");
void nnosClearEvent(NnEventType *e) __asm__("_ZN2nn2os10ClearEventEPNS0_9EventTypeE");

void nnosInitializeSemaphore(NnSemaphoreType *s, int count, int max) __asm__("_ZN2nn2os19InitializeSemaphoreEPNS0_13SemaphoreTypeEii");
void nnosFinalizeSemaphore(NnSemaphoreType *s) __asm__("_ZN2nn2os17FinalizeSemaphoreEPNS0_13SemaphoreTypeE");
void nnosAcquireSemaphore(NnSemaphoreType *s) __asm__("_ZN2nn2os16AcquireSemaphoreEPNS0_13SemaphoreTypeE");
int nnosTryAcquireSemaphore(NnSemaphoreType *s) __asm__("_ZN2nn2os19TryAcquireSemaphoreEPNS0_13SemaphoreTypeE");
int nnosTimedAcquireSemaphore(NnSemaphoreType *s, int64_t ns)
    __asm__("_ZN2nn2os21TimedAcquireSemaphoreEPNS0_13SemaphoreTypeENS_8TimeSpanE");
void nnosReleaseSemaphore(NnSemaphoreType *s) __asm__("_ZN2nn2os16ReleaseSemaphoreEPNS0_13SemaphoreTypeE");
void nnosReleaseSemaphoreCount(NnSemaphoreType *s, int n) __asm__("_ZN2nn2os16ReleaseSemaphoreEPNS0_13SemaphoreTypeEi");
int nnosGetCurrentSemaphoreCount(const NnSemaphoreType *s) __asm__("_ZN2nn2os24GetCurrentSemaphoreCountEPKNS0_13SemaphoreTypeE");

void nnosInitializeMessageQueue(NnMessageQueueType *q, uintptr_t *buffer, size_t count)
    __asm__("_ZN2nn2os22InitializeMessageQueueEPNS0_16MessageQueueTypeEPmm");
void nnosFinalizeMessageQueue(NnMessageQueueType *q) __asm__("_ZN2nn2os20FinalizeMessageQueueEPNS0_16MessageQueueTypeE");
void nnosSendMessageQueue(NnMessageQueueType *q, uintptr_t v) __asm__("_ZN2nn2os16SendMessageQueueEPNS0_16MessageQueueTypeEm");
int nnosTrySendMessageQueue(NnMessageQueueType *q, uintptr_t v) __asm__("_ZN2nn2os19TrySendMessageQueueEPNS0_16MessageQueueTypeEm");
int nnosTimedSendMessageQueue(NnMessageQueueType *q, uintptr_t v, int64_t ns)
    __asm__("_ZN2nn2os21TimedSendMessageQueueEPNS0_16MessageQueueTypeEmNS_8TimeSpanE");
void nnosJamMessageQueue(NnMessageQueueType *q, uintptr_t v) __asm__("_ZN2nn2os15JamMessageQueueEPNS0_16MessageQueueTypeEm");
int nnosTryJamMessageQueue(NnMessageQueueType *q, uintptr_t v) __asm__("_ZN2nn2os18TryJamMessageQueueEPNS0_16MessageQueueTypeEm");
int nnosTimedJamMessageQueue(NnMessageQueueType *q, uintptr_t v, int64_t ns)
    __asm__("_ZN2nn2os20TimedJamMessageQueueEPNS0_16MessageQueueTypeEmNS_8TimeSpanE");
void nnosReceiveMessageQueue(uintptr_t *out, NnMessageQueueType *q) __asm__("_ZN2nn2os19ReceiveMessageQueueEPmPNS0_16MessageQueueTypeE");
int nnosTryReceiveMessageQueue(uintptr_t *out, NnMessageQueueType *q)
    __asm__("_ZN2nn2os22TryReceiveMessageQueueEPmPNS0_16MessageQueueTypeE");
int nnosTimedReceiveMessageQueue(uintptr_t *out, NnMessageQueueType *q, int64_t ns)
    __asm__("_ZN2nn2os24TimedReceiveMessageQueueEPmPNS0_16MessageQueueTypeENS_8TimeSpanE");
void nnosPeekMessageQueue(uintptr_t *out, const NnMessageQueueType *q) __asm__("_ZN2nn2os16PeekMessageQueueEPmPKNS0_16MessageQueueTypeE");
int nnosTryPeekMessageQueue(uintptr_t *out, const NnMessageQueueType *q)
    __asm__("_ZN2nn2os19TryPeekMessageQueueEPmPKNS0_16MessageQueueTypeE");
int nnosTimedPeekMessageQueue(uintptr_t *out, const NnMessageQueueType *q, int64_t ns)
    __asm__("_ZN2nn2os21TimedPeekMessageQueueEPmPKNS0_16MessageQueueTypeENS_8TimeSpanE");

/* nn::settings, nn::oe, nn::err */
NnResult nnsettingsGetLanguageCode(uint64_t *out) __asm__("_ZN2nn8settings15GetLanguageCodeEPNS0_12LanguageCodeE");
uint64_t nnoeGetDesiredLanguage(void) __asm__("_ZN2nn2oe18GetDesiredLanguageEv");
void nnoeInitialize(void) __asm__("_ZN2nn2oe10InitializeEv");
int nnoeGetOperationMode(void) __asm__("_ZN2nn2oe16GetOperationModeEv");
int nnoeGetPerformanceMode(void) __asm__("_ZN2nn2oe18GetPerformanceModeEv");
void nnerrShowError(NnResult r) __asm__("_ZN2nn3err9ShowErrorENS_6ResultE");
#define NN_OE_MESSAGE_EXIT_REQUEST 4
int nnoeTryPopNotificationMessage(uint32_t *message) __asm__("_ZN2nn2oe26TryPopNotificationMessageEPj");

/* nn::hid */
typedef struct {
    int64_t sampling_number;
    uint64_t buttons;                 /* bit 0 A, 1 B, 2 X, 3 Y, ... 12 Left, 13 Up, 14 Right, 15 Down */
    int32_t lx, ly, rx, ry;
    uint32_t attributes;              /* bit 0: connected */
} NnNpadState;
void nnhidInitializeNpad(void) __asm__("_ZN2nn3hid14InitializeNpadEv");
void nnhidSetSupportedNpadStyleSet(uint32_t styles)
    __asm__("_ZN2nn3hid25SetSupportedNpadStyleSetENS_4util10BitFlagSetILi32ENS0_12NpadStyleTagEEE");
void nnhidSetSupportedNpadIdType(const uint32_t *ids, size_t count) __asm__("_ZN2nn3hid22SetSupportedNpadIdTypeEPKjm");
void nnhidGetNpadFullKeyState(NnNpadState *out, const uint32_t *id) __asm__("_ZN2nn3hid12GetNpadStateEPNS0_16NpadFullKeyStateERKj");

/* co-op through the relay (our own API, served by cpu_host/horizon/hle/coop.py; the relay,
 * token and password are the player's settings).  Results: 0, or the client's error code. */
#define NXCOOP_ALL (-1)
int nxcoopStatus(void);                          /* 0 offline, 1 a relay is set, 2 connected */
uint32_t nxcoopConnect(int32_t *slot);           /* open (host token) or join the room */
uint32_t nxcoopSend(int dst, unsigned channel, const void *data, size_t size, int reliable);
int64_t nxcoopReceive(int32_t *src, uint32_t *channel, void *buf, size_t cap);   /* size, or -1: none */
uint32_t nxcoopRoster(uint32_t *mask);           /* bit s: a player sits in slot s */
void nxcoopLeave(void);


/* nn::audio (served by cpu_host/horizon/audio/nn_audio.py, on the same renderers as audren:u).
 * The structures are ours (no public document gives the SDK's): opaque storage whose first word
 * the host fills, and the two records below, whose layouts nn_audio.py reads. */
typedef struct {
    int32_t sampleRate, sampleCount, mixBufferCount, subMixCount, voiceCount, sinkCount, effectCount,
        performanceFrameCount;
    uint8_t isVoiceDropEnabled;
    int32_t splitterCount, splitterSendChannelCount, renderingDevice, executionMode;
} NnAudioRendererParameter;                      /* 0x34 bytes */
typedef struct { void *handle; } NnAudioRendererHandle;
typedef struct { uint64_t storage[2]; } NnAudioRendererConfig;
typedef struct { uint32_t storage[8]; } NnVoiceType;
typedef struct { uint32_t storage[4]; } NnFinalMixType;
typedef struct { uint32_t storage[4]; } NnDeviceSinkType;
typedef struct { uint32_t storage[4]; } NnMemoryPoolType;
typedef struct {
    const void *buffer;
    size_t size;
    int32_t startSampleOffset, endSampleOffset;   /* in samples */
    uint8_t loop, isEndOfStream;
    const void *pContext;                         /* ADPCM: the loop context (header, two history samples) */
    size_t contextSize;
} NnWaveBuffer;
typedef struct { int16_t coefficients[16]; } NnAdpcmParameter;
enum { NN_AUDIO_PCM16 = 2, NN_AUDIO_ADPCM = 6 };                              /* SampleFormat */
enum { NN_AUDIO_STARTED = 0, NN_AUDIO_STOPPED = 1, NN_AUDIO_PAUSED = 2 };      /* VoiceType::PlayState */

void nnaudioInitializeAudioRendererParameter(NnAudioRendererParameter *p)
    __asm__("_ZN2nn5audio32InitializeAudioRendererParameterEPNS0_22AudioRendererParameterE");
size_t nnaudioGetAudioRendererWorkBufferSize(const NnAudioRendererParameter *p)
    __asm__("_ZN2nn5audio30GetAudioRendererWorkBufferSizeERKNS0_22AudioRendererParameterE");
NnResult nnaudioOpenAudioRenderer(NnAudioRendererHandle *h, const NnAudioRendererParameter *p, void *work, size_t size)
    __asm__("_ZN2nn5audio17OpenAudioRendererEPNS0_19AudioRendererHandleERKNS0_22AudioRendererParameterEPvm");
NnResult nnaudioStartAudioRenderer(NnAudioRendererHandle h) __asm__("_ZN2nn5audio18StartAudioRendererENS0_19AudioRendererHandleE");
void nnaudioStopAudioRenderer(NnAudioRendererHandle h) __asm__("_ZN2nn5audio17StopAudioRendererENS0_19AudioRendererHandleE");
void nnaudioCloseAudioRenderer(NnAudioRendererHandle h) __asm__("_ZN2nn5audio18CloseAudioRendererENS0_19AudioRendererHandleE");
size_t nnaudioGetAudioRendererConfigWorkBufferSize(const NnAudioRendererParameter *p)
    __asm__("_ZN2nn5audio36GetAudioRendererConfigWorkBufferSizeERKNS0_22AudioRendererParameterE");
void nnaudioInitializeAudioRendererConfig(NnAudioRendererConfig *c, const NnAudioRendererParameter *p, void *work,
                                          size_t size)
    __asm__("_ZN2nn5audio29InitializeAudioRendererConfigEPNS0_19AudioRendererConfigERKNS0_22AudioRendererParameterEPvm");
NnResult nnaudioRequestUpdateAudioRenderer(NnAudioRendererHandle h, const NnAudioRendererConfig *c)
    __asm__("_ZN2nn5audio26RequestUpdateAudioRendererENS0_19AudioRendererHandleEPKNS0_19AudioRendererConfigE");
int nnaudioAcquireFinalMix(NnAudioRendererConfig *c, NnFinalMixType *m, int buffers)
    __asm__("_ZN2nn5audio15AcquireFinalMixEPNS0_19AudioRendererConfigEPNS0_12FinalMixTypeEi");
void nnaudioSetFinalMixVolume(NnFinalMixType *m, float v) __asm__("_ZN2nn5audio17SetFinalMixVolumeEPNS0_12FinalMixTypeEf");
NnResult nnaudioAddDeviceSink(NnAudioRendererConfig *c, NnDeviceSinkType *s, NnFinalMixType *m, const int8_t *inputs,
                              int count, const char *name)
    __asm__("_ZN2nn5audio13AddDeviceSinkEPNS0_19AudioRendererConfigEPNS0_14DeviceSinkTypeEPNS0_12FinalMixTypeEPKaiPKc");
int nnaudioAcquireMemoryPool(NnAudioRendererConfig *c, NnMemoryPoolType *p, void *addr, size_t size)
    __asm__("_ZN2nn5audio17AcquireMemoryPoolEPNS0_19AudioRendererConfigEPNS0_14MemoryPoolTypeEPvm");
int nnaudioRequestAttachMemoryPool(NnMemoryPoolType *p) __asm__("_ZN2nn5audio23RequestAttachMemoryPoolEPNS0_14MemoryPoolTypeE");
int nnaudioAcquireVoiceSlot(NnAudioRendererConfig *c, NnVoiceType *v, int rate, int channels, int format, int priority,
                            const void *param, size_t param_size)
    __asm__("_ZN2nn5audio16AcquireVoiceSlotEPNS0_19AudioRendererConfigEPNS0_9VoiceTypeEiiNS0_12SampleFormatEiPKvm");
void nnaudioReleaseVoiceSlot(NnAudioRendererConfig *c, NnVoiceType *v)
    __asm__("_ZN2nn5audio16ReleaseVoiceSlotEPNS0_19AudioRendererConfigEPNS0_9VoiceTypeE");
void nnaudioSetVoiceDestination(NnAudioRendererConfig *c, NnVoiceType *v, NnFinalMixType *m)
    __asm__("_ZN2nn5audio19SetVoiceDestinationEPNS0_19AudioRendererConfigEPNS0_9VoiceTypeEPNS0_12FinalMixTypeE");
void nnaudioSetVoiceMixVolume(NnVoiceType *v, NnFinalMixType *m, float volume, int src, int dst)
    __asm__("_ZN2nn5audio17SetVoiceMixVolumeEPNS0_9VoiceTypeEPNS0_12FinalMixTypeEfii");
void nnaudioSetVoiceVolume(NnVoiceType *v, float volume) __asm__("_ZN2nn5audio14SetVoiceVolumeEPNS0_9VoiceTypeEf");
void nnaudioSetVoicePitch(NnVoiceType *v, float pitch) __asm__("_ZN2nn5audio13SetVoicePitchEPNS0_9VoiceTypeEf");
void nnaudioSetVoicePlayState(NnVoiceType *v, int state)
    __asm__("_ZN2nn5audio17SetVoicePlayStateEPNS0_9VoiceTypeENS1_9PlayStateE");
int nnaudioGetVoicePlayState(const NnVoiceType *v) __asm__("_ZN2nn5audio17GetVoicePlayStateEPKNS0_9VoiceTypeE");
int nnaudioAppendWaveBuffer(NnVoiceType *v, const NnWaveBuffer *wb)
    __asm__("_ZN2nn5audio16AppendWaveBufferEPNS0_9VoiceTypeEPKNS0_10WaveBufferE");
const NnWaveBuffer *nnaudioGetReleasedWaveBuffer(NnVoiceType *v) __asm__("_ZN2nn5audio21GetReleasedWaveBufferEPNS0_9VoiceTypeE");
int64_t nnaudioGetVoicePlayedSampleCount(const NnVoiceType *v)
    __asm__("_ZN2nn5audio25GetVoicePlayedSampleCountEPKNS0_9VoiceTypeE");

#endif
