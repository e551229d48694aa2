# Helpers for the test suites.
#
# warpstage_add_qtest(NAME tst_foo SOURCES tst_foo.cpp LIBS warpstage_core [LABELS core])
#   A Qt Test executable (QTEST_MAIN / QTEST_GUILESS_MAIN) registered with ctest.
#   Only built when Qt is available.
#
# warpstage_add_gputest(NAME gpu_foo SOURCES gpu_foo.cu LIBS ...)
#   A plain executable that exits 77 (and prints "SKIP: <why>") when there is no GPU;
#   ctest reports it as skipped.
function(warpstage_add_qtest)
    cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
    if(NOT WARPSTAGE_HAVE_QT)
        return()
    endif()
    add_executable(${T_NAME} ${T_SOURCES})
    target_link_libraries(${T_NAME} PRIVATE Qt6::Test ${T_LIBS})
    set_target_properties(${T_NAME} PROPERTIES AUTOMOC ON)
    add_test(NAME ${T_NAME} COMMAND ${T_NAME})
    set_tests_properties(${T_NAME} PROPERTIES
        ENVIRONMENT "QT_QPA_PLATFORM=offscreen;WARPSTAGE_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
        LABELS "${T_LABELS}")
endfunction()

function(warpstage_add_gputest)
    cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
    add_executable(${T_NAME} ${T_SOURCES})
    target_link_libraries(${T_NAME} PRIVATE ${T_LIBS})
    add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS})
    set_tests_properties(${T_NAME} PROPERTIES SKIP_RETURN_CODE 77 LABELS "gpu;${T_LABELS}")
endfunction()
