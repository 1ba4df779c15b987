# SPDX-License-Identifier: MIT
# The man pages as they are installed, made from docs/man (cmake -P):
#   cmake -DCW_MAN_SRC=docs/man -DCW_MAN_OUT=DIR -DCW_MAN_VERSION=X.Y.Z
#         [-DCW_MAN_DATE=YYYY-MM-DD] -P cmake/cw_man_pages.cmake
# writes DIR/man1/*.1 and DIR/man3/*.3, a manual tree:
#  - each page's .TH gets the date and "cw VERSION" of this build, whatever
#    the source's .TH says (the sources carry the date "" and the source
#    "cw", which docs/man/check.sh insists on, so that nobody types a
#    version by hand and man -l on a source page shows no placeholder);
#  - every other name in a page's NAME section becomes a symbolic link to
#    the page in the same directory (how Debian installs aliases), so that
#    `man cw_now_ns` opens cw_wait(3) from any manual tree. NAME is the one
#    list: whatis and apropos index it already, so a name that is missing
#    there is missing from both.
# The date, so that the same source gives the same pages: CW_MAN_DATE if
# given, else SOURCE_DATE_EPOCH, else the date of the source tree's commit,
# else the newest page's modification time (a tarball keeps it). All in UTC.
cmake_minimum_required(VERSION 3.25)
foreach(v CW_MAN_SRC CW_MAN_OUT CW_MAN_VERSION)
  if(NOT ${v})
    message(FATAL_ERROR "cw_man_pages.cmake: -D${v}=... is required")
  endif()
endforeach()

file(GLOB pages "${CW_MAN_SRC}/*.1" "${CW_MAN_SRC}/*.3")
list(SORT pages)
if(NOT pages)
  message(FATAL_ERROR "cw_man_pages.cmake: no *.1 or *.3 in ${CW_MAN_SRC}")
endif()

if(NOT CW_MAN_DATE)
  set(epoch "$ENV{SOURCE_DATE_EPOCH}")
  get_filename_component(top "${CW_MAN_SRC}/../.." ABSOLUTE)
  # Only cw's own checkout: a copy of cw inside another project's repository
  # must not take that project's commit date.
  if(NOT epoch AND EXISTS "${top}/.git")
    find_program(CW_GIT git)
    if(CW_GIT)
      execute_process(COMMAND "${CW_GIT}" -C "${top}" log -1 --format=%ct
                      OUTPUT_VARIABLE epoch OUTPUT_STRIP_TRAILING_WHITESPACE
                      RESULT_VARIABLE rc ERROR_QUIET)
      if(NOT rc EQUAL 0)
        set(epoch "")
      endif()
    endif()
  endif()
  if(NOT epoch)
    set(epoch 0)
    foreach(page ${pages})
      file(TIMESTAMP "${page}" t "%s" UTC)
      if(t GREATER epoch)
        set(epoch ${t})
      endif()
    endforeach()
  endif()
  if(NOT epoch MATCHES "^[0-9]+$")
    message(FATAL_ERROR "cw_man_pages.cmake: SOURCE_DATE_EPOCH '${epoch}' is not a number of seconds")
  endif()
  # string(TIMESTAMP) formats SOURCE_DATE_EPOCH when it is set, and only then.
  set(saved "$ENV{SOURCE_DATE_EPOCH}")
  set(ENV{SOURCE_DATE_EPOCH} "${epoch}")
  string(TIMESTAMP CW_MAN_DATE "%Y-%m-%d" UTC)
  set(ENV{SOURCE_DATE_EPOCH} "${saved}")
endif()

# Made afresh, so that a page removed from the source leaves no copy or link.
file(REMOVE_RECURSE "${CW_MAN_OUT}/man1" "${CW_MAN_OUT}/man3")
file(MAKE_DIRECTORY "${CW_MAN_OUT}/man1" "${CW_MAN_OUT}/man3")

set(names "")
foreach(page ${pages})
  get_filename_component(file "${page}" NAME)
  string(REGEX REPLACE "^.*\\.([0-9])$" "\\1" section "${file}")
  string(REGEX REPLACE "\\.[0-9]$" "" self "${file}")
  list(APPEND names "${section}/${self}")
endforeach()

foreach(page ${pages})
  get_filename_component(file "${page}" NAME)
  string(REGEX REPLACE "^.*\\.([0-9])$" "\\1" section "${file}")
  string(REGEX REPLACE "\\.[0-9]$" "" self "${file}")
  file(READ "${page}" text)
  if(text MATCHES "(^|\n)\\.so[ \t]")
    message(FATAL_ERROR "${page}: an alias page (.so): aliases are the names in a page's NAME "
                        "section, installed as links; delete this file and list the name there")
  endif()

  # .TH TITLE SECTION DATE SOURCE MANUAL: DATE and SOURCE come from the build.
  string(REGEX MATCH "\n\\.TH [^\n]*" th "${text}")
  if(NOT th)
    message(FATAL_ERROR "${page}: no .TH line")
  endif()
  string(REGEX REPLACE "^\n\\.TH +([^ ]+) +([^ ]+) +(\"[^\"]*\"|[^ \"]+) +(\"[^\"]*\"|[^ \"]+)"
         "\n.TH \\1 \\2 ${CW_MAN_DATE} \"cw ${CW_MAN_VERSION}\"" new_th "${th}")
  if(new_th STREQUAL th)
    message(FATAL_ERROR "${page}: cannot read '${th}' as .TH TITLE SECTION DATE SOURCE MANUAL")
  endif()
  string(REPLACE "${th}" "${new_th}" text "${text}")
  file(WRITE "${CW_MAN_OUT}/man${section}/${file}" "${text}")

  # NAME: "name, name, ... \- what they do", possibly over several lines.
  string(FIND "${text}" "\n.SH NAME\n" at)
  if(at LESS 0)
    message(FATAL_ERROR "${page}: no NAME section")
  endif()
  math(EXPR at "${at} + 10")
  string(SUBSTRING "${text}" ${at} -1 rest)
  string(FIND "${rest}" "\n.SH " end)
  string(SUBSTRING "${rest}" 0 ${end} rest)
  string(REGEX REPLACE "[ \n]\\\\-([ \n].*)?$" "" list "${rest}")
  if(list STREQUAL rest)
    message(FATAL_ERROR "${page}: its NAME section has no ' \\- ' after the names")
  endif()
  string(REPLACE "\\-" "-" list "${list}")
  string(REPLACE "\n" " " list "${list}")
  string(REPLACE "," ";" list "${list}")
  set(found_self FALSE)
  foreach(name ${list})
    string(STRIP "${name}" name)
    if(NOT name MATCHES "^[A-Za-z0-9_.+-]+$")
      message(FATAL_ERROR "${page}: '${name}' in NAME is not a name a link can carry")
    endif()
    if(name STREQUAL self)
      set(found_self TRUE)
      continue()
    endif()
    if("${section}/${name}" IN_LIST names)
      message(FATAL_ERROR "${page}: ${name}(${section}) in NAME is already a page or a link")
    endif()
    list(APPEND names "${section}/${name}")
    file(CREATE_LINK "${file}" "${CW_MAN_OUT}/man${section}/${name}.${section}" SYMBOLIC)
  endforeach()
  if(NOT found_self)
    message(FATAL_ERROR "${page}: its NAME section does not name ${self}")
  endif()
endforeach()
