# Runs one command and checks its exit code and output.
#   cmake -DCMD="prog|arg|..." -DEXPECT_CODE=N [-DSTDOUT_RE=...] [-DSTDERR_RE=...] [-DSTDOUT_EMPTY=1] -P run_check.cmake
string(REPLACE "|" ";" CMD "${CMD}")  # arguments are passed joined by '|'
execute_process(COMMAND ${CMD} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("exit code: ${code}\n--- stdout:\n${out}\n--- stderr:\n${err}")
if(NOT "${code}" STREQUAL "${EXPECT_CODE}")
    message(FATAL_ERROR "expected exit code ${EXPECT_CODE}, got ${code}")
endif()
if(DEFINED STDOUT_RE AND NOT out MATCHES "${STDOUT_RE}")
    message(FATAL_ERROR "stdout does not match '${STDOUT_RE}'")
endif()
if(DEFINED STDERR_RE AND NOT err MATCHES "${STDERR_RE}")
    message(FATAL_ERROR "stderr does not match '${STDERR_RE}'")
endif()
if(STDOUT_EMPTY AND NOT out STREQUAL "")
    message(FATAL_ERROR "stdout should be empty on failure")
endif()
