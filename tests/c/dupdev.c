/* Copies of NVIDIA fds (TRACE_LAUNCH_DEVDIR fake devices): dup, fcntl F_DUPFD and
 * F_DUPFD_CLOEXEC of nvidiactl and nvidia0, an ioctl through each copy and an mmap through
 * one, as libcuda does with the fds it maps memory through. Usage: dupdev DEVDIR OUTJSON;
 * OUTJSON says which fd is a copy of which. No GPU involved. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    char ctl_path[600], gpu_path[600];
    snprintf(ctl_path, sizeof ctl_path, "%s/nvidiactl", argv[1]);
    snprintf(gpu_path, sizeof gpu_path, "%s/nvidia0", argv[1]);
    FILE *out = fopen(argv[2], "w");
    int ctl = open(ctl_path, O_RDWR);
    int gpu = open(gpu_path, O_RDWR);
    int a = dup(ctl);
    int b = fcntl(gpu, F_DUPFD, 60);
    int c = fcntl(gpu, F_DUPFD_CLOEXEC, 70);
    uint32_t arg[4] = { 0xc1d00001, 0x5c000001, 0, 0 };
    ioctl(a, 0xC0104629u /* RM_FREE, NVOS00, 16 B */, arg);
    ioctl(b, 0xC0104629u, arg);
    ioctl(c, 0xC0104629u, arg);
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, c, 0);
    int flags = fcntl(c, F_GETFD);          /* not a copy: nothing recorded */
    fprintf(out, "{\"pid\": %d, \"ctl\": %d, \"gpu\": %d, \"dup\": %d, \"dupfd\": %d, "
            "\"dupfd_cloexec\": %d, \"cloexec_flag\": %d, \"mmap_addr\": %llu}\n", getpid(),
            ctl, gpu, a, b, c, flags & FD_CLOEXEC, (unsigned long long)(uintptr_t)m);
    fclose(out);
    close(a);
    close(b);
    close(c);
    return 0;
}
