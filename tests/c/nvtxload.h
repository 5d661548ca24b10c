/* A minimal NVTX loader for the shim's tests (synthetic, no CUDA headers needed): the calls
 * a program makes through NVIDIA's header-only NVTX v3, with the same names and argument
 * layouts, reaching the injection library the way nvtx3's loader does. On the first call it
 * dlopens NVTX_INJECTION64_PATH, calls its InitializeInjectionNvtx2 with an export-table
 * getter, and from then on calls whatever the injection put in the callback slots; a slot
 * left empty (or no injection) is a no-op, as in nvtx3. Written from the ABI as the CUDA
 * 13.0 headers define it (nvtxDetail/nvtxTypes.h, nvtxImpl.h, nvToolsExt.h); no header text.
 * tests/c/nvtxprog.c builds against NVIDIA's real header too, where it is installed. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <wchar.h>

#define NVTX_VERSION 3
#define NVTX_MESSAGE_TYPE_ASCII 1
#define NVTX_MESSAGE_TYPE_UNICODE 2
#define NVTX_MESSAGE_TYPE_REGISTERED 3
typedef uint64_t nvtxRangeId_t;
typedef struct nvtxDomainRegistration_st *nvtxDomainHandle_t;
typedef struct nvtxStringRegistration_st *nvtxStringHandle_t;
typedef struct {
    uint16_t version, size;
    uint32_t category;
    int32_t colorType;
    uint32_t color;
    int32_t payloadType, reserved0;
    uint64_t payload;
    int32_t messageType;
    union { const char *ascii; const wchar_t *unicode; nvtxStringHandle_t registered; } message;
} nvtxEventAttributes_t;
#define NVTX_EVENT_ATTRIB_STRUCT_SIZE ((uint16_t)sizeof(nvtxEventAttributes_t))

/* Callback ids: module CORE (1) and CORE2 (5). */
enum { L_CORE_START_EX = 4, L_CORE_START_A = 5, L_CORE_START_W = 6, L_CORE_END = 7,
       L_CORE_PUSH_EX = 8, L_CORE_PUSH_A = 9, L_CORE_PUSH_W = 10, L_CORE_POP = 11, L_CORE_SIZE = 16 };
enum { L_CORE2_START_EX = 2, L_CORE2_END = 3, L_CORE2_PUSH_EX = 4, L_CORE2_POP = 5,
       L_CORE2_REGISTER_A = 10, L_CORE2_REGISTER_W = 11, L_CORE2_CREATE_A = 12, L_CORE2_SIZE = 16 };

typedef void (*l_fn)(void);
static l_fn l_core[L_CORE_SIZE + 1], l_core2[L_CORE2_SIZE + 1];
static l_fn *l_core_tab[L_CORE_SIZE + 1], *l_core2_tab[L_CORE2_SIZE + 1];
static int l_state;     /* 0 fresh, 1 done */
static int l_injected;  /* InitializeInjectionNvtx2 answered 1 */

static int l_module_table(int module, l_fn ***table, unsigned *size) {
    if (module == 1) { *table = l_core_tab; *size = L_CORE_SIZE; return 1; }
    if (module == 5) { *table = l_core2_tab; *size = L_CORE2_SIZE; return 1; }
    return 0;
}
static const struct { size_t struct_size; int (*get)(int, l_fn ***, unsigned *); } l_callbacks =
    { sizeof l_callbacks, l_module_table };
static const void *l_export_table(uint32_t id) { return id == 1 ? &l_callbacks : NULL; }

static void l_init(void) {
    if (l_state) return;
    l_state = 1;
    for (int i = 1; i <= L_CORE_SIZE; i++) l_core_tab[i] = &l_core[i];
    for (int i = 1; i <= L_CORE2_SIZE; i++) l_core2_tab[i] = &l_core2[i];
    const char *path = getenv("NVTX_INJECTION64_PATH");
    if (!path) return;
    void *h = dlopen(path, RTLD_LAZY);
    int (*init)(const void *(*)(uint32_t)) = h ? (int (*)(const void *(*)(uint32_t)))dlsym(h, "InitializeInjectionNvtx2") : NULL;
    l_injected = init && init(l_export_table);
    if (!l_injected) for (int i = 0; i <= L_CORE_SIZE; i++) l_core[i] = l_core2[i] = NULL;
}

#define L_CALL(tab, id, type, dflt, ...) \
    do { l_init(); __typeof__(type) f_ = (__typeof__(type))tab[id]; return f_ ? f_(__VA_ARGS__) : dflt; } while (0)
static inline int nvtxRangePushA(const char *m) { L_CALL(l_core, L_CORE_PUSH_A, int (*)(const char *), -1, m); }
static inline int nvtxRangePushW(const wchar_t *m) { L_CALL(l_core, L_CORE_PUSH_W, int (*)(const wchar_t *), -1, m); }
static inline int nvtxRangePushEx(const nvtxEventAttributes_t *a) { L_CALL(l_core, L_CORE_PUSH_EX, int (*)(const nvtxEventAttributes_t *), -1, a); }
static inline int nvtxRangePop(void) { L_CALL(l_core, L_CORE_POP, int (*)(void), -1); }
static inline nvtxRangeId_t nvtxRangeStartA(const char *m) { L_CALL(l_core, L_CORE_START_A, nvtxRangeId_t (*)(const char *), 0, m); }
static inline nvtxRangeId_t nvtxRangeStartEx(const nvtxEventAttributes_t *a) { L_CALL(l_core, L_CORE_START_EX, nvtxRangeId_t (*)(const nvtxEventAttributes_t *), 0, a); }
static inline void nvtxRangeEnd(nvtxRangeId_t id) {
    l_init(); void (*f)(nvtxRangeId_t) = (void (*)(nvtxRangeId_t))l_core[L_CORE_END]; if (f) f(id);
}
static inline int nvtxDomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
    L_CALL(l_core2, L_CORE2_PUSH_EX, int (*)(nvtxDomainHandle_t, const nvtxEventAttributes_t *), -1, d, a);
}
static inline int nvtxDomainRangePop(nvtxDomainHandle_t d) { L_CALL(l_core2, L_CORE2_POP, int (*)(nvtxDomainHandle_t), -1, d); }
static inline nvtxStringHandle_t nvtxDomainRegisterStringA(nvtxDomainHandle_t d, const char *s) {
    L_CALL(l_core2, L_CORE2_REGISTER_A, nvtxStringHandle_t (*)(nvtxDomainHandle_t, const char *), NULL, d, s);
}
static inline nvtxDomainHandle_t nvtxDomainCreateA(const char *name) {
    L_CALL(l_core2, L_CORE2_CREATE_A, nvtxDomainHandle_t (*)(const char *), NULL, name);
}
