# Install rules: the public headers, the libraries, the CMake package `wow` (find_package(wow
# CONFIG), targets wow::core, wow::memory, wow::sqlite, wow::stores, wow::testing) and wow.pc for pkg-config.
# One export set per component, so that a component's dependencies (SQLite, GoogleTest) are needed
# only by the users who ask for it.
include(CMakePackageConfigHelpers)

set(WOW_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/wow CACHE STRING
    "Where to install the CMake package files, relative to the prefix")

get_target_property(_wow_core_type wow_core TYPE)
if(_wow_core_type STREQUAL "STATIC_LIBRARY")
  set(WOW_STATIC_LIBS ON)   # the config then finds the private dependencies too
else()
  set(WOW_STATIC_LIBS OFF)
endif()

set(_wow_header_excludes)
set(WOW_OPTIONAL_COMPONENTS)
if(TARGET wow_sqlite)
  list(APPEND WOW_OPTIONAL_COMPONENTS sqlite)
else()
  list(APPEND _wow_header_excludes PATTERN sqlite.h EXCLUDE)
endif()
if(NOT TARGET wow_mongo)
  list(APPEND _wow_header_excludes PATTERN mongo.h EXCLUDE)
endif()
if(TARGET wow_testing)
  list(APPEND WOW_OPTIONAL_COMPONENTS testing)
else()
  list(APPEND _wow_header_excludes PATTERN testing EXCLUDE)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/wow DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        ${_wow_header_excludes})

# wow_store_common has no public header: it is installed because the static backends link it.
# wow_stores (OpenStores) links every backend the build has, so it goes with the SQLite component
# when there is one, else with core.
# The MongoDB backend (wow_mongo, when built, with the log's algorithm wow_mongo_log that it links)
# goes with wow_stores, which links it.
set(_wow_core_libs wow_core wow_store_common wow_memory)
set(_wow_stores_libs wow_stores)
if(TARGET wow_mongo)
  list(PREPEND _wow_stores_libs wow_mongo wow_mongo_log)
endif()
if(NOT TARGET wow_sqlite)
  list(APPEND _wow_core_libs ${_wow_stores_libs})
endif()
install(TARGETS ${_wow_core_libs} EXPORT wow-core-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT wow-core-targets NAMESPACE wow:: DESTINATION ${WOW_INSTALL_CMAKEDIR})
if(TARGET wow_sqlite)
  install(TARGETS wow_sqlite ${_wow_stores_libs} EXPORT wow-sqlite-targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT wow-sqlite-targets NAMESPACE wow:: DESTINATION ${WOW_INSTALL_CMAKEDIR})
endif()
if(TARGET wow_testing)
  install(TARGETS wow_testing EXPORT wow-testing-targets)
  install(EXPORT wow-testing-targets NAMESPACE wow:: DESTINATION ${WOW_INSTALL_CMAKEDIR})
endif()

# Set before wowConfig.cmake is configured: its static link interface then finds libmongoc.
set(WOW_WITH_MONGO_INSTALLED OFF)
if(TARGET wow_mongo)
  set(WOW_WITH_MONGO_INSTALLED ON)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/wowConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/wowConfig.cmake INSTALL_DESTINATION ${WOW_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/wowConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/wowConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/wowConfigVersion.cmake
        DESTINATION ${WOW_INSTALL_CMAKEDIR})

# wow.pc: relocatable (the prefix is found from the file's own place). Link order matters for
# static libraries: a backend, then what it uses.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(WOW_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _wow_pc_up /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" _wow_pc_up "${_wow_pc_up}")
  set(WOW_PC_PREFIX "\${pcfiledir}/${_wow_pc_up}")
endif()
set(WOW_PC_LIBS "-lwow_stores -lwow_memory -lwow_store_common -lwow_core")
set(WOW_PC_REQUIRES_PRIVATE "libxxhash fmt spdlog icu-uc icu-i18n")
if(TARGET wow_sqlite)
  set(WOW_PC_LIBS "-lwow_stores -lwow_sqlite -lwow_memory -lwow_store_common -lwow_core")
  string(APPEND WOW_PC_REQUIRES_PRIVATE " sqlite3")
endif()
if(WOW_WITH_MONGO_INSTALLED)
  string(REPLACE "-lwow_stores" "-lwow_stores -lwow_mongo -lwow_mongo_log" WOW_PC_LIBS
         "${WOW_PC_LIBS}")
  string(APPEND WOW_PC_REQUIRES_PRIVATE " libmongoc-1.0")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/wow.pc.in ${CMAKE_CURRENT_BINARY_DIR}/wow.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/wow.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
