/* NVTX ranges in every form a program can open one, for the shim's nvtx capture window
 * (tests/test_shim_window.py; synthetic, no GPU). Built twice: against tests/c/nvtxload.h,
 * and against NVIDIA's header-only NVTX v3 (-DREAL_NVTX) where the CUDA headers are
 * installed, so the real loader finds the shim through NVTX_INJECTION64_PATH.
 * Inside each range named "step" it writes a POINT mark (tracelaunch_mark) numbered by the
 * range: the test finds the window's edges around the mark of the range it asked for.
 * Prints the values the push/pop calls returned, as JSON. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef REAL_NVTX
#include <nvtx3/nvToolsExt.h>
#else
#include "nvtxload.h"
#endif

static int (*mark)(uint32_t, uint32_t, const char *);
static void point(uint32_t id) { if (mark) mark(3, id, "form"); }

int main(void) {
    mark = (int (*)(uint32_t, uint32_t, const char *))dlsym(RTLD_DEFAULT, "tracelaunch_mark");
    int depth[4];
    /* 1: nvtxRangePushA, nested inside another range */
    depth[0] = nvtxRangePushA("other");
    depth[1] = nvtxRangePushA("step"); point(1);
    depth[2] = nvtxRangePop();
    depth[3] = nvtxRangePop();
    /* 2: nvtxRangePushEx with an ASCII message */
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION; a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII; a.message.ascii = "step";
    nvtxRangePushEx(&a); point(2); nvtxRangePop();
    /* 3: nvtxRangeStartA / nvtxRangeEnd */
    nvtxRangeId_t id = nvtxRangeStartA("step"); point(3); nvtxRangeEnd(id);
    /* 4: a wide message */
    nvtxRangePushW(L"step"); point(4); nvtxRangePop();
    /* 5: a registered string in a domain of its own */
    nvtxDomainHandle_t d = nvtxDomainCreateA("lib");
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED; a.message.registered = nvtxDomainRegisterStringA(d, "step");
    nvtxDomainRangePushEx(d, &a); point(5); nvtxDomainRangePop(d);
    /* 6: a domain's range, with a default-domain range opened inside it and closed after */
    a.messageType = NVTX_MESSAGE_TYPE_ASCII; a.message.ascii = "step";
    nvtxDomainRangePushEx(d, &a); nvtxRangePushA("x"); point(6);
    nvtxDomainRangePop(d); point(60); nvtxRangePop();
    /* names that are not "step" */
    nvtxRangePushA("steps"); nvtxRangePop();
    nvtxRangePushA("ste"); nvtxRangePop();
    nvtxRangePushW(L"stop"); nvtxRangePop();
    nvtxRangePushA(""); nvtxRangePop();
    /* 7: nvtxRangeStartEx */
    id = nvtxRangeStartEx(&a); point(7); nvtxRangeEnd(id);
    point(70);
    printf("{\"depth\": [%d, %d, %d, %d]}\n", depth[0], depth[1], depth[2], depth[3]);
    return 0;
}
