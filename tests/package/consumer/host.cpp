// Host code using the installed event format (no CUDA compiler involved).
#include <warpstage/trace_format.h>

#include <cstdio>

int main()
{
    std::printf("event %zu bytes\n", sizeof(ws::trace::TraceEvent));
    return sizeof(ws::trace::TraceEvent) == 16 ? 0 : 1;
}
