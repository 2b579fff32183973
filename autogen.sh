#!/bin/sh
# Regenerate the build system: ./autogen.sh && ./configure && make
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
autoreconf -fi
# automake does not install its TAP driver by itself; the Check suites report through it.
cp -f "$(automake --print-libdir)/tap-driver.sh" build-aux/tap-driver.sh
# tests.am runs the shell tests (*.sh) through the plain test driver.
cp -f "$(automake --print-libdir)/test-driver" build-aux/test-driver
