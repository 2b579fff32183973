#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# openssl list shows gpursa (name, version, build info, status) loaded from
# conf/openssl.cnf and from -provider; a bad GPURSA_* value fails the load
# with a gpursa error naming the key and the value.
set -u
. "$(dirname "$0")/../lib.sh"
require_module
make_tmp
use_conf

ossl list -providers -verbose > "$TMP/list" 2>&1 || { cat "$TMP/list"; fail "openssl list -providers"; }
grep -q '^  gpursa$' "$TMP/list" || fail "gpursa not listed with conf/openssl.cnf"
grep -q '^  default$' "$TMP/list" || fail "default not listed with conf/openssl.cnf"
sed -n '/^  gpursa$/,/^  [a-z]/p' "$TMP/list" > "$TMP/gpursa"
for field in 'name: gpursa' 'version: [0-9]' 'build info: gpursa' 'status: active'; do
    grep -q "^    $field" "$TMP/gpursa" || { cat "$TMP/list"; fail "no '$field' for gpursa"; }
done
pass "listed through conf/openssl.cnf"

OPENSSL_CONF=/dev/null ossl list -providers -verbose -provider gpursa > "$TMP/list2" 2>&1 \
    || { cat "$TMP/list2"; fail "openssl list -providers -provider gpursa"; }
grep -q 'build info: gpursa' "$TMP/list2" || { cat "$TMP/list2"; fail "no build info with -provider"; }
grep -q 'status: active' "$TMP/list2" || fail "not active with -provider"
pass "listed through -provider gpursa"

if GPURSA_MAX_BATCH=lots ossl list -providers > "$TMP/bad" 2>&1 && grep -q '^  gpursa$' "$TMP/bad"; then
    cat "$TMP/bad"
    fail "GPURSA_MAX_BATCH=lots did not fail the load"
fi
grep -q 'invalid value "lots" for max_batch' "$TMP/bad" || { cat "$TMP/bad"; fail "error does not name key and value"; }
pass "GPURSA_MAX_BATCH=lots refused with a clear error"

GPURSA_BACKEND=cpu ossl list -providers > "$TMP/ok" 2>&1 && grep -q '^  gpursa$' "$TMP/ok" \
    || { cat "$TMP/ok"; fail "GPURSA_BACKEND=cpu did not load"; }
pass "GPURSA_BACKEND=cpu loads"
