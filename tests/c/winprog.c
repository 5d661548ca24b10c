/* A training-loop-shaped program for the shim's capture windows (tests/test_shim_window.py),
 * synthetic, no GPU: tests/c/simdev.c's simulated submission path (file-backed device,
 * libcuda-shaped doorbell and GP entry writer) driven from inside the calls of the fake
 * libcuda (tests/c/fakecuda.c: each call that would submit work calls back here), NVTX
 * through tests/c/nvtxload.h, cudaProfilerStart/Stop through cuGetProcAddress_v2.
 *
 *   setup: module load, lookup, allocation, graph instantiate (each submits but the lookup
 *          and the allocation), one bare doorbell (no call)
 *   6 steps, each: POINT mark (id = step); [step 2: cuProfilerStart]; nvtx range "step" {
 *          nvtx range "inner" { 2 cuLaunchKernel }; cuMemcpyHtoD; [step 3: cuGraphUpload];
 *          cuGraphLaunch }; a bare doorbell; [step 3: cuProfilerStop]
 *   end:   a lookup, a launch into a stream being captured (fakecuda.c: stream 0xCA97) and
 *          a memset
 *
 * Usage: winprog DEVDIR OUT.json. OUT.json holds simdev's list of submissions (token, GP_PUT,
 * entry, bytes) and, in the same order, what each was: {"what", "step"}. */
#define main simdev_main
#include "simdev.c"
#undef main
#include <dlfcn.h>
#include "nvtxload.h"

typedef uint64_t u64;
static int cur_step = -1, nsub;
static char labels[1 << 16];
static size_t nlab;

static void ring(const char *what) {
    submit(0, 3 + nsub % 5, DB_PATCHABLE);
    nlab += snprintf(labels + nlab, sizeof labels - nlab, "%s{\"what\": \"%s\", \"step\": %d}",
                     nsub++ ? ", " : "", what, cur_step);
}
static void on_submit(const char *what, u64 arg) { (void)arg; ring(what); }

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    snprintf(dev, sizeof dev, "%s", argv[1]);
    truth = fopen(argv[2], "w");
    fprintf(truth, "{\"submissions\": [\n");
    if (sim_setup()) return 1;
    make_channel(0, 4096, 0xa);
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 3; }
    *(void (**)(const char *, u64))dlsym(h, "fake_submit_hook") = on_submit;
    int (*mark)(uint32_t, uint32_t, const char *) =
        (int (*)(uint32_t, uint32_t, const char *))dlsym(RTLD_DEFAULT, "tracelaunch_mark");
    int (*gp)(const char *, void **, int, u64, void *) =
        (int (*)(const char *, void **, int, u64, void *))dlsym(h, "cuGetProcAddress_v2");
    void *p;
    gp("cuProfilerStart", &p, 12000, 0, 0); int (*prof_start)(void) = (int (*)(void))p;
    gp("cuProfilerStop", &p, 12000, 0, 0); int (*prof_stop)(void) = (int (*)(void))p;
    int (*load)(u64 *, const void *) = (int (*)(u64 *, const void *))dlsym(h, "cuModuleLoadData");
    int (*getfn)(u64 *, u64, const char *) = (int (*)(u64 *, u64, const char *))dlsym(h, "cuModuleGetFunction");
    int (*alloc)(u64 *, size_t) = (int (*)(u64 *, size_t))dlsym(h, "cuMemAlloc_v2");
    int (*launch)(u64, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, u64, void **, void **) =
        (int (*)(u64, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, u64, void **, void **))
        dlsym(h, "cuLaunchKernel");
    int (*h2d)(u64, const void *, size_t) = (int (*)(u64, const void *, size_t))dlsym(h, "cuMemcpyHtoD_v2");
    int (*memset8)(u64, unsigned char, size_t) = (int (*)(u64, unsigned char, size_t))dlsym(h, "cuMemsetD8_v2");
    int (*inst)(u64 *, u64, u64) = (int (*)(u64 *, u64, u64))dlsym(h, "cuGraphInstantiateWithFlags");
    int (*upload)(u64, u64) = (int (*)(u64, u64))dlsym(h, "cuGraphUpload");
    int (*glaunch)(u64, u64) = (int (*)(u64, u64))dlsym(h, "cuGraphLaunch");

    static const uint8_t ptx[] = ".version 8.0\n.target sm_90\n";
    u64 mod = 0, f = 0, d = 0, exec = 0;
    load(&mod, ptx);
    getfn(&f, mod, "vadd");
    alloc(&d, 4096);
    inst(&exec, 1, 0);
    ring("bare");
    static uint8_t host[64];
    for (int step = 0; step < 6; step++) {
        cur_step = step;
        if (mark) mark(3, (uint32_t)step, "step");
        if (step == 2) prof_start();
        nvtxRangePushA("step");
        nvtxRangePushA("inner");
        u64 a = (u64)step, b = 2; int n = 64;
        void *params[3] = { &a, &b, &n };
        launch(f, 10 * step + 1, 1, 1, 32, 1, 1, 0, 0, params, 0);
        launch(f, 10 * step + 2, 1, 1, 32, 1, 1, 0, 0, params, 0);
        nvtxRangePop();
        h2d(d, host, sizeof host);
        if (step == 3) upload(exec, 0);
        glaunch(exec, 0);
        nvtxRangePop();
        ring("bare");
        if (step == 3) prof_stop();
    }
    cur_step = 6;
    u64 f2 = 0;
    getfn(&f2, mod, "empty");
    launch(f2, 1, 1, 1, 1, 1, 1, 0, 0xCA97, 0, 0);   /* into a stream being captured: no submission */
    memset8(d, 0xAB, 4096);
    fprintf(truth, "{\"token\": 0}],\n \"labels\": [%s], \"mod\": %llu, \"f\": %llu, \"exec\": %llu}\n",
            labels, (unsigned long long)mod, (unsigned long long)f, (unsigned long long)exec);
    fclose(truth);
    return 0;
}
