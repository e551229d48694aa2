# CPack: `cpack -G DEB` in the build folder makes one .deb per install component (cmake/WarpstageInstall.cmake):
#
#   warpstage           the viewer: Qt 6, QCustomPlot, SQLite, zstd; no CUDA, so it installs on any Debian 12
#   warpstage-recorder  warpstage-record + libwarpstage-inject.so: needs the NVIDIA driver and the CUDA 13
#                       runtime with CUPTI, which NVIDIA's installers provide (not Debian packages of one name,
#                       so they are documented, not declared)
#   warpstage-dev       the device headers and the CMake package (header-only: Architecture all)
#
# Library Depends come from dpkg-shlibdeps (package dpkg-dev: the sonames and versions of the build machine);
# scripts/check-package.sh checks the result.
set(CPACK_PACKAGE_NAME warpstage)
# Each package's Description: the project's one-line summary, then its component's description below.
set(CPACK_PACKAGE_VENDOR "Warpstage")
set(CPACK_PACKAGE_CONTACT "Warpstage maintainers <warpstage@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/warpstage/warpstage")
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING IGNORE)  # one package per component
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

set(CPACK_COMPONENT_VIEWER_DISPLAY_NAME "Warpstage viewer")
set(CPACK_COMPONENT_VIEWER_DESCRIPTION
    "The viewer: the GUI and its headless info and export commands, with\nbundled H200 traces. Needs no GPU and no CUDA.")
set(CPACK_DEBIAN_VIEWER_PACKAGE_NAME warpstage)
set(CPACK_DEBIAN_VIEWER_PACKAGE_SHLIBDEPS ON)
# The SVG icon engine (a Qt plugin) comes with libqt6svg6, which dpkg-shlibdeps finds because ui/ links Qt6::Svg;
# scripts/check-package.sh fails if it ever goes missing from Depends.
set(CPACK_DEBIAN_VIEWER_PACKAGE_SUGGESTS "warpstage-recorder")

set(CPACK_COMPONENT_RECORDER_DISPLAY_NAME "Warpstage recorder")
set(CPACK_COMPONENT_RECORDER_DESCRIPTION
    "The recorder: warpstage-record records the kernel ladder or an\nunmodified CUDA program (CUPTI) into a .wstrace file. Needs an NVIDIA\ndriver and the CUDA 13 runtime with CUPTI, from NVIDIA's installers.")
set(CPACK_DEBIAN_RECORDER_PACKAGE_NAME warpstage-recorder)
# dpkg-shlibdeps finds libc, libstdc++, SQLite and zstd; the CUDA runtime and CUPTI it finds in the toolkit (no
# Debian package owns them: CPack runs it with --ignore-missing-info) and leaves out of Depends.
set(CPACK_DEBIAN_RECORDER_PACKAGE_SHLIBDEPS ON)
if(CUDAToolkit_LIBRARY_DIR)
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64)
    # libwarpstage-inject.so calls the driver (libcuda.so.1), which the NVIDIA driver installs, not a Debian
    # package, and which a build machine without a GPU does not have: point dpkg-shlibdeps at the toolkit's stub
    # under the driver's soname, so that it is treated like the other private CUDA libraries (left out of Depends).
    foreach(_stub ${CUDAToolkit_LIBRARY_DIR}/stubs/libcuda.so ${CUDAToolkit_LIBRARY_ROOT}/lib64/stubs/libcuda.so)
        if(EXISTS ${_stub})
            set(_ws_stub_dir ${CMAKE_BINARY_DIR}/cpack-driver-stub)
            file(MAKE_DIRECTORY ${_ws_stub_dir})
            file(CREATE_LINK ${_stub} ${_ws_stub_dir}/libcuda.so.1 SYMBOLIC)
            list(APPEND CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${_ws_stub_dir})
            break()
        endif()
    endforeach()
endif()
set(CPACK_DEBIAN_RECORDER_PACKAGE_SUGGESTS "warpstage, warpstage-dev")

set(CPACK_COMPONENT_DEV_DISPLAY_NAME "Warpstage device headers and CMake package")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "Device headers and CMake package: #include <warpstage/...> in your own\nkernels; find_package(Warpstage) gives the Warpstage::trace target.")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME warpstage-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "warpstage-recorder")

# /usr/share/doc/<package>/copyright (DEP-5) and changelog.Debian.gz in every package.
include(WarpstageDebianDocs)

include(CPack)
