#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Regenerate the build system: ./autogen.sh && ./configure && make
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
autoreconf -fi
# automake does not install these drivers by itself: the Check suites report through the
# TAP driver, the shell tests through test-driver (exit 77 = skip).
for f in tap-driver.sh test-driver; do
    cp -f "$(automake --print-libdir)/$f" build-aux/$f
done
# tests.am runs the shell tests (*.sh) through the plain test driver.
cp -f "$(automake --print-libdir)/test-driver" build-aux/test-driver
