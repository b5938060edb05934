# Compiles C and C++ through ccache when it is installed (TRELLIS_CCACHE, on by default), with its
# cache outside the tree (ccache's default, ~/.cache/ccache, or $CCACHE_DIR), so that a clean clone
# builds from what an earlier build of the same code compiled.
#
# base_dir is the source tree: ccache hashes the paths under it as relative ones, and with
# hash_dir off it does not hash the build directory either, so a clone in another directory hits
# the same entries. (What would still differ per clone is kept off the command lines: the tests'
# program paths live in one generated file, build_paths.cc, and the unity batches include their
# files by relative paths: cmake/relocatable_unity.cmake.) Assembler files are not cached: the
# files they embed with .incbin are not seen by ccache's hash.
option(TRELLIS_CCACHE "Compile through ccache when it is installed" ON)
find_program(TRELLIS_CCACHE_PROGRAM ccache)
if(TRELLIS_CCACHE AND TRELLIS_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(trellis_launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}
                       CCACHE_NOHASHDIR=true ${TRELLIS_CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${trellis_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${trellis_launcher})
  message(STATUS "Compiling through ${TRELLIS_CCACHE_PROGRAM} (TRELLIS_CCACHE=OFF to stop)")
endif()
