# SPDX-License-Identifier: Apache-2.0
# Shared by the tests/provider/*_cli.sh scripts (source it): skip without the
# build-tree module, a temp dir to work in, the provider options and fail().
OPENSSL=${OPENSSL:-openssl}
if [ -z "${OPENSSL_MODULES:-}" ] || [ ! -e "$OPENSSL_MODULES/gpursa.so" ]; then
    echo "SKIP: OPENSSL_MODULES does not hold gpursa.so" >&2
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# "?provider=gpursa" prefers gpursa; a hard "provider=gpursa" would also
# refuse the default provider's file loader and decoders for key.pem
G="-provider gpursa -provider default -propquery ?provider=gpursa"
fail() { echo "FAIL: $*" >&2; exit 1; }
