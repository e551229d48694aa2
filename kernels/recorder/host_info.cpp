#include "host_info.h"

#include <unistd.h>

#include <cctype>
#include <ctime>
#include <fstream>
#include <sstream>

namespace ws::rec {

std::string isoNowUtc()
{
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string hostName()
{
    char buf[256] = {0};
    if (gethostname(buf, sizeof buf - 1) != 0) return "";
    return buf;
}

std::string driverModuleVersion()
{
    std::ifstream f("/proc/driver/nvidia/version");
    std::string line;
    if (f && std::getline(f, line)) {
        std::istringstream ss(line);
        std::string w;
        while (ss >> w)
            if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos) return w;
    }
    return "";
}

}  // namespace ws::rec
