/* An interposing library (synthetic): it defines getppid and finds the next one with
 * dlsym(RTLD_NEXT). With the shim preloaded, RTLD_NEXT must still resolve relative to
 * this library (so to libc), not to the shim. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>

pid_t getppid(void) {
    pid_t (*next)(void) = (pid_t (*)(void))dlsym(RTLD_NEXT, "getppid");
    return next && (void *)next != (void *)getppid ? next() : -1;
}
int next_resolves_past_me(void) {
    void *next = dlsym(RTLD_NEXT, "getppid");
    return next != 0 && next != (void *)getppid;
}
