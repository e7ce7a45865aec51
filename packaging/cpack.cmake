# The Debian package (scripts/package builds it from a release build):
# CPack's DEB generator over the install rules, configured for the FHS
# places a Debian package uses (scripts/package passes -DCMAKE_INSTALL_PREFIX=/usr
# -DFMUD_DEBIAN=ON: /usr/bin, /usr/lib/<multiarch>, /etc/fmud,
# /lib/systemd/system). CPack rather than debian/ with debhelper: the
# install rules are already complete and tested (tests/install), the
# package is one binary package built from a CMake release tree, and CPack
# needs no second description of what goes where; the maintainer scripts
# are debhelper's own snippets for a service (packaging/debian/), and
# dpkg-shlibdeps computes the dependencies.
option(FMUD_DEBIAN "Install the files only a Debian package carries (changelog.Debian.gz)" OFF)
# A placeholder address: a package that leaves this site sets its own
# (-DFMUD_DEB_MAINTAINER="Name <address>").
set(FMUD_DEB_MAINTAINER "fmud maintainers <fmud@example.org>" CACHE STRING
        "The Debian package's Maintainer field")

# /usr/share/doc/fmud/copyright belongs to every install; the Debian
# changelog only to the package.
install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
if(FMUD_DEBIAN)
        set(_cl ${CMAKE_BINARY_DIR}/packaging/changelog.Debian)
        configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/changelog.in ${_cl} @ONLY)
        # gzip -n: no name or time stamp, so that the package builds the same twice.
        install(CODE "execute_process(COMMAND gzip -9nf \"${_cl}\" -c
                OUTPUT_FILE \"${_cl}.gz\" COMMAND_ERROR_IS_FATAL ANY)")
        install(FILES ${_cl}.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
        # What lintian reports that the package keeps, each with its reason.
        install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/lintian-overrides
                DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME fmud)
endif()

execute_process(COMMAND dpkg --print-architecture OUTPUT_VARIABLE _deb_arch
        OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)

# Maintainer scripts and conffiles, with the installed paths filled in.
set(_ctl ${CMAKE_BINARY_DIR}/packaging/control)
set(FMUD_SYSUSERS_FILE ${CMAKE_INSTALL_PREFIX}/lib/sysusers.d/fmud.conf)
set(FMUD_TMPFILES_FILE ${CMAKE_INSTALL_PREFIX}/lib/tmpfiles.d/fmud.conf)
set(FMUD_PYTHON_FULL_DIR ${CMAKE_INSTALL_PREFIX}/${FMUD_PYTHON_DIR})
foreach(f postinst prerm postrm conffiles triggers)
        configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/${f}.in ${_ctl}/${f} @ONLY
                FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()
file(CHMOD ${_ctl}/conffiles ${_ctl}/triggers PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fmud)
set(CPACK_PACKAGE_VENDOR fmud)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "co-simulation server for FMI 2.0 and 3.0 FMUs")
set(CPACK_PACKAGE_DESCRIPTION "fmud hosts FMI 2.0 and 3.0 Co-Simulation FMUs, each instance in its
own sandboxed worker process, couples them through shared memory and
runs them as fast as possible or paced to real time. It is driven over
ZeroMQ by fmuctl, its command-line client, or by programs using libfmud
or its Python client. This package holds the daemon and its systemd
service, fmuctl, libfmud with its header and pkg-config file, the Python
package fmud, and example scenarios.")
set(CPACK_PACKAGE_CONTACT "${FMUD_DEB_MAINTAINER}")
# Absolute destinations (/etc/fmud, /lib/systemd/system) land in the package.
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${FMUD_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
if(_deb_arch)
        set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${_deb_arch})
endif()
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# systemd: systemd-sysusers and systemd-tmpfiles in postinst, the service.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "systemd")
# The Python client (/usr/lib/python3/dist-packages/fmud) needs Debian's
# python3 with pyzmq and msgpack, the daemon none of them: recommended.
# NumPy gives arrays instead of lists; the example plots with matplotlib.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-zmq, python3-msgpack")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-numpy, python3-matplotlib")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
        ${_ctl}/postinst ${_ctl}/prerm ${_ctl}/postrm ${_ctl}/conffiles ${_ctl}/triggers)
include(CPack)
