// bench/callgrind.js (issue 31): a fake clock for the counted process, LD_PRELOADed. It advances by a
// fixed step per reading (FAKE_CLOCK_STEP_NS, default 1 us) and jumps over an idle wait that timed out
// (epoll), whatever the real time: the process meets the same timers (Node's Date header cache, V8's
// time-budgeted GC steps, ...) after the same work, however slowly valgrind and the machine's load run it.
// Build: cc -O2 -shared -fPIC -o fake-clock.so fake-clock.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <time.h>
static long long now_ns;           // the fake clock, since its start
static long long step_ns = 1000;   // FAKE_CLOCK_STEP_NS: what one reading costs
static const long long base_real = 1795651200LL * 1000000000LL; // 2026-11-26T00:00:00Z
static const long long base_mono = 1000LL * 1000000000LL;
static int init;
static long long next_ns(void) {
  if (!init) { init = 1; const char *s = getenv("FAKE_CLOCK_STEP_NS"); if (s) step_ns = atoll(s); }
  return __atomic_add_fetch(&now_ns, step_ns, __ATOMIC_RELAXED);
}
int clock_gettime(clockid_t id, struct timespec *ts) {
  long long t = next_ns() + ((id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) ? base_real : base_mono);
  ts->tv_sec = t / 1000000000LL; ts->tv_nsec = t % 1000000000LL;
  return 0;
}
int gettimeofday(struct timeval *tv, void *tz) {
  (void)tz; long long t = next_ns() + base_real;
  if (tv) { tv->tv_sec = t / 1000000000LL; tv->tv_usec = (t % 1000000000LL) / 1000; }
  return 0;
}
time_t time(time_t *out) { time_t t = (time_t)((next_ns() + base_real) / 1000000000LL); if (out) *out = t; return t; }
// An idle wait that timed out: the clock jumps by the timeout (the next timer is due), not by real time.
static void waited(int ready, int timeout_ms) {
  if (ready == 0 && timeout_ms > 0) __atomic_add_fetch(&now_ns, (long long)timeout_ms * 1000000LL, __ATOMIC_RELAXED);
}
int epoll_wait(int fd, struct epoll_event *ev, int n, int timeout) {
  static int (*real)(int, struct epoll_event *, int, int);
  if (!real) real = dlsym(RTLD_NEXT, "epoll_wait");
  int r = real(fd, ev, n, timeout); waited(r, timeout); return r;
}
int epoll_pwait(int fd, struct epoll_event *ev, int n, int timeout, const sigset_t *mask) {
  static int (*real)(int, struct epoll_event *, int, int, const sigset_t *);
  if (!real) real = dlsym(RTLD_NEXT, "epoll_pwait");
  int r = real(fd, ev, n, timeout, mask); waited(r, timeout); return r;
}
