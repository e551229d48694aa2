// Facts about the recording machine that every run stores (RunInfo::startedAt, host, driverVersion),
// shared by the ladder recorder (recorder.cpp) and program recording (program_record.cpp). Internal.
#pragma once

#include <string>

namespace ws::rec {

std::string isoNowUtc();              // "2026-11-30T06:00:41Z"
std::string hostName();               // gethostname(), "" if unknown
std::string driverModuleVersion();    // the kernel module's version ("580.159.04") from /proc, "" if not there

}  // namespace ws::rec
