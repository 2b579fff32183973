#!/bin/sh
# Install dependencies, build gpursa and run the whole test suite (README's test command).
set -e
cd "$(dirname "$0")/.."
tests/install-deps.sh
./autogen.sh
mkdir -p _build && cd _build
../configure ${GPURSA_CONFIGURE_FLAGS:-}
make -j"$(nproc)"
make -j"$(nproc)" check || { cat tests/*/test-suite.log 2>/dev/null; exit 1; }
