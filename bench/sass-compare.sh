#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/sass-compare.sh REV [ARCH] - the machine code of every kernel of gpu/kernels_*.cu
# in this working tree against commit REV, per kernel, without a GPU: for a change that is
# meant to leave the kernels as they are (a refactoring). Needs nvcc and python3 only: each
# file is compiled by nvcc to a cubin for sm_ARCH (default 90) with the build's flags and
# ptxas -v, and for each function (matched by role, since template instantiation renames
# the COOP kernels) it prints its instructions and whether its machine code (the .text
# bytes: registers, scheduling and branch offsets included) is the same, and whether
# ptxas's registers, stack, spills and barriers and the local, shared and constant memory
# it reserves are. It exits 0 when everything is the same. A difference is for a
# disassembler (cuobjdump -sass or nvdisasm of a matching CUDA version) to explain.
# Scratch files go to SASS_TMP (default: a new folder under /tmp, removed at the end).
set -eu
rev=${1:?usage: sass-compare.sh REV [ARCH]}
arch=${2:-90}
top=$(cd "$(dirname "$0")/.." && pwd)
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null 2>&1 || nvcc=/usr/local/cuda/bin/nvcc
tmp=${SASS_TMP:-$(mktemp -d /tmp/sass-compare.XXXXXX)}
[ -n "${SASS_TMP:-}" ] || trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ref/src" "$tmp/new"
git -C "$top" archive "$rev" | tar -x -C "$tmp/ref/src"
cubins() { # SRCTREE OUTDIR
    for cu in "$1"/gpu/kernels_*.cu; do
        b=$(basename "$cu" .cu)
        echo "$cu" "$2/$b"
    done | xargs -P 2 -n 2 sh -c '"$0" -gencode=arch=compute_'"$arch"',code=sm_'"$arch"' -std=c++17 -O3 \
        -I"$(dirname "$1")/.." -cubin -Xptxas -v -o "$2.cubin" "$1" >"$2.log" 2>&1 || echo "nvcc failed: $1"' "$nvcc"
}
cubins "$tmp/ref/src" "$tmp/ref"
cubins "$top" "$tmp/new"
python3 - "$tmp/ref" "$tmp/new" <<'EOF'
import os, re, struct, sys
ROLES = ['gpursa_coop_kernel', 'gpursa_epow_factor_kernel', 'gpursa_epow_check_kernel', 'gpursa_fp_mul_cold',
         'gpursa_nst_blind_kernel', 'gpursa_nst_unblind_kernel']
def role(name):
    return next((r for r in ROLES if r in name), name)
def sections(path):
    d = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
    sh = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize) for i in range(shnum)]
    names = sh[shstrndx][4]
    out = {}
    for s in sh:
        name = d[names + s[0]:d.index(b'\0', names + s[0])].decode()
        out[name] = d[s[4]:s[4] + s[5]] if s[1] != 8 else b'\0' * s[5]
    return out
def info(b):
    """a function's .nv.info records, the section index in EIATTR_PARAM_CBANK (10) left out"""
    out, i = [], 0
    while i < len(b):
        fmt, attr = b[i], b[i + 1]
        n = struct.unpack_from('<H', b, i + 2)[0] if fmt == 4 else 2 if fmt == 3 else 0
        v = b[i + 4:i + 4 + n] if fmt == 4 else b[i + 2:i + 4] if fmt == 3 else b''
        out.append((attr, v[4:] if attr == 10 else v))
        i += (4 + n) if fmt == 4 else 4 if fmt == 3 else 2
    return out
def funcs(path):
    r = {}
    for n, b in sections(path).items():
        for pre in ('.text.', '.nv.info.', '.nv.shared.', '.nv.local.', '.nv.constant0.'):
            if n.startswith(pre):
                r.setdefault(role(n[len(pre):]), {})[pre] = info(b) if pre == '.nv.info.' else b
    return r
def ptxas(path):
    r, cur = {}, None
    for line in open(path):
        m = re.search(r"(?:Function properties for|Compiling entry function) '?([^' ]+)", line)
        if m:
            cur = role(m.group(1).strip("'")); r.setdefault(cur, ''); continue
        if cur and ('stack frame' in line or 'Used' in line):
            r[cur] += ' ' + ' '.join(line.split(':', 1)[-1].split())
    return r
ref, new = sys.argv[1], sys.argv[2]
same = True
for f in sorted(x[:-6] for x in os.listdir(ref) if x.endswith('.cubin')):
    print(f)
    if not os.path.exists(os.path.join(new, f + '.cubin')):
        print('  not built here'); same = False; continue
    a, b = funcs(os.path.join(ref, f + '.cubin')), funcs(os.path.join(new, f + '.cubin'))
    pa, pb = ptxas(os.path.join(ref, f + '.log')), ptxas(os.path.join(new, f + '.log'))
    for k in sorted(k for k in set(a) | set(b) if '.text.' in a.get(k, b.get(k))):
        if k not in a or k not in b:
            print('  %-44s only in %s' % (k[:44], 'REV' if k in a else 'this tree')); same = False; continue
        code = a[k].get('.text.') == b[k].get('.text.')
        res = a[k] == b[k] or all(a[k].get(p) == b[k].get(p) for p in a[k] if p != '.text.')
        stats = pa.get(k) == pb.get(k)
        same &= code and res and stats
        print('  %-44s %6d instructions  code %s  resources %s' % (
            k[:44], len(a[k].get('.text.', b'')) // 16,
            'same' if code else 'DIFFERS (%d here)' % (len(b[k].get('.text.', b'')) // 16),
            'same' if res and stats else 'DIFFER: %s | %s' % (pa.get(k), pb.get(k))))
print('all the same' if same else 'differences')
sys.exit(0 if same else 1)
EOF
