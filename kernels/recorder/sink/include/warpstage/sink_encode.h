// Appending sink records to a byte string (warpstage/sink_format.h). Header-only, Qt-free, CUDA-free:
// used by the injection library (one chunk per CUPTI buffer, then one write(2)) and by the tests that
// hand-build sinks.
#pragma once

#include "warpstage/sink_format.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace ws::sink {

inline void appendFileHeader(std::string& out)
{
    FileHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kFormatVersion;
    out.append(reinterpret_cast<const char*>(&h), sizeof h);
}

inline void appendRecord(std::string& out, RecType type, const void* payload, std::uint32_t size)
{
    RecHeader h{static_cast<std::uint16_t>(type), 0, size};
    out.append(reinterpret_cast<const char*>(&h), sizeof h);
    out.append(static_cast<const char*>(payload), size);
}

template <class T>
void appendPod(std::string& out, RecType type, const T& rec)
{
    appendRecord(out, type, &rec, sizeof rec);
}

inline void appendString(std::string& out, std::uint32_t id, std::string_view s)
{
    if (s.size() > kMaxRecordSize - 8) s = s.substr(0, kMaxRecordSize - 8);
    RecHeader h{static_cast<std::uint16_t>(RecType::String), 0, static_cast<std::uint32_t>(4 + s.size())};
    out.append(reinterpret_cast<const char*>(&h), sizeof h);
    out.append(reinterpret_cast<const char*>(&id), 4);
    out.append(s.data(), s.size());
}

inline void appendProcess(std::string& out, const ProcessRec& p, std::string_view exe, std::string_view cwd,
                          const std::vector<std::string>& argv)
{
    std::string args;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        if (i) args.push_back('\0');
        args += argv[i];
    }
    std::string payload(reinterpret_cast<const char*>(&p), sizeof p);
    for (std::string_view s : {exe, cwd, std::string_view(args)}) {
        if (s.size() > (1u << 20)) s = s.substr(0, 1u << 20);
        const auto n = static_cast<std::uint32_t>(s.size());
        payload.append(reinterpret_cast<const char*>(&n), 4);
        payload.append(s.data(), s.size());
    }
    appendRecord(out, RecType::Process, payload.data(), static_cast<std::uint32_t>(payload.size()));
}

// A traced launch and its buffer: one TraceLaunch record, then TraceChunk records of at most
// kTraceChunkBytes each.
inline void appendTraceLaunch(std::string& out, const TraceLaunchRec& r, std::string_view kernel,
                              const std::vector<std::string>& phaseNames, const std::vector<std::string>& roleNames,
                              std::string_view sourcePath, const void* data, std::uint64_t size)
{
    auto join = [](const std::vector<std::string>& v) {
        std::string s;
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) s.push_back('\0');
            s += v[i];
        }
        return s;
    };
    const std::string phases = join(phaseNames), roles = join(roleNames);
    std::string payload(reinterpret_cast<const char*>(&r), sizeof r);
    for (std::string_view s : {kernel, std::string_view(phases), std::string_view(roles), sourcePath}) {
        if (s.size() > (1u << 20)) s = s.substr(0, 1u << 20);
        const auto n = static_cast<std::uint32_t>(s.size());
        payload.append(reinterpret_cast<const char*>(&n), 4);
        payload.append(s.data(), s.size());
    }
    appendRecord(out, RecType::TraceLaunch, payload.data(), static_cast<std::uint32_t>(payload.size()));
    const auto* bytes = static_cast<const char*>(data);
    for (std::uint64_t off = 0; off < size; off += kTraceChunkBytes) {
        const std::uint64_t n = size - off < kTraceChunkBytes ? size - off : kTraceChunkBytes;
        TraceChunkRec c{r.correlationId, r.deviceId, off};
        RecHeader h{static_cast<std::uint16_t>(RecType::TraceChunk), 0, static_cast<std::uint32_t>(sizeof c + n)};
        out.append(reinterpret_cast<const char*>(&h), sizeof h);
        out.append(reinterpret_cast<const char*>(&c), sizeof c);
        out.append(bytes + off, std::size_t(n));
    }
}

inline void appendTraceNote(std::string& out, std::uint32_t correlationId, std::uint32_t deviceId, std::string_view text)
{
    if (text.size() > 65536) text = text.substr(0, 65536);
    TraceNoteRec n{correlationId, deviceId};
    std::string payload(reinterpret_cast<const char*>(&n), sizeof n);
    payload.append(text.data(), text.size());
    appendRecord(out, RecType::TraceNote, payload.data(), static_cast<std::uint32_t>(payload.size()));
}

inline void appendStallCubin(std::string& out, std::uint64_t crc, std::string_view cubin)
{
    std::string payload(reinterpret_cast<const char*>(&crc), sizeof crc);
    payload.append(cubin.data(), cubin.size());
    appendRecord(out, RecType::StallCubin, payload.data(), static_cast<std::uint32_t>(payload.size()));
}

inline void appendStallNote(std::string& out, std::int32_t code, std::string_view text)
{
    if (text.size() > 4096) text = text.substr(0, 4096);
    std::string payload(reinterpret_cast<const char*>(&code), sizeof code);
    payload.append(text.data(), text.size());
    appendRecord(out, RecType::StallNote, payload.data(), static_cast<std::uint32_t>(payload.size()));
}

}  // namespace ws::sink
