#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Write the committed seed corpora of the fuzz harnesses (tests/fuzz/corpus/*)
# from the committed test keys (tests/fuzz/keys) with the openssl CLI.
# Seeds are small, valid-looking inputs in each harness's input format (see
# the comment at the top of each fuzz_*.c) so fuzzing starts past the parsers.
# Rerun after changing an input format: ./gen-corpus.sh [outdir]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/corpus}
keys=$here/keys
OPENSSL=${OPENSSL:-openssl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out"
mkdir -p "$out/decrypt" "$out/sign_params" "$out/key_import" "$out/config"

# bytes 1 2 255 ...: the bytes themselves
bytes() { local b; for b in "$@"; do printf "\\x$(printf %02x "$b")"; done; }
# Index of a word in a C array of a harness (the dictionaries and name lists).
index_of() { # file array word
    sed -n "/$2\\[\\] = {/,/};/p" "$here/$1" | grep -o '"\([^"\\]\|\\.\)*"' | sed 's/^"//; s/"$//' |
        grep -nxF -- "$3" | head -1 | cut -d: -f1 | awk '{ print $1 - 1 }'
}
md() { index_of fuzz_common.c fz_digest_names "$1"; }

pub() { "$OPENSSL" pkey -in "$keys/$1.pem" -pubout -out "$tmp/$1.pub"; }
enc() { # key outfile infile pkeyopts...
    local key=$1 outf=$2 inf=$3; shift 3
    local opts=() o
    for o in "$@"; do opts+=(-pkeyopt "$o"); done
    "$OPENSSL" pkeyutl -encrypt -pubin -inkey "$tmp/$key.pub" -in "$inf" -out "$outf" "${opts[@]}"
}
for k in rsa1024 rsa2048 rsa1024-3prime; do pub $k; done
printf 'a fuzz seed message' >"$tmp/msg"
{ printf '\003\003'; head -c 46 /dev/zero | tr '\0' 'P'; } >"$tmp/premaster"

# ---- decrypt: key flags pad oaepmd mgf1md labellen ir cv(2) nv(2) outbuf | label | ct
dec() { # name key flags pad oaepmd mgf1md ir cv nv outbuf label ctfile
    local name=$1; shift
    { bytes "$1" "$2" "$3" "$4" "$5" "${#10}" "$6" $(($7 >> 8)) $(($7 & 255)) $(($8 >> 8)) $(($8 & 255)) "$9"
      printf '%s' "${10}"; cat "${11}"; } >"$out/decrypt/$name"
}
ki=0
for k in rsa1024 rsa2048 rsa1024-3prime; do
    enc $k "$tmp/$k.pkcs1" "$tmp/msg" rsa_padding_mode:pkcs1
    enc $k "$tmp/$k.oaep" "$tmp/msg" rsa_padding_mode:oaep
    for b in 0 1; do
        dec "$k-pkcs1-b$b" $ki $b 1 255 255 0 0 0 0 "" "$tmp/$k.pkcs1"
        dec "$k-oaep-b$b" $ki $b 2 255 255 0 0 0 0 "" "$tmp/$k.oaep"
    done
    ki=$((ki + 1))
done
k=rsa1024
enc $k "$tmp/oaep256" "$tmp/msg" rsa_padding_mode:oaep rsa_oaep_md:sha256 rsa_mgf1_md:sha256 rsa_oaep_label:6c626c
dec oaep-sha256-label 0 1 2 "$(md SHA2-256)" "$(md SHA2-256)" 0 0 0 0 lbl "$tmp/oaep256"
dec oaep-sha256-label-as-name 0 2 2 "$(md SHA2-256)" "$(md SHA2-256)" 0 0 0 0 lbl "$tmp/oaep256"
dec oaep-sha256-late-params 0 5 2 "$(md SHA2-256)" "$(md SHA2-256)" 0 0 0 2 lbl "$tmp/oaep256"
enc $k "$tmp/tls" "$tmp/premaster" rsa_padding_mode:pkcs1
dec tls-premaster 0 1 3 255 255 0 $((0x0303)) 0 0 "" "$tmp/tls"
dec tls-premaster-negotiated 0 0 3 255 255 0 $((0x0303)) $((0x0302)) 0 "" "$tmp/tls"
dec tls-premaster-wrong-version 0 1 3 255 255 0 $((0x0301)) 0 0 "" "$tmp/tls"
dec pkcs1-no-implicit-rejection 0 1 1 255 255 1 0 0 0 "" "$tmp/$k.pkcs1"
dec pkcs1-short-buffer 0 1 1 255 255 0 0 0 1 "" "$tmp/$k.pkcs1"
{ printf '\000'; head -c 127 /dev/urandom; } >"$tmp/raw"
dec none-raw 0 1 0 255 255 0 0 0 0 "" "$tmp/raw"
head -c 128 /dev/zero >"$tmp/zeros"
dec pkcs1-zeros 0 1 1 255 255 0 0 0 0 "" "$tmp/zeros"
head -c 128 /dev/zero | tr '\0' '\377' >"$tmp/ones"
dec oaep-ones 0 1 2 255 255 0 0 0 0 "" "$tmp/ones"
"$OPENSSL" pkey -in "$keys/$k.pem" -noout -text | sed -n '/^modulus:/,/^publicExponent/p' |
    sed '1d;$d' | tr -d ' :\n' | sed 's/^00//' | xxd -r -p >"$tmp/n"
dec none-equal-n 0 0 0 255 255 0 0 0 0 "" "$tmp/n"
head -c 100 "$tmp/$k.oaep" >"$tmp/short"
dec oaep-short-ct 0 1 2 255 255 0 0 0 0 "" "$tmp/short"

# ---- sign_params: key flags mdidx | nparams (name type len value)* | message
word() { index_of fuzz_sign_params.c sign_words "$1"; }
# utf8 param from the dictionary: name-index 2 1 word-index
utf8w() { bytes "$(sp_name "$1")" 2 1 "$(word "$2")"; }
PAD=OSSL_SIGNATURE_PARAM_PAD_MODE DIG=OSSL_SIGNATURE_PARAM_DIGEST SALT=OSSL_SIGNATURE_PARAM_PSS_SALTLEN
MGF=OSSL_SIGNATURE_PARAM_MGF1_DIGEST
# the names in sign_param_names are macros: map them by position
sp_name() { case $1 in $PAD) echo 0;; $DIG) echo 1;; $SALT) echo 2;; $MGF) echo 3;; *) echo 7;; esac; }
digest32() { head -c 32 /dev/urandom; }
sp() { local name=$1; shift; cat >"$out/sign_params/$name"; }
for b in 0 1; do
    { bytes 0 $b 255 2; utf8w $PAD pkcs1; utf8w $DIG SHA256; digest32; } | sp pkcs1-sha256-b$b
    { bytes 0 $b 255 3; utf8w $PAD pss; utf8w $DIG SHA256; utf8w $SALT digest; digest32; } | sp pss-sha256-b$b
    { bytes 0 $((b | 2)) "$(md SHA2-256)" 1; utf8w $PAD pss; printf 'message'; } | sp digestsign-pss-b$b
