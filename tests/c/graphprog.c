/* A driver-API client of tests/c/fakecuda.c + fakegraph.c (synthetic, no GPU) for the
 * shim's function names and graph walks (issue 25). Usage: graphprog OUTJSON [noadd]:
 * with "noadd" the conditional node is not made through cuGraphAddNode, so the shim can
 * learn its bodies only from cuGraphNodeGetParams (FAKE_NODE_GET_PARAMS=1) or not at all.
 * Writes what it passed and what it got back. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint64_t u64;
typedef int (*launch_t)(u64, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, u64, void **, void **);

struct kparams { u64 func; unsigned g[3], b[3], smem, pad; void **params, **extra; u64 kern, ctx; };
struct cond_params { u64 handle; unsigned type, size; u64 *phGraph_out; u64 ctx; };
struct node_params { int type, reserved0[3]; union { struct cond_params cond; struct kparams kernel;
                                                     long long reserved1[29]; } u; long long reserved2; };

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int noadd = argc > 2 && !strcmp(argv[2], "noadd");
    FILE *out = fopen(argv[1], "w");
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 3; }
    int (*load)(u64 *, const void *) = (int (*)(u64 *, const void *))dlsym(h, "cuModuleLoadData");
    int (*getfn)(u64 *, u64, const char *) = (int (*)(u64 *, u64, const char *))dlsym(h, "cuModuleGetFunction");
    launch_t launch = (launch_t)dlsym(h, "cuLaunchKernel");
    int (*add_node)(u64 *, u64, const u64 *, const void *, size_t, struct node_params *) =
        (int (*)(u64 *, u64, const u64 *, const void *, size_t, struct node_params *))dlsym(h, "cuGraphAddNode_v2");
    int (*inst)(u64 *, u64, unsigned long long) = (int (*)(u64 *, u64, unsigned long long))dlsym(h, "cuGraphInstantiateWithFlags");
    int (*inst_params)(u64 *, u64, void *) = (int (*)(u64 *, u64, void *))dlsym(h, "cuGraphInstantiateWithParams");
    int (*inst_v1)(u64 *, u64, u64 *, char *, size_t) = (int (*)(u64 *, u64, u64 *, char *, size_t))dlsym(h, "cuGraphInstantiate");
    int (*update)(u64, u64, void *) = (int (*)(u64, u64, void *))dlsym(h, "cuGraphExecUpdate_v2");
    int (*child_set)(u64, u64, u64) = (int (*)(u64, u64, u64))dlsym(h, "cuGraphExecChildGraphNodeSetParams");
    int (*exec_set)(u64, u64, struct node_params *) = (int (*)(u64, u64, struct node_params *))dlsym(h, "cuGraphExecNodeSetParams");
    int (*node_set)(u64, struct node_params *) = (int (*)(u64, struct node_params *))dlsym(h, "cuGraphNodeSetParams");
    int (*graph_launch)(u64, u64) = (int (*)(u64, u64))dlsym(h, "cuGraphLaunch");

    static uint8_t fatbin[64];
    uint32_t magic = 0xBA55ED50u; uint16_t ver = 1, hs = 16; u64 fs = 48;
    memcpy(fatbin, &magic, 4); memcpy(fatbin + 4, &ver, 2); memcpy(fatbin + 6, &hs, 2); memcpy(fatbin + 8, &fs, 8);
    u64 mod = 0, f = 0;
    load(&mod, fatbin);
    getfn(&f, mod, "vadd");                                     /* 0x1000: named by its lookup */

    /* handles no lookup handed out: the shim asks the driver once per handle */
    launch(0x3000, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0);
    launch(0x3000, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0);
    int x = 5; double y = 0.25; void *kparams[2] = { &x, &y };
    launch(0x2000, 1, 1, 1, 32, 1, 1, 0, 0, kparams, 0);        /* a CUkernel */
    u64 a = 1, b = 2; int n = 3; void *params[3] = { &a, &b, &n };
    launch(f, 1, 1, 1, 32, 1, 1, 0, 0, params, 0);

    /* a WHILE conditional node: the driver hands back its body graph */
    struct node_params cp; memset(&cp, 0, sizeof cp);
    cp.type = 13; cp.u.cond = (struct cond_params){ 0x77, 1, 1, 0, 0 };
    u64 cnode = 0;
    int r_add = noadd ? -1 : add_node(&cnode, 0x6100, 0, 0, 0, &cp);

    /* the exec as instantiated, its child graph node given another graph, its first
     * kernel node other parameters: replayed; then updated from another graph: replayed */
    u64 exec = 0, e2 = 0, e3 = 0;
    int r_inst = inst(&exec, 0x6100, 0);
    int r_child = child_set(exec, 0x7003, 0x6500);
    u64 sa = 0x5A5A, sb = 0x5B5B; int sn = 99; void *sparams[3] = { &sa, &sb, &sn };
    struct node_params kp; memset(&kp, 0, sizeof kp);
    kp.type = 0; kp.u.kernel = (struct kparams){ 0x1000, { 5, 1, 1 }, { 32, 1, 1 }, 0, 0, sparams, 0, 0, 0 };
    int r_exec_set = exec_set(exec, 0x7001, &kp);
    int r_node_set = node_set(0x7001, &kp);
    /* a memcpy node and a memset node moved (CUDA_MEMCPY3D: srcMemoryType at 32, srcDevice
     * at 48, dstMemoryType at 120, dstDevice at 136, WidthInBytes at 176, Height, Depth;
     * CUDA_MEMSET_NODE_PARAMS: dst, pitch, value, elementSize, width, height) */
    int (*copy_set)(u64, u64, const void *, u64) = (int (*)(u64, u64, const void *, u64))dlsym(h, "cuGraphExecMemcpyNodeSetParams");
    int (*memset_set)(u64, u64, const void *, u64) = (int (*)(u64, u64, const void *, u64))dlsym(h, "cuGraphExecMemsetNodeSetParams");
    uint8_t m3d[200]; memset(m3d, 0, sizeof m3d);
    unsigned dev = 2; u64 src = 0x7f0000001000ull, dst = 0x7f0000002000ull, width = 4096, one = 1;
    memcpy(m3d + 32, &dev, 4); memcpy(m3d + 48, &src, 8); memcpy(m3d + 120, &dev, 4);
    memcpy(m3d + 136, &dst, 8); memcpy(m3d + 176, &width, 8); memcpy(m3d + 184, &one, 8); memcpy(m3d + 192, &one, 8);
    struct { u64 dst, pitch; unsigned value, esize; u64 width, height; } ms = { 0x7f0000003000ull, 0, 0x5a, 1, 64, 1 };
    int r_memset_set = memset_set ? memset_set(exec, 0x7002, &ms, 0) : -1;     /* N2, the memset */
    if (r_memset_set) return 4;
    int r_launch = graph_launch(exec, 0);
    int r_update = update(exec, 0x6400, 0);
    graph_launch(exec, 0);
    u64 iparams[4] = { 0, 0, 0, 0 };
    int r_deep = inst_params(&e2, 0x6600, iparams);
    int r_wide = inst_v1(&e3, 0x6900, 0, 0, 0);
    if ((copy_set ? copy_set(exec, 0x7010, m3d, 0) : -1) != 0) return 4;   /* after the replays */

    fprintf(out, "{\"results\": [%d, %d, %d, %d, %d, %d, %d, %d, %d],\n", r_add, r_inst, r_update,
            r_child, r_exec_set, r_node_set, r_launch, r_deep, r_wide);
    fprintf(out, " \"mod\": %llu, \"f\": %llu, \"cnode\": %llu, \"exec\": %llu, \"e2\": %llu, \"e3\": %llu,\n",
            (unsigned long long)mod, (unsigned long long)f, (unsigned long long)cnode,
            (unsigned long long)exec, (unsigned long long)e2, (unsigned long long)e3);
    fprintf(out, " \"sparams\": [%llu, %llu, %d]}\n", (unsigned long long)sa, (unsigned long long)sb, sn);
    fclose(out);
    return 0;
}
