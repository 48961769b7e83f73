"""Exact values (mpmath, 200 bits) for the unary-function testdata files whose
expected values the triage lists as XLA approximations: for every element
outside the file's check, the input, the expected value, the exact value
rounded once to the element type, and their ULP distance.

Usage: python3 tests/stablehlo/exact_functions.py [OUTCOMES.tsv]  (from the worktree root)
With an outcomes file (XLA_PROPS_TESTDATA_OUTCOMES) it also shows the
reference's value at each file's first failing element.
"""
import re, struct, sys
import mpmath

mpmath.mp.prec = 200
D = '../shared/corpus/stablehlo-testdata/'
FILES = {
    'cosh_float32_20_20_chlo.mlir': ('f32', mpmath.cosh, 'close'),
    'sinh_float32_20_20_chlo.mlir': ('f32', mpmath.sinh, 'almost'),
    'erf_float64_20_20_chlo.mlir': ('f64', mpmath.erf, 'close'),
    'erfc_bfloat16_20_20_chlo.mlir': ('bf16', mpmath.erfc, 'close'),
    'lgamma_float16_20_20_chlo.mlir': ('f16', lambda x: mpmath.inf if x <= 0 and x == int(x) else mpmath.log(abs(mpmath.gamma(x))), 'close'),
    'lgamma_bfloat16_20_20_chlo.mlir': ('bf16', lambda x: mpmath.inf if x <= 0 and x == int(x) else mpmath.log(abs(mpmath.gamma(x))), 'almost'),
}
W = {'f16': 2, 'bf16': 2, 'f32': 4, 'f64': 8}


def decode(h, t):
    b = bytes.fromhex(h)
    w = W[t]
    out = []
    for i in range(0, len(b), w):
        u = int.from_bytes(b[i:i + w], 'little')
        if t == 'f32':
            out.append(struct.unpack('<f', struct.pack('<I', u))[0])
        elif t == 'f64':
            out.append(struct.unpack('<d', struct.pack('<Q', u))[0])
        elif t == 'f16':
            out.append(struct.unpack('<e', struct.pack('<H', u))[0])
        else:
            out.append(struct.unpack('<f', struct.pack('<I', u << 16))[0])
    return out


def round_to(x, t):
    """x (mpf) rounded once to t, as a Python float."""
    if mpmath.isinf(x):
        return float(x)
    if t == 'f64':
        return float(x)
    bits = {'f32': 24, 'f16': 11, 'bf16': 8}[t]
    emin = {'f32': -126, 'f16': -14, 'bf16': -126}[t]
    if x == 0:
        return 0.0
    e = int(mpmath.floor(mpmath.log(abs(x), 2)))
    q = mpmath.mpf(2) ** (max(e, emin) - bits + 1)
    r = mpmath.nint(x / q) * q  # nint: nearest, ties to even
    big = {'f32': 3.4028234663852886e38, 'f16': 65504.0, 'bf16': 3.3895313892515355e38}[t]
    half = {'f32': 2.0 ** 103, 'f16': 16.0, 'bf16': 2.0 ** 119}[t]  # half an ULP at the top
    if abs(r) > big or abs(x) >= big + half:
        return float('inf') if x > 0 else float('-inf')
    return float(r)


def ordinal(x, t):
    if t == 'f64':
        u = struct.unpack('<Q', struct.pack('<d', x))[0]
        n = 64
    else:
        u = struct.unpack('<I', struct.pack('<f', x))[0]
        if t in ('f16', 'bf16'):
            u = (struct.unpack('<H', struct.pack('<e', x))[0] if t == 'f16' else u >> 16)
            n = 16
        else:
            n = 32
    return u if u >> (n - 1) == 0 else -(u & ((1 << (n - 1)) - 1))


def main():
    outcomes = {}
    if len(sys.argv) > 1:
        outcomes = {l.split('\t')[0]: l.strip() for l in open(sys.argv[1])}
    for f, (t, fn, kind) in FILES.items():
        s = open(D + f).read()
        blobs = re.findall(r'dense<"0x([0-9A-Fa-f]+)">', s)
        x, e = decode(blobs[0], t), decode(blobs[1], t)
        worst, bad = 0, []
        for i, (xi, ei) in enumerate(zip(x, e)):
            ex = round_to(fn(mpmath.mpf(xi)), t)
            if ex == ei or (ex != ex and ei != ei):
                continue
            u = abs(ordinal(ex, t) - ordinal(ei, t)) if ex == ex and ei == ei else None
            outside = (u is None or u > 3) if kind == 'close' else abs(ex - ei) > 1e-3
            worst = max(worst, u or 0)
            if outside:
                bad.append(f'[{i}] x={xi!r}: expected {ei!r}, exact {ex!r}, {u} ULP')
        print(f'{f}: {len(bad)} elements outside the check (worst {worst} ULP from the exact value)')
        for b in bad:
            print('   ', b)
        if f in outcomes:
            print('    reference:', outcomes[f].split('\t', 1)[1][:220])


main()
