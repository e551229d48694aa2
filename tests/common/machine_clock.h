// Clocks for tests that must not depend on the machine's speed or load (docs/testing.md, "Tests and the machine
// they run on"). A wall-clock limit fails when the test waits for a CPU (ctest -j2, other builds, a sanitizer
// build's threads); these measure what the code under test does instead:
//  * threadCpuMs(): CPU time of the calling thread (or of another thread's clock, pthread_getcpuclockid);
//  * runQueueWaitMs(): time the calling thread spent runnable but waiting for a CPU (Linux schedstat). Wall time
//    less this is the time the thread was busy or blocked (on a lock, a join, I/O), which is what a "the GUI
//    thread never blocks" test is about.
#pragma once

#include <cstdio>
#include <ctime>

namespace wstest {

// CPU time in ms of the calling thread (default) or of the thread whose clock id is given; -1 when the clock
// cannot be read (the thread has ended).
inline double threadCpuMs(clockid_t clock = CLOCK_THREAD_CPUTIME_ID)
{
    timespec t{};
    if (clock_gettime(clock, &t) != 0)
        return -1;
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

// Total time in ms the calling thread has waited on a run queue (runnable, not running): the second field of
// /proc/thread-self/schedstat. -1 where the kernel does not provide it (not Linux, CONFIG_SCHED_INFO off).
inline double runQueueWaitMs()
{
    std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
    if (!f)
        return -1;
    unsigned long long onCpu = 0, waited = 0;
    const int n = std::fscanf(f, "%llu %llu", &onCpu, &waited);
    std::fclose(f);
    return n == 2 ? double(waited) / 1e6 : -1;
}

}  // namespace wstest
