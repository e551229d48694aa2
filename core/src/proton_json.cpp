// Proton Chrome-trace files through the shared streaming JSON reader (jsonreader.h): detection and import.
// Memory is bounded by the scopes kept (ProtonBuilder), never by the file.
#include "warpstage/jsonreader.h"
#include "warpstage/proton.h"
#include "warpstage/traceimport.h"

#include <charconv>

namespace ws {

namespace {

using Tok = JsonReader::Token;

struct RawEvent {
    ProtonEvent e;
    std::string ph;
    bool hasTs = false, hasDur = false;
    std::string bad;   // why a field could not be read (reported by the importer, ignored by detection)
};

std::optional<double> toDouble(const std::string& t)
{
    double v = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size())
        return std::nullopt;
    return v;
}

// A string, or a number written as its literal (Chrome traces allow integer pids/tids).
bool scalarText(JsonReader& r, Tok t, std::string& out)
{
    if (t == Tok::String || t == Tok::Number) {
        out = r.text();
        return true;
    }
    if (t == Tok::BeginObject || t == Tok::BeginArray)
        r.skipContainer();
    return false;
}

// Reads one event object (after its BeginObject) up to and including its EndObject.
RawEvent readEvent(JsonReader& r)
{
    RawEvent ev;
    for (Tok k = r.next(); k != Tok::EndObject; k = r.next()) {
        const std::string key = r.text();
        const Tok v = r.next();
        if (key == "name") {
            scalarText(r, v, ev.e.name);
        } else if (key == "pid") {
            scalarText(r, v, ev.e.pid);
        } else if (key == "tid") {
            scalarText(r, v, ev.e.tid);
        } else if (key == "ph") {
            scalarText(r, v, ev.ph);
        } else if (key == "ts" || key == "dur") {
            if (v != Tok::Number) {
                if (v == Tok::BeginObject || v == Tok::BeginArray)
                    r.skipContainer();
                ev.bad = "\"" + key + "\" is not a number (byte " + std::to_string(r.offset()) + ")";
                continue;
            }
            const auto d = toDouble(r.text());
            if (!d) {
                ev.bad = "\"" + key + "\" (" + r.text() + ") is out of range (byte " + std::to_string(r.offset()) + ")";
                continue;
            }
            (key == "ts" ? ev.e.ts : ev.e.dur) = *d;
            (key == "ts" ? ev.hasTs : ev.hasDur) = true;
        } else if (key == "args" && v == Tok::BeginObject) {
            for (Tok a = r.next(); a != Tok::EndObject; a = r.next()) {
                const std::string akey = r.text();
                const Tok av = r.next();
                if (akey == "Frequency (MHz)" && av == Tok::Number) {
                    if (const auto d = toDouble(r.text()))
                        ev.e.frequencyMhz = *d;
                } else if (av == Tok::BeginObject || av == Tok::BeginArray) {
                    r.skipContainer();
                }
            }
        } else if (v == Tok::BeginObject || v == Tok::BeginArray) {
            r.skipContainer();
        }
    }
    return ev;
}

// Calls `f(RawEvent)` for every object of the trace's event array ("traceEvents", or a top-level array);
// `f` returns false to stop. Returns whether an event array was found.
template <typename F>
bool forEachEvent(JsonReader& r, F&& f)
{
    const auto eventsArray = [&]() {
        for (Tok t = r.next(); t != Tok::EndArray; t = r.next()) {
            if (t == Tok::BeginObject) {
                if (!f(readEvent(r)))
                    return false;
            } else if (t == Tok::BeginArray) {
                r.skipContainer();
            }
        }
        return true;
    };
    const Tok t = r.next();
    if (t == Tok::BeginArray) {
        eventsArray();
        return true;
    }
    if (t != Tok::BeginObject)
        return false;
    bool found = false;
    for (Tok k = r.next(); k != Tok::EndObject; k = r.next()) {
        const std::string key = r.text();
        const Tok v = r.next();
        if (key == "traceEvents" && v == Tok::BeginArray) {
            found = true;
            if (!eventsArray())
                return true;
        } else if (v == Tok::BeginObject || v == Tok::BeginArray) {
            r.skipContainer();
        }
    }
    return found;
}

}  // namespace

bool looksLikeProtonTrace(const std::string& path)
{
    try {
        auto src = openFileSource(path);
        JsonReader r(*src);
        bool proton = false;
        int seen = 0;
        forEachEvent(r, [&](const RawEvent& ev) {
            proton = parseProtonPid(ev.e.pid).has_value() && parseProtonTid(ev.e.tid).has_value();
            return !proton && ++seen < 256;   // Proton may write a few "Kernel Call Path" bars first
        });
        return proton;
    } catch (const std::exception&) {
        return false;
    }
}

ProtonImport importProtonFile(const std::string& path, const ProtonImportOptions& options)
{
    ProtonImportOptions o = options;
    if (o.sourceName.empty())
        o.sourceName = path;
    ProtonBuilder b(o);
    std::int64_t events = 0, other = 0;
    try {
        auto src = openFileSource(path);
        JsonReader r(*src);
        const bool found = forEachEvent(r, [&](const RawEvent& ev) {
            ++events;
            if (ev.ph != "X") {
                ++other;   // metadata, counters, instants: not scopes
                return true;
            }
            if (!ev.bad.empty() && parseProtonPid(ev.e.pid))
                throw ProtonError(path + ": an event of " + ev.e.pid + ": " + ev.bad);
            if (!ev.hasTs || !ev.hasDur) {
                if (parseProtonPid(ev.e.pid))
                    throw ProtonError(path + ": a complete event of " + ev.e.pid + " has no \""
                                      + (ev.hasTs ? "dur" : "ts") + "\" (byte " + std::to_string(r.offset()) + ")");
                return true;
            }
            b.add(ev.e);
            return true;
        });
        if (!found)
            throw ProtonError(path + ": JSON, but not a trace (no \"traceEvents\" array)");
        if (r.next() != Tok::End)
            throw ProtonError(path + ": unexpected data after the trace (byte " + std::to_string(r.offset()) + ")");
    } catch (const JsonError& e) {
        const std::string w = e.what();   // file errors name the path already
        throw ProtonError(w.rfind(path + ": ", 0) == 0 ? w : path + ": " + w);
    }
    if (b.scopeEvents() == 0)
        throw ProtonError(path + ": not a Proton intra-kernel trace (" + std::to_string(events)
                          + " events, none with a pid \"<kernel> Core<SM> CTA<n>\" and a tid \"warp <w> (line <l>)\")");
    ProtonImport imp = b.finish();
    imp.run.info.commandLine = "warpstage import " + path;
    if (other > 0)
        imp.run.info.notes += std::to_string(other) + " events that are not complete (\"X\") events were skipped.\n";
    return imp;
}

// traceimport.h's hook: `warpstage import` of a file detected as Proton.
RunRecord importProtonTrace(const std::string& path, const ImportOptions& options)
{
    try {
        ProtonImportOptions o;
        o.smClockMhz = options.smClockMhz;
        o.launch = options.protonLaunch;
        if (!options.mappingFile.empty())
            o.mapping = ScopeMapping::load(options.mappingFile);
        return importProtonFile(path, o).run;
    } catch (const ProtonError& e) {
        throw ImportError(e.what());
    }
}

}  // namespace ws
