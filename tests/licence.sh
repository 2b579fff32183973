#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gpursa is licensed under Apache-2.0: LICENSE holds the licence's text, every source file
# names it in an SPDX-License-Identifier line among its first three lines, debian/copyright
# states it in Debian's machine-readable format, and README has a Licence section.
set -u
top=${GPURSA_TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 99
fail=0
bad() { echo "FAIL: $*"; fail=1; }

grep -q 'Apache License' LICENSE 2>/dev/null && grep -q 'Version 2.0, January 2004' LICENSE \
    || bad "LICENSE is missing or is not the Apache License 2.0"
if [ -d debian ]; then   # a release tarball carries no debian/
    grep -q '^License: Apache-2.0$' debian/copyright || bad "debian/copyright names no Apache-2.0 licence"
    grep -qi 'unspecified' debian/copyright && bad "debian/copyright still says unspecified"
    grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' debian/copyright \
        || bad "debian/copyright is not in the machine-readable format"
fi
grep -q '^## Licence' README.md || bad "README.md has no Licence section"

# The source files: from git where this is a checkout, else every file below the tree.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    list=$(git ls-files)
else
    list=$(find . -type f ! -path './_build*' ! -path './autom4te.cache/*' | sed 's|^\./||')
fi
n=0
for f in $list; do
    case "$f" in
        # autotools' own files (autogen.sh copies them in; a tree without git has them)
        build-aux/cudalt.sh) ;;
        build-aux/*|m4/*|autom4te.cache/*|configure|aclocal.m4|*Makefile.in) continue ;;
        bench/results/*|tests/fuzz/corpus/*|tests/fuzz/regress/*) continue ;;
        *.c|*.h|*.cu|*.cuh|*.cc|*.sh|*.py|*.am|configure.ac|*.cnf|*.cfg|*.conf|*.awk|*.gp|*.supp) ;;
        .ci/run|debian/rules|autogen.sh) ;;
        *) continue ;;
    esac
    [ -f "$f" ] || continue
    n=$((n + 1))
    head -n 3 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0' \
        || bad "$f: no SPDX-License-Identifier: Apache-2.0 line in its first three lines"
done
[ "$n" -gt 100 ] || bad "only $n source files found below $top"
[ "$fail" = 0 ] && echo "licence: LICENSE, debian/copyright, README and $n source files name Apache-2.0"
exit "$fail"
