// `warpstage import`: traces of other tools (and Warpstage's own exports) into a Warpstage file
// (docs/interop.md). Qt-free. The format is recognised from the content, never from the file name.
//
// This version reads one format, Warpstage's own Chrome Trace Event JSON export (plain or gzip): its
// process and thread metadata rebuild SM, CTA and warp, its events' args the interval kinds. Other
// importers (Proton) plug in as further ImportFormat values with a reader of their own; they are meant
// to reuse the streaming JsonReader (jsonreader.h), so memory stays bounded by the intervals kept, not
// by the file.
#pragma once

#include "warpstage/model.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ws {

class ImportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class ImportFormat { WarpstageChromeJson, ProtonJson };   // ProtonJson: Triton Proton, proton.h
std::string_view importFormatName(ImportFormat f);   // "warpstage-chrome-json"

// Looks at the content (gzip or not, JSON or not, whose JSON) and says which importer reads it.
// Throws ImportError with a clear message: "x.bin: not JSON (and no other format this version imports)",
// "x.json: a Chrome trace not written by Warpstage: ...", "x.wstrace: already a Warpstage trace file".
ImportFormat detectImportFormat(const std::string& path);

// Reads a Warpstage Chrome JSON export back into one run with one kernel (the intervals of the warps
// it holds; loads, tiles and stall samples are not in the export and stay empty). Throws ImportError
// (bad or truncated JSON, not a Warpstage export, a program-view export, no warp timeline).
RunRecord importWarpstageChromeJson(const std::string& path);

struct ImportedRun {
    std::string input;
    ImportFormat format;
    RowId runId = 0;
    std::int64_t intervals = 0;
};
// Imports every input as one run into `out`, which must not exist: the runs are written to a temporary
// file next to it, renamed onto `out` once all inputs were read; on any error nothing is left behind.
// Throws ImportError (inputs) or StoreError (writing).
// Options of the Proton importer (proton.h): the SM clock, a scope-name mapping file ("" = defaults only).
struct ImportOptions {
    std::optional<double> smClockMhz;
    std::string mappingFile;
    std::optional<int> protonLaunch;   // --launch N: only launch N (0-based) of each kernel; unset: every launch
};
// Reads a Triton Proton intra-kernel trace into one run (proton_json.cpp). Throws ImportError.
RunRecord importProtonTrace(const std::string& path, const ImportOptions& options);
std::vector<ImportedRun> importTraces(const std::vector<std::string>& inputs, const std::string& out,
                                      const ImportOptions& options = {});

}  // namespace ws
