# What `cmake --install` puts in place beside the programs (their own
# rules are in daemon/ and client/, the unit's in systemd/), in
# GNUInstallDirs places below the prefix:
#   share/bash-completion/completions/fmuctl   fmuctl's completion
#   share/doc/fmud/                            README, docs/, the protocol,
#                                              the libfmud example
#   share/fmud/examples/                       the example scenarios, .ssp
#                                              and folder forms, with their FMUs
#   SYSCONFDIR/fmud/fmud.conf                  configs/fmud.conf, allowing
#                                              the installed examples
# The examples' FMUs are the project's test FMUs (configs/CMakeLists.txt):
# they are built, and installed, with FMUD_TESTS or FMUD_EXAMPLES.
install(FILES ${CMAKE_CURRENT_LIST_DIR}/fmuctl.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME fmuctl)

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/proto/PROTOCOL.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md")
install(FILES ${PROJECT_SOURCE_DIR}/client/examples/remote_master.c
        ${PROJECT_SOURCE_DIR}/client/examples/fmi_master.c
        ${PROJECT_SOURCE_DIR}/client/examples/rig.c
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# The installed config allows loads from the installed examples (so that
# `fmuctl run PREFIX/share/fmud/examples/msd.ssp` works against the
# service); the one in the tree stays as it is.
file(READ ${PROJECT_SOURCE_DIR}/configs/fmud.conf _conf)
set(_anchor "\n#allow = /srv/fmud\n")
if(FMUD_TESTS OR FMUD_EXAMPLES)
        string(FIND "${_conf}" "${_anchor}" _at)
        if(_at LESS 0)
                message(FATAL_ERROR "configs/fmud.conf: no '#allow = /srv/fmud' line to put the examples' allow before")
        endif()
        string(REPLACE "${_anchor}" "\nallow = ${CMAKE_INSTALL_FULL_DATADIR}/fmud/examples${_anchor}"
                _conf "${_conf}")
        install(DIRECTORY ${CMAKE_BINARY_DIR}/configs/examples/
                DESTINATION ${CMAKE_INSTALL_DATADIR}/fmud/examples)
endif()
file(WRITE ${CMAKE_BINARY_DIR}/packaging/fmud.conf "${_conf}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/configs/fmud.conf)
# Where fmud reads it (FMUD_CONFIG_FILE): /etc/fmud for the prefix /usr.
install(FILES ${CMAKE_BINARY_DIR}/packaging/fmud.conf DESTINATION ${FMUD_INSTALL_CONFDIR})

# The Python client (client/python/fmud, docs/python.md), where Debian's
# python3 finds it: PREFIX/lib/python3/dist-packages/fmud, so
# /usr/lib/python3/dist-packages/fmud in the package. Sources only: Python
# compiles them itself, and a package ships no bytecode.
set(FMUD_PYTHON_DIR lib/python3/dist-packages CACHE STRING
        "Where the fmud Python package is installed, relative to the prefix")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/client/python/fmud DESTINATION ${FMUD_PYTHON_DIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/client/python/examples/two_runs.py
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