done
{ bytes 1 2 "$(md SHA384)" 2; utf8w $PAD pss; utf8w $MGF SHA256; printf 'message'; } | sp digestsign-pss-mgf1-2048
{ bytes 2 2 "$(md SHA2-256)" 1; utf8w $PAD pkcs1; printf 'message'; } | sp digestsign-pkcs1-3prime
{ bytes 0 2 "$(md SHA2-256)" 1; utf8w $PAD x931; printf 'message'; } | sp digestsign-x931
{ bytes 0 0 255 1; utf8w $PAD none; printf '\000'; head -c 127 /dev/urandom; } | sp none-raw
{ bytes 0 4 255 2 0 0 4 6 0 0 0; utf8w $DIG SHA256; digest32; } | sp pss-int-pad-late
{ bytes 0 0 255 3; utf8w $PAD pss; utf8w $DIG SHA256; bytes 2 0 4 0x18 0xfc 0xff 0xff; digest32; } | sp pss-saltlen-negative
{ bytes 0 0 255 3; utf8w $PAD pss; utf8w $DIG SHA256; bytes 2 1 4 0xe8 0x03 0 0; digest32; } | sp pss-saltlen-1000
{ bytes 0 0 255 2; utf8w $PAD pss; utf8w $DIG SHA256; utf8w $SALT max; digest32; } | sp pss-missing-digest-saltmax

