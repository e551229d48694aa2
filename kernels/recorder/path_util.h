// Small file-system helpers shared by the program recorder (program_record.cpp) and the lce family's recorder
// (lce_record.cpp). Internal.
#pragma once

#include "warpstage/store.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <exception>
#include <string>

namespace ws::rec {

inline std::string dirOf(const std::string& p)
{
    const auto s = p.find_last_of('/');
    if (s == std::string::npos) return ".";
    return s == 0 ? "/" : p.substr(0, s);
}

inline bool isFile(const std::string& p)
{
    struct stat st{};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

inline bool isExecutable(const std::string& p)
{
    return isFile(p) && access(p.c_str(), X_OK) == 0;
}

// The folder of the running executable (/proc/self/exe), "" if unknown.
inline std::string selfExeDir()
{
    char self[PATH_MAX] = {0};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    return n > 0 ? dirOf(std::string(self, std::size_t(n))) : std::string();
}

// Why a recording cannot write OUTPUT ("" if it can): an existing file must be a Warpstage file of this schema
// version, a new one's folder must be writable. Checked before anything runs.
inline std::string outputProblem(const std::string& output)
{
    try {
        if (access(output.c_str(), F_OK) == 0) {
            const FileCheck fc = TraceStore::checkFile(output);
            if (fc.needsMigration)
                return output + ": schema version " + std::to_string(fc.fileVersion)
                       + " is older than this recorder's; migrate it in the viewer first or choose a new file";
        } else if (access(dirOf(output).c_str(), W_OK) != 0) {
            return output + ": cannot create the file (folder '" + dirOf(output) + "' is not writable or missing)";
        }
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

}  // namespace ws::rec
