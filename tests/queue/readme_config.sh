#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# README.md's Configuration table and the key list in conf/openssl.cnf's gpursa
# section name the keys of the code's table (queue/gpursa_config.c, printed by
# config_keys), in its order, with its defaults. In README a default in
# parentheses, such as "(off)", stands for the empty value.
set -u
top=${GPURSA_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
keys=${CONFIG_KEYS:-./config_keys}
tmp=${TMPDIR:-/tmp}/gpursa-readme-config-$$
mkdir -p "$tmp" || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

"$keys" > "$tmp/table" || { echo "FAIL: $keys exited $?"; exit 1; }
cut -f1,2 "$tmp/table" > "$tmp/code"
test -s "$tmp/code" || { echo "FAIL: the code's table is empty"; exit 1; }

# README: the rows of the first table after "## Configuration"
awk -F'|' '
    /^## / { in_cfg = ($0 == "## Configuration") }
    in_cfg && /^\| *`/ { seen = 1
        key = $2; dflt = $3
        gsub(/[` ]/, "", key); gsub(/`/, "", dflt)
        sub(/^ +/, "", dflt); sub(/ +$/, "", dflt)
        if (dflt ~ /^\(.*\)$/) dflt = ""
        print key "\t" dflt; next }
    seen && !/^\|/ { exit }
' "$top/README.md" > "$tmp/readme"
if ! diff -u "$tmp/code" "$tmp/readme" > "$tmp/diff"; then
    echo "FAIL: README.md's Configuration table differs from the code's (- code, + README):"
    cat "$tmp/diff"
    fail=1
fi

# openssl.cnf: the "# key = default" lines after "Every key below"
awk '
    /Every key below/ { on = 1; next }
    on && /^\[/ { exit }
    on && /^# [a-z][a-z0-9_]* =/ {
        line = substr($0, 3); key = line; sub(/ =.*/, "", key)
        dflt = line; sub(/^[^=]*= ?/, "", dflt); sub(/ .*/, "", dflt)
        print key "\t" dflt }
' "$top/conf/openssl.cnf" > "$tmp/cnf"
if ! diff -u "$tmp/code" "$tmp/cnf" > "$tmp/diff"; then
    echo "FAIL: conf/openssl.cnf's key list differs from the code's (- code, + openssl.cnf):"
    cat "$tmp/diff"
    fail=1
fi

test $fail -eq 0 && echo "PASS: README.md and conf/openssl.cnf list the $(wc -l < "$tmp/code") keys"
exit $fail
