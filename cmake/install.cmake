# Install rules: `cmake --install BUILD --prefix PREFIX` puts under PREFIX the public headers
# (with the generated chatwire/version.hpp), the component libraries, the `chatwire` command,
# chatwireConfig.cmake + chatwireConfigVersion.cmake (find_package(chatwire), target
# chatwire::chatwire) and chatwire.pc (pkg-config). examples/consumer is built against such a
# tree by the `install` test (cmake/test_install.cmake).
include(CMakePackageConfigHelpers)
set(CHATWIRE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/chatwire)

get_property(chatwire_libraries GLOBAL PROPERTY CHATWIRE_LIBRARIES)
install(TARGETS ${chatwire_libraries} chatwire EXPORT chatwireTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS chatwire_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/chatwire DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        PATTERN serve.hpp EXCLUDE)  # chatwire serve is the command's, not the library's
install(FILES ${PROJECT_BINARY_DIR}/include/chatwire/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/chatwire)
install(EXPORT chatwireTargets NAMESPACE chatwire:: DESTINATION ${CHATWIRE_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/chatwireConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/chatwireConfig.cmake
                              INSTALL_DESTINATION ${CHATWIRE_CMAKE_DIR})
# 0.x: a minor release may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/chatwireConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/chatwireConfig.cmake
              ${PROJECT_BINARY_DIR}/chatwireConfigVersion.cmake
        DESTINATION ${CHATWIRE_CMAKE_DIR})

# pkg-config: the static libraries, dependents before what they use.
set(CHATWIRE_PC_LIBS "")
foreach(component endpoint readback adapt probe chat jinja value tokenize parse response)
  if(TARGET chatwire_${component})
    string(APPEND CHATWIRE_PC_LIBS " -lchatwire_${component}")
  endif()
endforeach()
# From <libdir>/pkgconfig back up to the prefix, so the installed tree can be moved.
file(RELATIVE_PATH CHATWIRE_PC_UP /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/chatwire.pc.in ${PROJECT_BINARY_DIR}/chatwire.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/chatwire.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