# ---- key_import: flags keyidx | per component (n e d p q r3 dp dq d3 qinv c2): op [operand]
ki() { local name=$1; shift; cat >"$out/key_import/$name"; }
valid="1 1 1 1 1 1 1 1 1 1 1"
{ bytes 0x18 0 $valid; printf 'import seed msg'; } | ki valid-1024-cpu
{ bytes 0x19 0 $valid; printf 'import seed msg'; } | ki valid-1024-host
{ bytes 0x19 1 $valid; printf 'import seed msg'; } | ki valid-2048-host
{ bytes 0x18 2 $valid; printf 'import seed msg'; } | ki valid-3prime
{ bytes 0x1a 0 1 1; } | ki public-only
{ bytes 0x19 0 1 1 1; } | ki n-e-d-only
{ bytes 0x19 0 1 1 2 0 100 1 1 1 1 1 1 1 1; } | ki d-bitflip
{ bytes 0x19 0 1 1 1 1 1 1 2 0 3 1 1 1 1; } | ki dp-bitflip
{ bytes 0x19 0 1 1 1 1 1 1 1 1 1 3 1; } | ki qinv-plus-one
{ bytes 0x19 0 1 1 1 8 3 1 1 1 1 1 1; } | ki p-equals-p-and-q
{ bytes 0x19 0 3 1 1 1 1 1 1 1 1 1 1 1; } | ki n-off-by-one
{ bytes 0x19 0 1 4 1 1 1 1 1 1 1 1 1; } | ki e-zero
{ bytes 0x19 0 1 7 0x10 0x00 1 1 1 1 1 1 1 1 1; } | ki e-huge
{ bytes 0x19 0 7 0x40 0x01 1 1 1 1 1 1 1 1 1 1; } | ki n-16385-bits
{ bytes 0x19 0 1 9 1 1 1 1 1 1 1 1 1; } | ki e-as-string
{ bytes 0x19 0 10 1 1 1 1 1 1 1 1 1 1; } | ki n-negative
{ bytes 0x19 0 1 1 5 1 1 1 1 1 1 1 1; } | ki d-one

# ---- config: flags npairs | (keyidx len value)*
ck() { index_of fuzz_config.c config_keys "$1"; }
cw() { index_of fuzz_config.c config_words "$1"; }
pair() { bytes "$(ck "$1")" 1 "$(cw "$2")"; }
cf() { local name=$1; shift; cat >"$out/config/$name"; }
{ bytes 4 0; } | cf env-defaults-sign
{ bytes 4 1; pair backend host; } | cf env-host-sign
{ bytes 5 1; pair backend cpu; } | cf cnf-cpu-sign
{ bytes 5 3; pair backend host; pair max_batch 1; pair max_inflight 1; } | cf cnf-host-tiny-sign
{ bytes 4 1; pair backend cuda; } | cf env-cuda-sign
{ bytes 0 1; pair max_batch 0; } | cf env-bad-max-batch
{ bytes 9 1; pair log_level 4; } | cf cnf-bad-log-level-diagnostics
{ bytes 7 2; pair log_level 3; pair backend auto; } | cf both-debug-sign
{ bytes 1 1; pair devices 0,,1; } | cf cnf-bad-devices
{ bytes 13 2; pair backend host; pair max_wait_us 0; } | cf cnf-diagnostics-host-sign
{ bytes 0 1; pair variant fast; } | cf env-variant
{ bytes 1 1; bytes "$(ck nonsense)" 4; printf 'x=\\y'; } | cf cnf-unknown-key
{ bytes 0 1; bytes "$(ck max_wait_us)" 20; printf '9%.0s' $(seq 20); } | cf env-overflow
{ bytes 4 2; pair metrics_file /tmp/gpursa-fuzz-metrics-%p.prom; pair metrics_interval_ms 10; } |
    cf env-metrics-file-sign
{ bytes 9 1; pair metrics_file /nonexistent-gpursa/m.prom; } | cf cnf-bad-metrics-folder
{ bytes 0 1; pair metrics_interval_ms 9; } | cf env-bad-metrics-interval
echo "seeds: $(find "$out" -type f | wc -l) files, $(du -sk "$out" | cut -f1) KiB in $out"
