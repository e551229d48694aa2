// CUPTI, loaded at run time (dlopen), so that warpstage-record starts without it and
// can say "CUPTI not found" with an exit code instead of failing in the dynamic loader.
// The signatures come from the CUPTI headers (decltype); nothing is linked.
#pragma once

#include <cupti.h>
#include <cupti_pcsampling.h>

#include <string>

namespace ws::rec::cupti {

#define WS_CUPTI_FUNCTIONS(X)                  \
    X(cuptiGetVersion)                         \
    X(cuptiGetResultString)                    \
    X(cuptiGetTimestamp)                       \
    X(cuptiActivityRegisterCallbacks)          \
    X(cuptiActivityEnable)                     \
    X(cuptiActivityDisable)                    \
    X(cuptiActivityFlushAll)                   \
    X(cuptiActivityGetNextRecord)              \
    X(cuptiActivityGetNumDroppedRecords)       \
    X(cuptiActivityPushExternalCorrelationId)  \
    X(cuptiActivityPopExternalCorrelationId)   \
    X(cuptiSubscribe)                          \
    X(cuptiUnsubscribe)                        \
    X(cuptiEnableCallback)                     \
    X(cuptiGetCubinCrc)                        \
    X(cuptiGetSassToSourceCorrelation)         \
    X(cuptiPCSamplingEnable)                   \
    X(cuptiPCSamplingDisable)                  \
    X(cuptiPCSamplingStart)                    \
    X(cuptiPCSamplingStop)                     \
    X(cuptiPCSamplingGetData)                  \
    X(cuptiPCSamplingGetNumStallReasons)       \
    X(cuptiPCSamplingGetStallReasons)          \
    X(cuptiPCSamplingSetConfigurationAttribute)

struct Api {
#define WS_CUPTI_MEMBER(name) decltype(&::name) name = nullptr;
    WS_CUPTI_FUNCTIONS(WS_CUPTI_MEMBER)
#undef WS_CUPTI_MEMBER
    std::string libraryPath;
};

// Loads libcupti once (WARPSTAGE_CUPTI_LIB, then the usual names and CUDA install
// paths). Returns nullptr and fills `error` if it cannot be loaded or lacks a symbol.
const Api* load(std::string* error);

// "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)" style text for a result code.
std::string resultText(const Api& api, CUptiResult r);

}  // namespace ws::rec::cupti
