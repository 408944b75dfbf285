# gen_vecmath_erf.py — the polynomial of core/ops/vecmath_kernels.h's erf for
# 1 <= |x| <= 4: erfcx(x) = exp(x^2) erfc(x) interpolated at Chebyshev points
# of [1, 4] (near-minimax), written as a polynomial in t = (x - 2.5) / 1.5 for
# Horner's rule, highest degree first. Run by hand with /usr/bin/python3; its
# output is pasted into the header. The reference is Python's math.erfc
# (double precision, about 1 ulp).
import math

import numpy as np
from numpy.polynomial import chebyshev as C

DEG = 12
nodes = np.cos(np.pi * (np.arange(DEG + 1) + 0.5) / (DEG + 1))
xs = 2.5 + 1.5 * nodes
ys = np.array([math.exp(x * x) * math.erfc(x) for x in xs])
cheb = C.chebfit(nodes, ys, DEG)
poly = C.cheb2poly(cheb)

# check on a dense grid, with the polynomial evaluated as the kernel does
worst = 0.0
for x in np.linspace(1.0, 4.0, 200001):
    t = (x - 2.5) / 1.5
    p = 0.0
    for c in poly[::-1]:
        p = p * t + c
    ref = math.exp(x * x) * math.erfc(x)
    worst = max(worst, abs(p - ref) / ref)
print("/* max relative error %.2e */" % worst)
for c in poly[::-1]:
    print("    %.17g," % c)
