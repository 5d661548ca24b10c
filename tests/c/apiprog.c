/* A driver-API client of tests/c/fakecuda.c (synthetic, no GPU), reaching the entry
 * points the three ways real programs do: cuGetProcAddress_v2 from a dlopen'd libcuda
 * (the runtime library, cuda-python), dlsym on that handle, and dlsym(RTLD_DEFAULT).
 * Usage: apiprog OUTJSON. Writes what it passed and what it got back. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint64_t u64;
typedef int (*getproc_t)(const char *, void **, int, u64, void *);
typedef int (*launch_t)(u64, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, u64, void **, void **);
typedef int (*launchex_t)(const void *, u64, void **, void **);
int next_resolves_past_me(void);

static const char *where(void *p) {
    Dl_info i;
    if (!p || !dladdr(p, &i) || !i.dli_fname) return "none";
    const char *s = strrchr(i.dli_fname, '/');
    return s ? s + 1 : i.dli_fname;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    FILE *out = fopen(argv[1], "w");
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 3; }
    getproc_t gp = (getproc_t)dlsym(h, "cuGetProcAddress_v2");
    void *p;
    int (*load)(u64 *, const void *); gp("cuModuleLoadData", &p, 12000, 0, 0); load = p;
    int (*getfn)(u64 *, u64, const char *); gp("cuModuleGetFunction", &p, 12000, 0, 0); getfn = p;
    int (*alloc)(u64 *, size_t); gp("cuMemAlloc", &p, 12000, 0, 0); alloc = p;
    int (*h2d)(u64, const void *, size_t); gp("cuMemcpyHtoD", &p, 12000, 0, 0); h2d = p;
    int (*memset8)(u64, unsigned char, size_t); gp("cuMemsetD8", &p, 12000, 0, 0); memset8 = p;
    int (*libload)(u64 *, const void *, void *, void *, unsigned, void *, void *, unsigned);
    gp("cuLibraryLoadData", &p, 12000, 0, 0); libload = p;
    launch_t launch; gp("cuLaunchKernel", &p, 12000, 0, 0); launch = p;
    launch_t launch_ptsz; gp("cuLaunchKernel", &p, 12000, 2, 0); launch_ptsz = p;
    launchex_t launchex; gp("cuLaunchKernelEx", &p, 12000, 0, 0); launchex = p;
    launch_t direct = (launch_t)dlsym(h, "cuLaunchKernel");
    void *deflt = dlsym(RTLD_DEFAULT, "cuLaunchKernel");
    u64 *seen = (u64 *)dlsym(h, "fake_seen");

    /* A fatbin: header {magic, version 1, header_size 16, fat_size 48} + 48 bytes. */
    static uint8_t fatbin[64 + 16];
    uint32_t magic = 0xBA55ED50u; uint16_t ver = 1, hs = 16; u64 fs = 48;
    memcpy(fatbin, &magic, 4); memcpy(fatbin + 4, &ver, 2); memcpy(fatbin + 6, &hs, 2); memcpy(fatbin + 8, &fs, 8);
    for (int i = 16; i < 64; i++) fatbin[i] = (uint8_t)i;
    for (int i = 64; i < 80; i++) fatbin[i] = 0xEE;      /* past the image: must not be copied */
    u64 mod = 0, f = 0, f0 = 0, d = 0, lib = 0;
    int r_load = load(&mod, fatbin);
    int r_getfn = getfn(&f, mod, "vadd");
    getfn(&f0, mod, "empty");
    int r_alloc = alloc(&d, 4096);

    u64 a = 0x1111222233334444ull, b = 0x5555666677778888ull; int n = 1048576;
    void *params[3] = { &a, &b, &n };
    int r1 = launch(f, 4096, 1, 1, 256, 1, 1, 0, 0x55, params, 0);
    int x = 7; double y = 2.5; void *kparams[2] = { &x, &y };
    int r2 = launch_ptsz(0x2000, 2, 3, 4, 8, 4, 2, 128, 0x66, kparams, 0);
    int r3 = direct(f0, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0);
    /* CUlaunchConfig {grid 8x1x1, block 32x1x1, smem 1024, stream 0x77, attrs, 1} with
     * one attribute: CLUSTER_DIMENSION (4) = 2x1x1. */
    uint8_t attr[72] = { 0 }; uint32_t four = 4, cl[3] = { 2, 1, 1 };
    memcpy(attr, &four, 4); memcpy(attr + 8, cl, 12);
    struct { uint32_t g[3], bl[3], smem, pad; u64 stream, attrs; uint32_t nattrs, pad2; } cfg =
        { { 8, 1, 1 }, { 32, 1, 1 }, 1024, 0, 0x77, (u64)(uintptr_t)attr, 1, 0 };
    int r4 = launchex(&cfg, f, params, 0);
    uint8_t buf[24]; for (int i = 0; i < 24; i++) buf[i] = (uint8_t)(0x40 + i);
    size_t bsz = sizeof buf;
    void *extra[5] = { (void *)1, buf, (void *)2, &bsz, (void *)0 };
    int r5 = launch(0x9999, 1, 1, 1, 1, 1, 1, 0, 0, 0, extra);
    /* unknown layout with kernelParams: the shim keeps pointers and a window behind each */
    long long w0 = -5; unsigned short w1 = 0xBEEF; void *wparams[2] = { &w0, &w1 };
    launch(0x8888, 1, 1, 1, 1, 1, 1, 0, 0, wparams, 0);
    /* The same handle handed out for another function (shim invariant I17). */
    u64 f2 = 0; int i0 = 11, i1 = -22; void *params2[2] = { &i0, &i1 };
    getfn(&f2, mod, "vadd_reloaded");
    launch(f2, 1, 1, 1, 32, 1, 1, 0, 0, params2, 0);
    int r6 = launch(0xdead, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0);
    /* An ELF image: header (e_shoff 128, e_shentsize 64, e_shnum 2) -> 256 bytes. */
    static uint8_t elf[256 + 32];
    memcpy(elf, "\177ELF\2\1\1", 7);
    u64 shoff = 128; uint16_t shes = 64, shn = 2;
    memcpy(elf + 40, &shoff, 8); memcpy(elf + 58, &shes, 2); memcpy(elf + 60, &shn, 2);
    for (int i = 64; i < 256; i++) elf[i] = (uint8_t)(i * 7);
    memset(elf + 256, 0xEE, 32);
    int r7 = libload(&lib, elf, 0, 0, 0, 0, 0, 0);
    const char *ptx = ".version 8.0\n.target sm_90\n";
    u64 mod2 = 0;
    int r8 = load(&mod2, ptx);
    static uint8_t host[512];
    int r9 = h2d(d, host, sizeof host);
    int r10 = memset8(d, 0xAB, 4096);
    int (*memset8v)(u64, unsigned char, size_t); gp("cuMemsetD8", &p, 12000, 2, 0); memset8v = p;
    memset8v(d, 0xCD, 16);     /* an unknown variant: forwarded, not bracketed, noted */
    /* A TMA descriptor made (12 argument words) and its address changed. */
    int (*encode)(uint8_t *, unsigned, unsigned, u64, const u64 *, const u64 *, const unsigned *,
                  const unsigned *, unsigned, unsigned, unsigned, unsigned);
    gp("cuTensorMapEncodeTiled", &p, 12000, 0, 0); encode = p;
    int (*replace)(uint8_t *, u64); gp("cuTensorMapReplaceAddress", &p, 12000, 0, 0); replace = p;
    static uint8_t tmap[128] __attribute__((aligned(64))), tmap0[128];
    u64 tdims[3] = { 4096, 1024, 7 }, tstrides[2] = { 8192, 8192 * 1024 };
    unsigned tbox[3] = { 64, 32, 1 }, tes[3] = { 1, 1, 1 };
    int r11 = encode(tmap, 10, 3, d, tdims, tstrides, tbox, tes, 0, 3, 2, 1);
    memcpy(tmap0, tmap, 128);
    int r12 = replace(tmap, d + 0x1000);

    fprintf(out, "{\"results\": [%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d],\n",
            r_load, r_getfn, r_alloc, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10);
    fprintf(out, " \"mod\": %llu, \"f\": %llu, \"f0\": %llu, \"d\": %llu, \"lib\": %llu, \"mod2\": %llu,\n",
            (unsigned long long)mod, (unsigned long long)f, (unsigned long long)f0,
            (unsigned long long)d, (unsigned long long)lib, (unsigned long long)mod2);
    fprintf(out, " \"params_ptr\": %llu, \"kparams_ptr\": %llu, \"extra_ptr\": %llu, \"cfg_ptr\": %llu,\n",
            (unsigned long long)(uintptr_t)params, (unsigned long long)(uintptr_t)kparams,
            (unsigned long long)(uintptr_t)extra, (unsigned long long)(uintptr_t)&cfg);
    fprintf(out, " \"fatbin_ptr\": %llu, \"elf_ptr\": %llu, \"host_ptr\": %llu, \"ptx\": \"%s\",\n",
            (unsigned long long)(uintptr_t)fatbin, (unsigned long long)(uintptr_t)elf,
            (unsigned long long)(uintptr_t)host, ".version 8.0\\n.target sm_90\\n");
    fprintf(out, " \"launch_seen\": [");
    for (int i = 0; i < 11; i++) fprintf(out, "%s%llu", i ? ", " : "", (unsigned long long)seen[i]);
    fprintf(out, "], \"launch_calls\": %llu, \"sync_calls\": %llu,\n",
            (unsigned long long)seen[11], (unsigned long long)seen[9 * 12]);
    fprintf(out, " \"memset_seen\": [%llu, %llu, %llu],\n", (unsigned long long)seen[7 * 12],
            (unsigned long long)seen[7 * 12 + 1], (unsigned long long)seen[7 * 12 + 2]);
    fprintf(out, " \"launch_from\": \"%s\", \"direct_from\": \"%s\", \"default_from\": \"%s\",\n",
            where((void *)launch), where((void *)direct), where(deflt));
    fprintf(out, " \"variant_calls\": %llu, \"variant_from\": \"%s\",\n",
            (unsigned long long)seen[10 * 12], where((void *)memset8v));
    fprintf(out, " \"tmap_results\": [%d, %d], \"tmap_ptr\": %llu, \"tmap_made\": \"", r11, r12,
            (unsigned long long)(uintptr_t)tmap);
    for (int i = 0; i < 128; i++) fprintf(out, "%02x", tmap0[i]);
    fprintf(out, "\", \"tmap_replaced\": \"");
    for (int i = 0; i < 128; i++) fprintf(out, "%02x", tmap[i]);
    fprintf(out, "\", \"tmap_seen\": [");
    for (int i = 0; i < 12; i++) fprintf(out, "%s%llu", i ? ", " : "", (unsigned long long)seen[12 * 12 + i]);
    fprintf(out, "],\n");
    fprintf(out, " \"next_ok\": %d}\n", next_resolves_past_me());
    fclose(out);
    return 0;
}
