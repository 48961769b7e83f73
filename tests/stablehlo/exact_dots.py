"""Exact complex dot results (Python fractions) for the dot_general testdata files,
compared with their expected values: the worst ULP distance per file.

Usage: python3 tests/stablehlo/exact_dots.py OUTCOMES.tsv (run from the worktree root)
"""
import re,struct,sys
from fractions import Fraction as F
D='../shared/corpus/stablehlo-testdata/'
def parse_dense(txt):
    # returns flat list of complex tuples or reals as Fractions
    txt=txt.strip()
    if txt.startswith('"0x'): return None
    toks=re.findall(r'\(([^(),]+),([^(),]+)\)|([-+0-9.eE]+|true|false|0x[0-9A-F]+)',txt)
    out=[]
    for a,b,c in toks:
        if a: out.append((F(float(a)),F(float(b))))
        else: out.append((F(float(c)),F(0)))
    return out
def f32(x): return struct.unpack('<f',struct.pack('<f',float(x)))[0]
def rnd(x,t):
    return f32(x) if t=='f32' else float(x)
def bits(x,t):
    return struct.unpack('<I',struct.pack('<f',x))[0] if t=='f32' else struct.unpack('<Q',struct.pack('<d',x))[0]
def ulp(a,b,t):
    def o(x):
        bb=bits(x,t); n=32 if t=='f32' else 64
        return bb if bb>>(n-1)==0 else -(bb&((1<<(n-1))-1))
    return abs(o(a)-o(b))
outs={l.split('\t')[0]:l for l in open(sys.argv[1])}
for f in sorted(outs):
    if not (f.startswith('dot_general') and 'complex' in f): continue
    s=open(D+f).read()
    consts=re.findall(r'constant dense<(.*?)> : tensor<([0-9x]+)x(\w+|complex<f\d\d>)>',s)
    if len(consts)<3: print(f,'skip',len(consts)); continue
    vals=[parse_dense(c[0]) for c in consts]
    def rin(x,ty):
        import math
        if ty in ('f32','complex<f32>'): return F(f32(x))
        if ty=='f16':
            v=float(x); 
            import struct as st
            return F(st.unpack('<e',st.pack('<e',v))[0])
        if ty=='bf16':
            b=struct.unpack('<I',struct.pack('<f',f32(x)))[0]
            # round to nearest even on 16 bits (f32 first: double rounding negligible here)
            r=((b+0x7FFF+((b>>16)&1))>>16)<<16
            return F(struct.unpack('<f',struct.pack('<I',r))[0])
        return x
    vals=[[(rin(a,c[2]),rin(b,c[2])) for a,b in v] for v,c in zip(vals,consts)]
    if any(v is None for v in vals): print(f,'hex'); continue
    (A,B,E)=vals[0],vals[1],vals[2]
    t='f32' if 'complex<f32>' in consts[2][2] else 'f64'
    # 4x3 . 3x6
    worst=(0,None)
    for i in range(4):
        for j in range(6):
            re_=sum(A[i*3+k][0]*B[k*6+j][0]-A[i*3+k][1]*B[k*6+j][1] for k in range(3))
            im_=sum(A[i*3+k][0]*B[k*6+j][1]+A[i*3+k][1]*B[k*6+j][0] for k in range(3))
            e=E[i*6+j]
            for part,(x,ev) in (('re',(re_,e[0])),('im',(im_,e[1]))):
                u=ulp(rnd(x,t),rnd(ev,t),t)
                if u>worst[0]: worst=(u,(i*6+j,part,rnd(x,t),float(ev)))
    m=re.search(r'\[(\d+)\]: saw \((\S+) \(0x\w+\), (\S+) \(',outs[f])
    print(f, 'worst ULP of expected vs exact', worst, 'ours at first fail', m.groups() if m else None)
