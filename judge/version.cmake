# Writes OUT (version.cpp) from version.cpp.in with the commit of SRC and a dirty flag. Runs at every build;
# configure_file rewrites OUT only when its content changes, so nothing recompiles needlessly.
# Read-only git commands (no index refresh: --no-optional-locks).
set(SOLGEMM_GIT_COMMIT "unknown")
set(SOLGEMM_GIT_DIRTY "false")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SRC} rev-parse HEAD OUTPUT_VARIABLE _sha RESULT_VARIABLE _rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_rc EQUAL 0 AND _sha)
    set(SOLGEMM_GIT_COMMIT "${_sha}")
    execute_process(COMMAND ${GIT_EXECUTABLE} --no-optional-locks -C ${SRC} status --porcelain
                    OUTPUT_VARIABLE _st RESULT_VARIABLE _rc2 OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_rc2 EQUAL 0 AND NOT _st STREQUAL "")
      set(SOLGEMM_GIT_DIRTY "true")
    endif()
  endif()
endif()
configure_file(${IN} ${OUT} @ONLY)
