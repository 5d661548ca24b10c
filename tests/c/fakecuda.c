/* A fake libcuda.so.1 (synthetic, no GPU) for the shim's API-bracket tests: the entry
 * points tests/c/apiprog.c calls, with answers the test knows. Each remembers the
 * arguments it got in `fake_seen`, so the test can check the shim forwarded them exactly.
 * cuLaunchKernel calls cuCtxSynchronize through the exported name, as a library calling
 * itself would: the shim must not record that as a second call. */
#include <stdint.h>
#include <string.h>

typedef uint64_t u64;
u64 fake_seen[64][12];

static void seen(int i, u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5) {
    u64 v[6] = { a0, a1, a2, a3, a4, a5 };
    memcpy(fake_seen[i], v, sizeof v);
}

int cuCtxSynchronize(void) { fake_seen[9][0]++; return 0; }

/* Set by tests/c/winprog.c: rings a simulated doorbell inside a call, as the driver's calls
 * do (unset: nothing is submitted). */
void (*fake_submit_hook)(const char *what, u64 arg);
static void submits(const char *what, u64 arg) { if (fake_submit_hook) fake_submit_hook(what, arg); }

int cuLaunchKernel(u64 f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned smem, u64 stream, void **params, void **extra) {
    u64 v[11] = { f, gx, gy, gz, bx, by, bz, smem, stream, (u64)params, (u64)extra };
    memcpy(fake_seen[0], v, sizeof v);
    fake_seen[0][11]++;
    cuCtxSynchronize();
    if (stream != 0xCA97) submits("launch", f);     /* 0xCA97: a stream being captured */
    return f == 0xdead ? 400 : 0;
}
int cuLaunchKernel_ptsz(u64 f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned smem, u64 stream, void **params, void **extra) {
    return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
}
int cuLaunchKernelEx(const void *cfg, u64 f, void **params, void **extra) {
    seen(1, (u64)cfg, f, (u64)params, (u64)extra, 0, 0);
    return 0;
}

/* Handle 0x1000: a CUfunction with (a: 8 B @0, b: 8 B @8, n: 4 B @16).
 * Handle 0x2000: a CUkernel: cuFuncGetParamInfo refuses it, cuKernelGetParamInfo answers
 * (x: 4 B @0, y: 8 B @8). Handle 0x3000: no parameters. Anything else: unknown. */
/* Set by cuModuleGetFunction("vadd_reloaded"), which hands out 0x1000 again for another
 * function (a module unloaded and another loaded at the same address): its layout is then
 * two ints (4 B @0, 4 B @4). */
static int fake_reloaded;
int cuFuncGetParamInfo(u64 f, size_t i, size_t *off, size_t *size) {
    static const size_t o[3] = { 0, 8, 16 }, s[3] = { 8, 8, 4 };
    if (f == 0x3000) return 1;
    if (f != 0x1000) return 400;
    if (fake_reloaded) {
        if (i >= 2) return 1;
        *off = 4 * i; *size = 4;
        return 0;
    }
    if (i >= 3) return 1;
    *off = o[i]; *size = s[i];
    return 0;
}
int cuKernelGetParamInfo(u64 k, size_t i, size_t *off, size_t *size) {
    static const size_t o[2] = { 0, 8 }, s[2] = { 4, 8 };
    if (k != 0x2000) return 400;
    if (i >= 2) return 1;
    *off = o[i]; *size = s[i];
    return 0;
}

int cuModuleLoadData(u64 *mod, const void *image) {
    seen(2, (u64)mod, (u64)image, 0, 0, 0, 0); *mod = 0xAAA0; submits("load", 0); return 0;
}
int cuModuleGetFunction(u64 *f, u64 mod, const char *name) {
    seen(3, (u64)f, mod, (u64)name, 0, 0, 0);
    if (!strcmp(name, "vadd_reloaded")) fake_reloaded = 1;
    *f = strcmp(name, "vadd") && strcmp(name, "vadd_reloaded") ? 0x3000 : 0x1000;
    return 0;
}
int cuLibraryLoadData(u64 *lib, const void *code, void *a, void *b, unsigned c, void *d, void *e, unsigned g) {
    seen(4, (u64)lib, (u64)code, (u64)a, (u64)b, c, (u64)d); fake_seen[4][6] = (u64)e; fake_seen[4][7] = g;
    *lib = 0xBBB0;
    return 0;
}
int cuMemAlloc_v2(u64 *dptr, size_t n) { seen(5, (u64)dptr, n, 0, 0, 0, 0); *dptr = 0x7f0000000000ull + n; return 0; }
int cuMemcpyHtoD_v2(u64 dst, const void *src, size_t n) { seen(6, dst, (u64)src, n, 0, 0, 0); submits("memcpy", dst); return 0; }
int cuMemsetD8_v2(u64 dst, unsigned char v, size_t n) { seen(7, dst, v, n, 0, 0, 0); submits("memset", dst); return 0; }
/* Capture windows (tests/test_shim_window.py): the profiler's edges, and a graph whose
 * instantiate, upload and launches each submit. Weak: tests/c/fakegraph.c, linked with this
 * file for the graph-walk tests, has its own. */
