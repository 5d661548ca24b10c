/* A vfork child that closes every fd before it execs, as the child of Python's subprocess
 * does (close_range, then exec): it runs in the parent's memory, shim tables included.
 * The parent's device fds stay open; their ioctls and mmap after the child are the
 * parent's and must be recorded. Usage: vforkdev DEVDIR OUTJSON (TRACE_LAUNCH_DEVDIR
 * fake devices). No GPU involved. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int close_range(unsigned first, unsigned last, int flags);

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    char ctl_path[600], gpu_path[600];
    snprintf(ctl_path, sizeof ctl_path, "%s/nvidiactl", argv[1]);
    snprintf(gpu_path, sizeof gpu_path, "%s/nvidia0", argv[1]);
    int ctl = open(ctl_path, O_RDWR);
    int gpu = open(gpu_path, O_RDWR);
    uint32_t arg[4] = { 0xc1d00001, 0x5c000001, 0, 0 };
    ioctl(ctl, 0xC0104629u /* RM_FREE, NVOS00, 16 B */, arg);
    pid_t child = vfork();
    if (child == 0) {
        close(gpu);
        close_range(3, ~0u, 0);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int status = -1;
    waitpid(child, &status, 0);
    ioctl(ctl, 0xC0104629u, arg);
    ioctl(gpu, 0xC0104629u, arg);
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, gpu, 0);
    FILE *out = fopen(argv[2], "w");
    fprintf(out, "{\"pid\": %d, \"child\": %d, \"child_status\": %d, \"ctl\": %d, \"gpu\": %d, "
            "\"mmap_addr\": %llu}\n", getpid(), (int)child, status, ctl, gpu,
            (unsigned long long)(uintptr_t)m);
    fclose(out);
    close(ctl);
    close(gpu);
    return 0;
}
