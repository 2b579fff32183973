# SPDX-License-Identifier: Apache-2.0
# Reads `openssl speed` output for RSA and prints "BITS SIGN_PER_SECOND" per key size.
# OpenSSL 3.0 prints
#                   sign    verify    sign/s verify/s
#   rsa 2048 bits 0.000843s 0.000024s   1186.7  41621.4
# and 3.5 adds encrypt/decrypt columns (and keygen/KEM tables, ignored here):
#                    sign    verify    encrypt   decrypt   sign/s verify/s  encr./s  decr./s
#   rsa  2048 bits 0.000772s 0.000025s 0.000025s 0.000773s   1296.2  39386.4  40096.6   1293.3
# so the sign/s column is found by name in the header above the rows.
/^ +sign +verify / {
    col = 0
    for (i = 1; i <= NF; i++)
        if ($i == "sign/s")
            col = i + 3     # a row has "rsa BITS bits" before the header's first column
}
/^rsa +[0-9]+ bits / && col > 0 { print $2, $col }
