/* Synthetic (no GPU): what a fake libcuda.so.1 answers about function names and CUDA
 * graphs, linked with tests/c/fakecuda.c for tests/test_shim_graphs.py (issue 25). The
 * answers are fixed here so the test knows them:
 *
 * Names (cuFuncGetName 12.3, cuFuncGetModule 11.0, cuKernelGetName 12.3, cuKernelGetLibrary):
 *   0x1000 "vadd" (also handed out by cuModuleGetFunction), 0x3000 "_Z5emptyv" in module
 *   0xAAA0, 0x5000 "_Z7fft_r2cPKfP6float2i" in module 0xAAA0 (never looked up: the
 *   export-table case); 0x2000 is a CUkernel: cuFuncGetName refuses it, cuKernelGetName
 *   answers "_Z4kernid" in library 0xBBB0.
 *
 * Graphs (node handles are 0x7000 + n):
 *   0x6100: N1 kernel 0x1000 grid 4 block 32 (a, b, n), N2 memset, N3 child graph 0x6200,
 *           N4 conditional WHILE (its body 0x6300 given at cuGraphAddNode), N5 event record
 *   0x6200: N6 kernel 0x3000 (no parameters)
 *   0x6300: N7 kernel, kern = CUkernel 0x2000 (func NULL), grid 2x3x1, (x, y)
 *   0x6400: N8 kernel 0x5000 grid 16 block 128 smem 256 (extra buffer: 12 bytes)
 *   0x6500: N9 kernel 0x1000 grid 8 block 64 (other a, b, n)
 *   0x6600 + d (d < 12): a child graph node 0x8600 + d holding 0x6601 + d: nested 12 deep
 *   0x6900: 5000 empty nodes 0x900000 + i
 * cuGraphNodeGetParams answers for the conditional only when FAKE_NODE_GET_PARAMS=1
 * (newer drivers export it; CUDA 13.0's 580 driver may not: the shim then uses what
 * cuGraphAddNode returned). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;
enum { KERNEL = 0, MEMSET = 2, GRAPH = 4, EMPTY = 5, EVENT_RECORD = 7, CONDITIONAL = 13 };

int cuFuncGetName(const char **name, u64 f) {
    if (f == 0x1000) { *name = "vadd"; return 0; }
    if (f == 0x3000) { *name = "_Z5emptyv"; return 0; }
    if (f == 0x5000) { *name = "_Z7fft_r2cPKfP6float2i"; return 0; }
    return 400;
}
int cuFuncGetModule(u64 *mod, u64 f) {
    if (f == 0x1000 || f == 0x3000 || f == 0x5000) { *mod = 0xAAA0; return 0; }
    return 400;
}
int cuKernelGetName(const char **name, u64 k) {
    if (k == 0x2000) { *name = "_Z4kernid"; return 0; }
    return 400;
}
int cuKernelGetLibrary(u64 *lib, u64 k) {
    if (k == 0x2000) { *lib = 0xBBB0; return 0; }
    return 400;
}

/* Argument storage the driver owns for each kernel node (as the real one does). */
static u64 n1_a = 0xA1A1A1A1A1A1A1A1ull, n1_b = 0xB1B1B1B1B1B1B1B1ull; static int n1_n = 4096;
static void *n1_params[3] = { &n1_a, &n1_b, &n1_n };
static int n7_x = 77; static double n7_y = -1.5;
static void *n7_params[2] = { &n7_x, &n7_y };
static u64 n9_a = 0xA9A9A9A9A9A9A9A9ull, n9_b = 0xB9B9B9B9B9B9B9B9ull; static int n9_n = 512;
static void *n9_params[3] = { &n9_a, &n9_b, &n9_n };
static unsigned char n8_buf[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
static size_t n8_size = sizeof n8_buf;
static void *n8_extra[5] = { (void *)1, n8_buf, (void *)2, &n8_size, (void *)0 };

static const u64 g6100[] = { 0x7001, 0x7002, 0x7003, 0x7004, 0x7005 };
static u64 cond_bodies[1] = { 0x6300 };
u64 fake_cond_handle;       /* what cuGraphAddNode was asked for */

int cuGraphGetNodes(u64 graph, u64 *nodes, size_t *n) {
    const u64 *list = NULL;
    size_t count = 0;
    static const u64 single[4] = { 0x7006, 0x7007, 0x7008, 0x7009 };    /* N6 .. N9 */
    static u64 one[1];
    if (graph == 0x6100) list = g6100, count = 5;
    else if (graph == 0x6200 || graph == 0x6300 || graph == 0x6400 || graph == 0x6500)
        list = &single[(graph - 0x6200) / 0x100], count = 1;
    else if (graph >= 0x6600 && graph < 0x6600 + 13) {
        one[0] = graph == 0x6600 + 12 ? 0 : 0x8600 + (graph - 0x6600);
        list = one, count = one[0] ? 1 : 0;
    } else if (graph == 0x6900) {
        count = 5000;
        if (nodes) for (size_t i = 0; i < *n && i < count; i++) nodes[i] = 0x900000 + i;
        if (nodes && *n < count) count = *n;
        *n = count;
        return 0;
    } else return 400;
    if (nodes) {
        if (*n < count) count = *n;
        memcpy(nodes, list, count * 8);
    }
    *n = count;
    return 0;
}

int cuGraphNodeGetType(u64 node, int *type) {
    switch (node) {
    case 0x7001: case 0x7006: case 0x7007: case 0x7008: case 0x7009: *type = KERNEL; return 0;
    case 0x7002: *type = MEMSET; return 0;
    case 0x7003: *type = GRAPH; return 0;
    case 0x7004: *type = CONDITIONAL; return 0;
    case 0x7005: *type = EVENT_RECORD; return 0;
    }
    if (node >= 0x8600 && node < 0x8600 + 12) { *type = GRAPH; return 0; }
    if (node >= 0x900000 && node < 0x900000 + 5000) { *type = EMPTY; return 0; }
    return 400;
}

struct kparams { u64 func; unsigned g[3], b[3], smem, pad; void **params, **extra; u64 kern, ctx; };

int cuGraphKernelNodeGetParams_v2(u64 node, struct kparams *p) {
    memset(p, 0, sizeof *p);
    switch (node) {
    case 0x7001: *p = (struct kparams){ 0x1000, { 4, 1, 1 }, { 32, 1, 1 }, 0, 0, n1_params, 0, 0, 0 }; return 0;
    case 0x7006: *p = (struct kparams){ 0x3000, { 1, 1, 1 }, { 1, 1, 1 }, 0, 0, 0, 0, 0, 0 }; return 0;
    case 0x7007: *p = (struct kparams){ 0, { 2, 3, 1 }, { 64, 1, 1 }, 0, 0, n7_params, 0, 0x2000, 0 }; return 0;
    case 0x7008: *p = (struct kparams){ 0x5000, { 16, 1, 1 }, { 128, 1, 1 }, 256, 0, 0, n8_extra, 0, 0 }; return 0;
    case 0x7009: *p = (struct kparams){ 0x1000, { 8, 1, 1 }, { 64, 1, 1 }, 0, 0, n9_params, 0, 0, 0 }; return 0;
    }
    return 400;
}

struct memset_params { u64 dst, pitch; unsigned value, elementSize; u64 width, height; };
int cuGraphMemsetNodeGetParams(u64 node, struct memset_params *p) {
    if (node != 0x7002) return 400;
    *p = (struct memset_params){ 0x7f0000001000ull, 0, 0xABABABAB, 4, 1024, 1 };
    return 0;
}
int cuGraphChildGraphNodeGetGraph(u64 node, u64 *graph) {
    if (node == 0x7003) { *graph = 0x6200; return 0; }
    if (node >= 0x8600 && node < 0x8600 + 12) { *graph = 0x6601 + (node - 0x8600); return 0; }
    return 400;
}
int cuGraphEventRecordNodeGetEvent(u64 node, u64 *event) {
    if (node != 0x7005) return 400;
    *event = 0xE0E0;
    return 0;
}

/* CUgraphNodeParams: type, reserved0[3], union (232 bytes) at 16, reserved2 */
struct cond_params { u64 handle; unsigned type, size; u64 *phGraph_out; u64 ctx; };
struct node_params { int type, reserved0[3]; union { struct cond_params cond; struct kparams kernel;
                                                     long long reserved1[29]; } u; long long reserved2; };

int cuGraphNodeGetParams(u64 node, struct node_params *p) {
    const char *on = getenv("FAKE_NODE_GET_PARAMS");
    if (!on || strcmp(on, "1") || node != 0x7004) return 801;     /* CUDA_ERROR_NOT_SUPPORTED */
    memset(p, 0, sizeof *p);
    p->type = CONDITIONAL;
    p->u.cond = (struct cond_params){ fake_cond_handle, 1, 1, cond_bodies, 0 };
    return 0;
}

/* The generic node API: a conditional node gets its body graph (0x6300) in phGraph_out. */
static int add_node(u64 *node, u64 graph, struct node_params *p) {
    if (graph != 0x6100) return 400;
    if (p->type == CONDITIONAL) {
        fake_cond_handle = p->u.cond.handle;
        p->u.cond.phGraph_out = cond_bodies;
        *node = 0x7004;
        return 0;
    }
    *node = 0x7100;
    return 0;
}
int cuGraphAddNode(u64 *node, u64 graph, const u64 *deps, size_t n, struct node_params *p) {
    (void)deps; (void)n;
    return add_node(node, graph, p);
}
int cuGraphAddNode_v2(u64 *node, u64 graph, const u64 *deps, const void *edges, size_t n,
                      struct node_params *p) {
    (void)deps; (void)edges; (void)n;
    return add_node(node, graph, p);
}
int cuGraphNodeSetParams(u64 node, struct node_params *p) { (void)node; (void)p; return 0; }
int cuGraphExecNodeSetParams(u64 exec, u64 node, struct node_params *p) {
    (void)node; (void)p;
    return exec == 0x8001 ? 0 : 400;
}

/* exec-level copy / memset node sets (shim slot 83, 84): accepted for exec 0x8001 */
int cuGraphExecMemcpyNodeSetParams(u64 exec, u64 node, const void *copy, u64 ctx) {
    (void)node; (void)copy; (void)ctx;
    return exec == 0x8001 ? 0 : 400;
}
int cuGraphExecMemsetNodeSetParams(u64 exec, u64 node, const void *memset_params, u64 ctx) {
    (void)node; (void)memset_params; (void)ctx;
    return exec == 0x8001 ? 0 : 400;
}

int cuGraphInstantiateWithFlags(u64 *exec, u64 graph, unsigned long long flags) {
    (void)flags;
    *exec = graph == 0x6100 ? 0x8001 : 0x8000 + (graph & 0xfff);
    return 0;
}
int cuGraphInstantiateWithParams(u64 *exec, u64 graph, void *params) {
    (void)params;
    return cuGraphInstantiateWithFlags(exec, graph, 0);
}
int cuGraphInstantiate(u64 *exec, u64 graph, u64 *err, char *log, size_t n) {
    (void)err; (void)log; (void)n;
    return cuGraphInstantiateWithFlags(exec, graph, 0);
}
int cuGraphExecUpdate_v2(u64 exec, u64 graph, void *info) { (void)graph; (void)info; return exec == 0x8001 ? 0 : 400; }
int cuGraphExecChildGraphNodeSetParams(u64 exec, u64 node, u64 child) {
    (void)child;
    return exec == 0x8001 && node == 0x7003 ? 0 : 400;
}
int cuGraphLaunch(u64 exec, u64 stream) { (void)stream; return exec ? 0 : 400; }