int cuProfilerStart(void) { fake_seen[11][0]++; return 0; }
int cuProfilerStop(void) { fake_seen[11][1]++; return 0; }
__attribute__((weak)) int cuGraphInstantiateWithFlags(u64 *exec, u64 graph, u64 flags) {
    (void)flags; *exec = 0xE000 + graph; submits("instantiate", *exec); return 0;
}
int cuGraphUpload(u64 exec, u64 stream) { (void)stream; submits("upload", exec); return 0; }
__attribute__((weak)) int cuGraphLaunch(u64 exec, u64 stream) { (void)stream; submits("graph", exec); return 0; }
int cuStreamIsCapturing(u64 stream, unsigned *status) { *status = stream == 0xCA97; return 0; }
/* TMA descriptors (session 44): every argument word kept in fake_seen[12] (the 12th, oobFill,
 * is the one word past what the shim forwarded before); the map made of the inputs so the
 * test can tell it from any other: word 0 the address, the rest a pattern of the arrays. */
int cuTensorMapEncodeTiled(uint8_t *map, unsigned dtype, unsigned rank, u64 addr, const u64 *dims,
                           const u64 *strides, const unsigned *box, const unsigned *es,
                           unsigned il, unsigned swz, unsigned l2, unsigned oob) {
    u64 v[12] = { (u64)map, dtype, rank, addr, (u64)dims, (u64)strides, (u64)box, (u64)es, il, swz, l2, oob };
    memcpy(fake_seen[12], v, sizeof v);
    if (rank < 1 || rank > 5) return 1;
    memcpy(map, &addr, 8);
    for (unsigned i = 8; i < 128; i++)
        map[i] = (uint8_t)(dims[i % rank] * 3 + box[i % rank] + (i > 1 && rank > 1 ? strides[i % (rank - 1)] : 0) + i);
    return 0;
}
int cuTensorMapReplaceAddress(uint8_t *map, u64 addr) { fake_seen[13][0] = (u64)map; memcpy(map, &addr, 8); return 0; }
/* A variant the shim has no slot for (a newer driver's export): it must pass unbracketed. */
int cuMemsetD8_v9(u64 dst, unsigned char v, size_t n) { fake_seen[10][0]++; return cuMemsetD8_v2(dst, v, n); }

static const char *const names[] = { "cuLaunchKernel", "cuLaunchKernelEx", "cuModuleLoadData",
    "cuModuleGetFunction", "cuLibraryLoadData", "cuMemAlloc", "cuMemcpyHtoD", "cuMemsetD8",
    "cuCtxSynchronize", "cuFuncGetParamInfo", "cuGetProcAddress", "cuProfilerStart", "cuProfilerStop",
    "cuTensorMapEncodeTiled", "cuTensorMapReplaceAddress", 0 };
int cuGetProcAddress_v2(const char *sym, void **pfn, int ver, u64 flags, void *status);
static void *const fns[] = { (void *)cuLaunchKernel, (void *)cuLaunchKernelEx, (void *)cuModuleLoadData,
    (void *)cuModuleGetFunction, (void *)cuLibraryLoadData, (void *)cuMemAlloc_v2,
    (void *)cuMemcpyHtoD_v2, (void *)cuMemsetD8_v2, (void *)cuCtxSynchronize,
    (void *)cuFuncGetParamInfo, (void *)cuGetProcAddress_v2, (void *)cuProfilerStart, (void *)cuProfilerStop,
    (void *)cuTensorMapEncodeTiled, (void *)cuTensorMapReplaceAddress };

int cuGetProcAddress_v2(const char *sym, void **pfn, int ver, u64 flags, void *status) {
    (void)ver; (void)status;
    for (int i = 0; names[i]; i++)
        if (!strcmp(sym, names[i])) {
            /* per-thread default stream: the _ptsz variant, as libcuda answers */
            *pfn = (i == 0 && (flags & 2)) ? (void *)cuLaunchKernel_ptsz
                 : (i == 7 && (flags & 2)) ? (void *)cuMemsetD8_v9 : fns[i];
            return 0;
        }
    *pfn = 0;
    return 500;
}
int cuGetProcAddress(const char *sym, void **pfn, int ver, u64 flags) {
    return cuGetProcAddress_v2(sym, pfn, ver, flags, 0);
}
