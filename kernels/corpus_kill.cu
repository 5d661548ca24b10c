// A program killed with SIGKILL mid-run: the main thread launches without end; another
// thread sends SIGKILL to the process after the first LAUNCHES_BEFORE_KILL launches, so
// the capture stops at a point nobody chose. Usage: corpus_kill [TRUTH.json].
#ifndef __CUDACC_RTC__   // NVRTC compiles the kernels only
#include "corpus_common.h"
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#endif

__global__ void tick(int *c) { atomicAdd(c, 1); }
#ifndef __CUDACC_RTC__   // host side: nvcc only
static volatile long launched;
#define LAUNCHES_BEFORE_KILL 2000

static void *killer(void *) {
    while (launched < LAUNCHES_BEFORE_KILL) usleep(100);
    kill(getpid(), SIGKILL);
    return NULL;
}

int main(int argc, char **argv) {
    int *c;
    CK(cudaMalloc(&c, sizeof(int)));
    FILE *f = truth_open(argc, argv);
    int first = 1;
    fprintf(f, "\"kernels\": {");
    truth_kernel(f, "tick", (const void *)tick, &first);
    fprintf(f, "}, \"launches_before_kill\": %d, \"signal\": 9}\n", LAUNCHES_BEFORE_KILL);
    fclose(f);
    pthread_t t;
    pthread_create(&t, NULL, killer, NULL);
    for (;;) { tick<<<1, 1>>>(c); launched++; }
}
#endif
