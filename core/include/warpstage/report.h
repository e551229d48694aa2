// Text and JSON descriptions of a trace file for `warpstage info FILE [--json]`.
#pragma once

#include <string>

namespace ws {

// Opens `path` read-only (never changes it) and describes its runs, kernels
// and stored metrics, as human-readable text or as one JSON document.
// Throws ws::StoreError (naming the file and the problem); an older-version
// file throws ws::NeedsMigrationError (see store.h).
std::string describeFile(const std::string& path, bool json);

// Escapes a string for a JSON string literal (without the quotes).
std::string jsonEscape(const std::string& s);

}  // namespace ws
