/* A program that behaves like a tiny CUDA driver client against fake device files
 * (TRACE_LAUNCH_DEVDIR): the shim records it as it would libcuda on a real GPU.
 * Usage: fakedev DEVDIR OUTJSON. It writes what it did (fds, requests, addresses) to
 * OUTJSON so the test can check every record field against the truth. No GPU involved. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static char dev[512];
static const char *path_of(const char *name) { static char b[4][600]; static int i; i = (i + 1) % 4; snprintf(b[i], 600, "%s/%s", dev, name); return b[i]; }

static void *thread_main(void *arg) {
    int fd = (int)(intptr_t)arg;
    uint32_t a[8] = { 0xA, 0xB, 0xC, 0xD, 0, 0, 0, 0 };
    for (int i = 0; i < 25; i++) ioctl(fd, 0xC0104629u /* RM_FREE, NVOS00, 16 B */, a);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    snprintf(dev, sizeof dev, "%s", argv[1]);
    FILE *out = fopen(argv[2], "w");
    int ctl = open(path_of("nvidiactl"), O_RDWR);
    int gpu = open(path_of("nvidia0"), O_RDWR);
    int uvm = open(path_of("nvidia-uvm"), O_RDWR);
    fprintf(out, "{\"ctl\": %d, \"gpu\": %d, \"uvm\": %d,\n", ctl, gpu, uvm);

    /* RM_CONTROL with a params pointer: NVOS54 {hClient, hObject, cmd, flags, params, size, status} */
    uint32_t params[4] = { 0x11111111, 0x22222222, 0x33333333, 0x44444444 };
    struct { uint32_t hClient, hObject, cmd, flags; uint64_t params; uint32_t size, status; } c54 =
        { 0xc1d00001, 0x5c000001, 0x20800110, 0, (uint64_t)(uintptr_t)params, sizeof params, 0 };
    ioctl(ctl, 0xC020462Au, &c54);
    fprintf(out, "\"control_params_addr\": %llu,\n", (unsigned long long)(uintptr_t)params);

    /* RM_CONTROL whose params pointer points nowhere: must be recorded, never crash. */
    c54.params = 0xdead0000ull; c54.size = 64;
    ioctl(ctl, 0xC020462Au, &c54);
    /* An argument pointer that points nowhere. */
    int r = ioctl(ctl, 0xC020462Au, (void *)0x10);
    fprintf(out, "\"bad_arg_ret\": %d, \"bad_arg_errno\": %d,\n", r, errno);

    /* Pointers inside RM_CONTROL params (issue 18): the shim copies what they point to.
     * NV2080_CTRL_GR_GET_INFO_PARAMS {grInfoListSize, pad, NvP64 grInfoList, route{flags, pad, route}}. */
    static uint32_t gr_list[6] = { 0x0c, 0, 0x14, 0, 0x1d, 0 };
    struct { uint32_t count, pad; uint64_t list; uint32_t rflags, rpad; uint64_t route; } gr =
        { 3, 0, (uint64_t)(uintptr_t)gr_list, 0, 0, 0 };
    c54.cmd = 0x20801201u; c54.params = (uint64_t)(uintptr_t)&gr; c54.size = sizeof gr;
    ioctl(ctl, 0xC020462Au, &c54);
    fprintf(out, "\"gr_list_addr\": %llu,\n", (unsigned long long)(uintptr_t)gr_list);
    gr.list = 0xdead1000ull; gr.count = 4;                   /* a list pointer that points nowhere */
    ioctl(ctl, 0xC020462Au, &c54);
    gr.list = 0; gr.count = 4;                               /* NULL: nothing to follow */
    ioctl(ctl, 0xC020462Au, &c54);
    gr.list = (uint64_t)(uintptr_t)gr_list; gr.count = 0x7fffffff; /* a count far past the cap */
    ioctl(ctl, 0xC020462Au, &c54);
    /* NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_PARAMS: three string buffers of sizeOfStrings. */
    static char drv[16] = "580.159.04", ver[16] = "580.159.04", title[16] = "rel/gpu_drv";
    struct { uint32_t size, pad; uint64_t d, v, t; uint32_t cl, ocl; } bv =
        { 16, 0, (uint64_t)(uintptr_t)drv, (uint64_t)(uintptr_t)ver, (uint64_t)(uintptr_t)title, 0, 0 };
    c54.cmd = 0x00000101u; c54.params = (uint64_t)(uintptr_t)&bv; c54.size = sizeof bv;
    ioctl(ctl, 0xC020462Au, &c54);

    /* UVM-style plain request number: size from the table, never from _IOC bits. */
    uint64_t init[2] = { 0x1234, 0 };
    ioctl(uvm, 0x30000001u, init);

    /* mmap / munmap of a device file. */
    void *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, gpu, 0);
    fprintf(out, "\"mmap_addr\": %llu,\n", (unsigned long long)(uintptr_t)m);
    munmap(m, 8192);

    /* Threads issuing ioctls at once. */
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)ctl);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);

    /* Try to take the shim's fds: close and dup2 over every high fd. */
    int devnull = open("/dev/null", O_RDONLY);
    for (int fd = 900; fd < 1100; fd++) { if (fd != devnull) dup2(devnull, fd); }
    for (int fd = 900; fd < 1100; fd++) close(fd);

    /* Fork: the child writes its own records. */
    pid_t pid = fork();
    if (pid == 0) {
        int c2 = open(path_of("nvidiactl"), O_RDWR);
        uint32_t a[4] = { 1, 2, 3, 0 };
        ioctl(c2, 0xC0104629u, a);
        close(c2);
        _exit(7);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    fprintf(out, "\"child_pid\": %d, \"child_status\": %d,\n", pid, WEXITSTATUS(st));
    /* After the program's dup2/close storm the capture still records. */
    uint32_t a[4] = { 9, 9, 9, 0 };
    ioctl(ctl, 0xC0104629u, a);
    close(ctl); close(gpu); close(uvm);
    fprintf(out, "\"pid\": %d}\n", getpid());
    fclose(out);
    return 3;
}
