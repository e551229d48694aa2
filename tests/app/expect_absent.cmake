# cmake -DFILE=PATH -P expect_absent.cmake: fails when PATH (or a temporary file next to it) exists.
file(GLOB _left "${FILE}" "${FILE}.tmp-*")
if(_left)
    message(FATAL_ERROR "left behind after a failed command: ${_left}")
endif()
