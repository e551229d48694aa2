# What `cmake --install` puts where, in one place (included at the end of the top-level CMakeLists.txt, when
# every target exists). Three install components, one Debian package each (cmake/WarpstagePackaging.cmake):
#
#   viewer    bin/warpstage, the bundled samples (share/warpstage/samples), the .desktop entry, the icon
#             (hicolor theme) and the MIME type application/x-warpstage-trace (*.wstrace), and the SQLite
#             extension <libdir>/warpstage/libwarpstage_sqlite.so (`warpstage query`'s tables in the sqlite3
#             shell: a tool for reading traces, so it goes with the viewer, not with dev)      -> warpstage
#   recorder  bin/warpstage-record (and bin/warpstage-sink-dump) and its CUDA/NVTX injection library, kept private in
#             <libdir>/warpstage/ (found relative to the recorder's own executable)             -> warpstage-recorder
#   dev       the public device headers (include/warpstage/) and the CMake package
#             (find_package(Warpstage CONFIG) gives Warpstage::trace)                           -> warpstage-dev
#
# Everything installed is found relative to the executables, never through a path of the build tree, so an
# installed tree can be moved (cmake --install --prefix ANY, dpkg -x into a scratch root).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
# `cpack` (and the install target) use what is built and do not build the whole tree first: package_check
# (scripts/check-package.sh) runs inside ctest and inside scripts/mutate.py's partial builds.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# The private folder of the injection library, and the way there from bin/ (compiled into the recorder).
set(WARPSTAGE_INSTALL_PRIVLIBDIR ${CMAKE_INSTALL_LIBDIR}/warpstage)
file(RELATIVE_PATH WARPSTAGE_INJECT_RELDIR ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR}/warpstage)

# --- dev: the public device headers and Warpstage::trace ------------------------------------------------------
# The one list of public headers: every *.cuh and *.h of kernels/include/warpstage/ (a header added there is
# installed without touching this file) except the ladder's host API, whose library is not installed.
set(WARPSTAGE_PUBLIC_HEADERS_EXCLUDE ladder.h)
file(GLOB WARPSTAGE_PUBLIC_HEADERS CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/kernels/include/warpstage/*.cuh ${PROJECT_SOURCE_DIR}/kernels/include/warpstage/*.h)
foreach(_h ${WARPSTAGE_PUBLIC_HEADERS})
    get_filename_component(_hn ${_h} NAME)
    if(_hn IN_LIST WARPSTAGE_PUBLIC_HEADERS_EXCLUDE)
        list(REMOVE_ITEM WARPSTAGE_PUBLIC_HEADERS ${_h})
    endif()
endforeach()
install(FILES ${WARPSTAGE_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/warpstage COMPONENT dev)

# Warpstage::trace: the include path and the language level the headers need (C++17: they are compiled with the
# ladder, whose .cu files are C++17, see the top-level CMakeLists.txt). No architecture is forced: the device
# calls use sm_90 instructions (TMA bulk copies), so users build for 90 or 90a themselves (docs: README, Install).
add_library(warpstage_trace INTERFACE)
add_library(Warpstage::trace ALIAS warpstage_trace)
set_target_properties(warpstage_trace PROPERTIES EXPORT_NAME trace)
target_include_directories(warpstage_trace INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/kernels/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(warpstage_trace INTERFACE cxx_std_17 cuda_std_17)
install(TARGETS warpstage_trace EXPORT WarpstageTargets COMPONENT dev)

set(WARPSTAGE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_DATADIR}/cmake/Warpstage)  # header-only: arch-independent
install(EXPORT WarpstageTargets NAMESPACE Warpstage:: DESTINATION ${WARPSTAGE_INSTALL_CMAKEDIR} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/WarpstageConfig.cmake.in
    ${PROJECT_BINARY_DIR}/package/WarpstageConfig.cmake
    INSTALL_DESTINATION ${WARPSTAGE_INSTALL_CMAKEDIR}
    PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/WarpstageConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/package/WarpstageConfig.cmake ${PROJECT_BINARY_DIR}/package/WarpstageConfigVersion.cmake
        DESTINATION ${WARPSTAGE_INSTALL_CMAKEDIR} COMPONENT dev)

# --- viewer ----------------------------------------------------------------------------------------------------
if(TARGET warpstage)
    install(TARGETS warpstage RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT viewer)
    # The bundled samples: whatever *.wstrace the warpstage_samples target wrote into WARPSTAGE_SAMPLES_DIR
    # (resources/CMakeLists.txt), where findSampleTrace() looks first: bin/../share/warpstage/samples.
    install(DIRECTORY ${WARPSTAGE_SAMPLES_DIR}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/warpstage/samples COMPONENT viewer
            FILES_MATCHING PATTERN "*.wstrace")
    # Desktop integration. Debian's triggers (desktop-file-utils, shared-mime-info, hicolor-icon-theme) update
    # the caches when the package is installed; a plain `cmake --install` into ~/.local needs
    # update-mime-database ~/.local/share/mime once.
    install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/warpstage.desktop
            DESTINATION ${CMAKE_INSTALL_DATADIR}/applications COMPONENT viewer)
    install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/warpstage-mime.xml
            DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages RENAME warpstage.xml COMPONENT viewer)
    install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/warpstage.svg
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps COMPONENT viewer)
    install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/warpstage.svg
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/mimetypes
            RENAME application-x-warpstage-trace.svg COMPONENT viewer)
endif()

# The loadable SQLite extension (core/CMakeLists.txt): not a library anyone links, so private like the injection
# library, in <libdir>/warpstage/; `.load /usr/lib/warpstage/libwarpstage_sqlite` (docs/schema.md). It needs
# only libzstd and the host's SQLite (through sqlite3_api): no Qt, so it is installed with or without the viewer.
if(TARGET warpstage_sqlite)
    install(TARGETS warpstage_sqlite LIBRARY DESTINATION ${WARPSTAGE_INSTALL_PRIVLIBDIR} COMPONENT viewer)
endif()

# --- recorder --------------------------------------------------------------------------------------------------
if(TARGET warpstage-record)
    install(TARGETS warpstage-record RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT recorder)
    # what kept sink files hold (warpstage-record --keep-sinks; docs/recording.md)
    install(TARGETS warpstage-sink-dump RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT recorder)
endif()
if(TARGET warpstage-inject)
    install(TARGETS warpstage-inject LIBRARY DESTINATION ${WARPSTAGE_INSTALL_PRIVLIBDIR} COMPONENT recorder
            NAMELINK_SKIP)
endif()
if(TARGET warpstage_recorder)
    # findInjectLibrary(): next to the executable (build tree), then bin/<this>/ (installed).
    target_compile_definitions(warpstage_recorder PRIVATE WARPSTAGE_INJECT_RELDIR="${WARPSTAGE_INJECT_RELDIR}")
endif()

include(WarpstagePackaging)
