# gen_vecmath_gelu.py — the polynomials of core/ops/vecmath_kernels.h's gelu
# and its gradient: q(u) = erfcx(u / sqrt 2) = e^(u^2/2) erfc(u / sqrt 2) for
# u = |x|, so that Phi(x) = q e^(-x^2/2) / 2 for x < 0 and 1 minus that for
# x > 0 (no cancellation on either side), as polynomials in u itself (no
# rounded u / sqrt 2, no division):
#   1/sqrt 2 <= u <= 4 sqrt 2: q in t = u - c1 (c1 the middle of the range;
#                            below it gelu uses erf's small polynomial),
#   4 sqrt 2 <= u <= 14.5:   q in t = u - c2 (past 14.5 gelu is 0 or x).
# t = u - c is exact (Sterbenz) or nearly, so the polynomial sees u's digits.
# Interpolation at Chebyshev points (near-minimax), printed highest degree
# first for Horner's rule; the error printed is that of the polynomial
# evaluated in float32 with one rounding per multiply-add, relative to q.
# Run by hand with /usr/bin/python3 (numpy, mpmath); the output is pasted
# into the header. Reference: mpmath's erfc at 40 digits.
import sys

import mpmath
import numpy as np
from numpy.polynomial import chebyshev as C

mpmath.mp.dps = 40


def q_exact(u):
    a = mpmath.mpf(u) / mpmath.sqrt(2)
    return float(mpmath.exp(a * a) * mpmath.erfc(a))


def fit(lo, hi, deg):
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    nodes = np.cos(np.pi * (np.arange(deg + 1) + 0.5) / (deg + 1))
    ys = np.array([q_exact(mid + half * t) for t in nodes])
    # in t = u - mid: rescale the Chebyshev variable's monomials by 1/half^i
    poly = C.cheb2poly(C.chebfit(nodes, ys, deg)) / half ** np.arange(deg + 1)
    coef = poly.astype(np.float32)
    worst = 0.0
    for u in np.linspace(lo, hi, 4001).astype(np.float32):
        t = np.float32(u - np.float32(mid))
        p = coef[-1]
        for c in coef[-2::-1]:
            p = np.float32(float(p) * float(t) + float(c))
        worst = max(worst, abs(float(p) - q_exact(float(u))) / q_exact(float(u)))
    return mid, coef, worst


def show(name, lo, hi, deg):
    mid, coef, worst = fit(lo, hi, deg)
    print("/* %s, degree %d, t = u - %.9g: max relative error %.2e in float */"
          % (name, deg, np.float32(mid), worst))
    for c in coef[::-1]:
        print("    %.9g" % c)


if __name__ == "__main__":
    d1 = int(sys.argv[1]) if len(sys.argv) > 1 else 14
    d2 = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    show("q on [1/sqrt 2, 4 sqrt 2]", np.sqrt(0.5), 4 * np.sqrt(2), d1)
    show("q on [4 sqrt 2, 14.5]", 4 * np.sqrt(2), 14.5, d2)
