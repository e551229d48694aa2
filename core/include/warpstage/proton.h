// Importing Triton Proton intra-kernel traces (docs/interop.md, "Importing from Proton"). Qt-free.
//
// Proton's instrumentation mode writes Chrome-trace JSON: one complete ("ph":"X") event per scope
// instance, pid "<kernel> Core<SM> CTA<n>", tid "warp <w> (line <l>)" (the line separates overlapping
// scopes of one warp), ts/dur in "µs" of an assumed 1 GHz clock (raw = ts × args["Frequency (MHz)"]:
// within a CTA SM clock cycles since the CTA's first event, across CTAs the CTA's global-timer start in ns).
//
// The logic here works on plain events (ProtonEvent), whoever parsed the JSON: pid/tid parsing,
// cycles -> ns, the scope-name mapping (glob = kind [role]), nesting (innermost scope per warp on the
// timeline, outer scopes kept as ScopeSpans), roles, warpgroups, and loads inferred from issue / wait
// scopes. readProtonEvents() (proton_json.cpp) reads a file with the shared streaming JSON reader.
#pragma once

#include "warpstage/model.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ws {

class ProtonError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One Proton scope instance as written in the file (ts/dur as written: "µs" at Frequency (MHz)).
struct ProtonEvent {
    std::string name;
    std::string pid;
    std::string tid;
    double ts = 0;
    double dur = 0;
    double frequencyMhz = 1000.0;   // args["Frequency (MHz)"] (Proton 3.6 always writes 1000)
};

// "<kernel> Core<SM> CTA<n>" (the kernel name may contain spaces). nullopt if the pid is not of that form.
struct ProtonPid {
    std::string kernel;
    int sm = -1;
    int cta = -1;
};
std::optional<ProtonPid> parseProtonPid(std::string_view pid);

// "warp <w> (line <l>)". nullopt if the tid is not of that form.
struct ProtonTid {
    int warp = -1;
    int line = -1;
};
std::optional<ProtonTid> parseProtonTid(std::string_view tid);

// --- scope-name mapping -----------------------------------------------------------------------------
// One rule: names matching `glob` (case-insensitive; '*' any run, '?' one character) get `kind`, or stay
// a user-named phase when `userPhase` is set (kind "user"); `role`, when given, is the role of every
// warp that has such a scope (it wins over the roles inferred from loads and MMAs).
struct ScopeRule {
    std::string glob;
    IntervalKind kind = IntervalKind::Other;
    bool userPhase = false;
    std::optional<WarpRole> role;
    int line = 0;                   // line in the mapping file (0: a built-in default)
};

class ScopeMapping {
public:
    // The built-in defaults only (docs/interop.md lists them).
    static ScopeMapping defaults();
    // Parses a mapping file's text: one `glob = kind [role]` rule per line, '#' starts a comment. The
    // file's rules are tried first, then the defaults. Throws ProtonError("FILE:LINE: reason") on the
    // first bad line.
    static ScopeMapping parse(std::string_view text, const std::string& fileName);
    static ScopeMapping load(const std::string& path);   // reads the file; ProtonError if unreadable

    // The first rule whose glob matches `name`, nullptr if none (the scope stays a user-named phase).
    const ScopeRule* match(std::string_view name) const;
    const std::vector<ScopeRule>& rules() const { return m_rules; }

private:
    std::vector<ScopeRule> m_rules;
};

// Case-insensitive glob ('*', '?').
bool globMatch(std::string_view glob, std::string_view text);

// --- nesting -----------------------------------------------------------------------------------------
// An outer scope of a warp (it contains at least one other scope of that warp) is kept as a ScopeSpan
// (model.h) in KernelRecord::scopes, for the bracket lane.

// One scope of one warp in ns, before flattening.
struct WarpScope {
    std::string name;
    TimeNs start = 0;
    TimeNs end = 0;
    int line = 0;
};
// The innermost scope at every instant: pieces [start, end) each naming the index into `scopes` of
// the scope that owns it (the one that started last among those open; ties: the shorter one). Adjacent
// pieces of one scope are merged; time covered by no scope gives no piece.
struct ScopePiece {
    std::size_t scope = 0;
    TimeNs start = 0;
    TimeNs end = 0;
};
std::vector<ScopePiece> innermostPieces(const std::vector<WarpScope>& scopes);
// Scopes of the warp that contain another of its scopes, with their depth (number of scopes containing them).
std::vector<std::pair<std::size_t, int>> outerScopes(const std::vector<WarpScope>& scopes);

// --- the import ---------------------------------------------------------------------------------------
struct ProtonImportOptions {
    std::optional<double> smClockMhz;     // --sm-clock-mhz
    ScopeMapping mapping = ScopeMapping::defaults();
    std::string sourceName;               // file name for the run's notes and messages
    // Several launches of one kernel in a file become one kernel each (KernelLaunch::launchIndex 0, 1, ...);
    // set: only that launch (0-based) of each kernel name. ProtonError if the file has no such launch.
    std::optional<int> launch;
};
inline constexpr double kAssumedSmClockMhz = 1980.0;   // H100/H200 max SM clock, used when nothing says better

// What the import found besides the run (also written into RunInfo::notes).
struct ProtonImportReport {
    double clockMhz = 0;
    std::string clockSource;              // "--sm-clock-mhz", "recorded in the trace", "assumed"
    std::vector<std::string> unmappedScopes;
    std::int64_t loadsInferred = 0;
    int launches = 0;                     // kernels imported (launches of all kernel names)
};

// Builds one run with one kernel per launch (per Proton kernel name and launch: Proton writes the launches one
// after the other; a CTA's warp that comes back after the writer left it, or a CTA on another SM, starts the
// next launch of that kernel). Throws ProtonError when the events are
// not a Proton trace (no event with a Proton pid/tid) or hold nothing usable.
struct ProtonImport {
    RunRecord run;
    ProtonImportReport report;
};
ProtonImport importProtonEvents(const std::vector<ProtonEvent>& events, const ProtonImportOptions& options);

// The same, one event at a time (a streaming reader feeds it): memory grows with the scopes kept
// (about 24 bytes each, names interned), not with the file.
class ProtonBuilder {
public:
    explicit ProtonBuilder(ProtonImportOptions options);
    ~ProtonBuilder();
    ProtonBuilder(const ProtonBuilder&) = delete;
    ProtonBuilder& operator=(const ProtonBuilder&) = delete;
    void add(const ProtonEvent& event);     // ProtonError on a scope with a bad time
    std::int64_t scopeEvents() const;       // events with a Proton pid/tid so far
    ProtonImport finish();                  // ProtonError when no event was a Proton scope

private:
    struct State;
    ProtonImportOptions m_options;
    std::unique_ptr<State> m_state;
};

// --- files ---------------------------------------------------------------------------------------------
// True when the JSON file (plain or gzip) is a Proton trace: an object whose "traceEvents" holds an
// event with a pid "<kernel> Core<SM> CTA<n>". Reads only up to the first such event; never throws on
// bad JSON (false).
bool looksLikeProtonTrace(const std::string& path);
// Reads a Proton Chrome-trace file with the shared streaming reader (jsonreader.h) and imports it.
// Throws ProtonError: not JSON, truncated JSON, not a Proton trace, bad event fields (with the byte offset).
ProtonImport importProtonFile(const std::string& path, const ProtonImportOptions& options);

}  // namespace ws
