# gen_vecmath_erfc.py — the polynomials of core/ops/vecmath_kernels.h's erfc
# (and of gelu and its gradient, which use it): for a = |x| >= 1/2,
# erfc(a) = e^(-a^2) erfcx(a) with erfcx(a) = e^(a^2) erfc(a)
#   0.5 <= a <= 4:     erfcx(a) as a polynomial in t = (a - 2.25) / 1.75,
#   4 <= a <= 10.25:   a erfcx(a) as a polynomial in t = (1/a^2 - m) / h
#                      (m, h: the middle and half-width of [1/10.25^2, 1/16]).
# Both interpolate at Chebyshev points (near-minimax), printed highest degree
# first for Horner's rule. Run by hand with /usr/bin/python3 (numpy, mpmath);
# its output is pasted into the header. The reference is mpmath's erfc at 40
# digits.
import mpmath
import numpy as np
from numpy.polynomial import chebyshev as C

mpmath.mp.dps = 40


def erfcx(a):
    a = mpmath.mpf(a)
    return float(mpmath.exp(a * a) * mpmath.erfc(a))


def interpolate(f, lo, hi, deg):
    nodes = np.cos(np.pi * (np.arange(deg + 1) + 0.5) / (deg + 1))
    ys = np.array([f((lo + hi) / 2 + (hi - lo) / 2 * t) for t in nodes])
    poly = C.cheb2poly(C.chebfit(nodes, ys, deg))
    worst = 0.0
    for x in np.linspace(lo, hi, 20001):
        t = (x - (lo + hi) / 2) / ((hi - lo) / 2)
        p = 0.0
        for c in poly[::-1]:
            p = p * t + c
        worst = max(worst, abs(p - f(x)) / abs(f(x)))
    return poly, worst


def show(name, poly, worst):
    print("/* %s: max relative error %.2e */" % (name, worst))
    for c in poly[::-1]:
        print("    %.17g," % c)


show("erfcx on [0.5, 4], t = (a - 2.25) / 1.75", *interpolate(erfcx, 0.5, 4.0, 14))
lo, hi = 1 / 10.25 ** 2, 1 / 16.0
print("/* m = %.17g, h = %.17g */" % ((lo + hi) / 2, (hi - lo) / 2))
show("a erfcx(a) on [4, 10.25] in s = 1/a^2", *interpolate(
    lambda s: erfcx(1 / np.sqrt(s)) / np.sqrt(s), lo, hi, 6))
