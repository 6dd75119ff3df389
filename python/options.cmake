# SPDX-License-Identifier: MIT
# PROCTIMES_PYTHON: the `proctimes` Python module (python/). On by default for a
# top-level, unsanitized build when pybind11 (Debian pybind11-dev) and Python 3's
# headers (python3-dev) are found; off otherwise, with a message saying why.
#
# The module is for Debian's /usr/bin/python3: Python3_EXECUTABLE defaults to it
# so that CMake does not pick another python3 that comes first on PATH (a pyenv
# build, a virtualenv) whose ABI or site directories differ. Pass
# -DPython3_EXECUTABLE=... to build for another interpreter.
set(proctimes_python_default OFF)
set(proctimes_python_why "")
if(DEFINED PROCTIMES_PYTHON AND NOT PROCTIMES_PYTHON)
  # Turned off by the caller: nothing to look for.
elseif(NOT PROCTIMES_TOP_LEVEL AND NOT PROCTIMES_PYTHON)
  set(proctimes_python_why "not the top-level project (set PROCTIMES_PYTHON=ON to build it)")
elseif(PROCTIMES_SANITIZE AND NOT PROCTIMES_PYTHON)
  # A sanitized extension loads only into an interpreter that has the
  # sanitizer's runtime preloaded (LD_PRELOAD); asked for explicitly, it is built.
  set(proctimes_python_why "sanitizer build (PROCTIMES_SANITIZE=${PROCTIMES_SANITIZE}; -DPROCTIMES_PYTHON=ON builds it anyway)")
else()
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The Python interpreter the proctimes module is built for")
  endif()
  find_package(Python3 3.8 COMPONENTS Interpreter Development.Module QUIET)
  find_package(pybind11 2.6 CONFIG QUIET)
  if(NOT Python3_Development.Module_FOUND)
    set(proctimes_python_why "Python 3 headers not found (apt-get install python3-dev)")
  elseif(NOT pybind11_FOUND)
    set(proctimes_python_why "pybind11 not found (apt-get install pybind11-dev)")
  else()
    set(proctimes_python_default ON)
  endif()
endif()
option(PROCTIMES_PYTHON "Build the proctimes Python module (pybind11)" ${proctimes_python_default})
if(PROCTIMES_PYTHON AND NOT proctimes_python_default AND proctimes_python_why)
  message(FATAL_ERROR "PROCTIMES_PYTHON=ON, but: ${proctimes_python_why}")
elseif(NOT PROCTIMES_PYTHON AND proctimes_python_why)
  message(STATUS "proctimes: Python module not built: ${proctimes_python_why}")
elseif(NOT PROCTIMES_PYTHON)
  # A cached choice (option() keeps the first value): pass -DPROCTIMES_PYTHON=ON
  # after installing pybind11-dev and python3-dev to build it.
  message(STATUS "proctimes: Python module not built (PROCTIMES_PYTHON=OFF)")
endif()
