# gen_vecmath_sin.py — the polynomial of core/ops/vecmath_kernels.h's sin
# and cos: sin r = r + r^3 p(r^2) on |r| <= pi/2 (a little past it: the
# kernels round x / pi before they round it to an integer), p of degree 3,
# fitted by iteratively reweighted least squares (tools/vecmath_fit.py)
# towards the minimax of the relative error of sin r, coefficients rounded
# to float.
# Run by hand with /usr/bin/python3; its output is pasted into the header.
import numpy as np

from vecmath_fit import minimax_fit

DEG = 3
R = np.pi / 2 * 1.0001
N = 4000
r = (np.cos(np.pi * (np.arange(N) + 0.5) / N) + 1) / 2 * R + 1e-6
target = (np.sin(r) - r) / r**3        # what p should be
scale = r**3 / np.sin(r)               # an error in p, relative to sin r
powers = np.vstack([(r * r)**k for k in range(DEG + 1)]).T
coef = minimax_fit(powers, target, scale, 200)

# the fit's own error with the float coefficients, in double
coef32 = [np.float32(c) for c in coef]
xs = np.linspace(1e-4, R, 200001)
p = np.zeros_like(xs)
for c in coef32[::-1]:
    p = p * xs * xs + float(c)
worst = np.max(np.abs(xs + xs**3 * p - np.sin(xs)) / np.sin(xs))
print("/* max relative error %.2e (2^%.1f) */" % (worst, np.log2(worst)))
for c in coef32[::-1]:
    print("    %.9ef," % c)
