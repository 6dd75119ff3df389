# SPDX-License-Identifier: MIT
# `proctimes top`'s full-screen view (Linux): the arrangement of frames into
# rows (view.cpp, pure), the text made safe for a terminal, and the drawing
# and keys on ncurses (Debian's libncurses-dev), wide-character build
# (ncursesw) so that UTF-8 names take their real widths.
set(CURSES_NEED_NCURSES TRUE)
set(CURSES_NEED_WIDE TRUE)
find_package(Curses REQUIRED)
# (screen.cpp, the view's entry point, is listed with the command's other top/ files.)
target_sources(proctimes_cli PRIVATE top/view.cpp top/text.cpp top/cells.cpp top/draw.cpp top/draw_panes.cpp
                                     top/keys.cpp top/cgroups.cpp top/fatal.cpp)
target_include_directories(proctimes_cli PRIVATE ${CURSES_INCLUDE_DIRS})
target_compile_options(proctimes_cli PRIVATE ${CURSES_CFLAGS})
target_link_libraries(proctimes_cli PRIVATE ${CURSES_LIBRARIES})
