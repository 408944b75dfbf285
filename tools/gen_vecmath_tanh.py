# gen_vecmath_tanh.py — the short exponential of core/ops/vecmath_kernels.h's
# tanh: e^r = 1 + r + r^2 p(r) on |r| <= ln2 / 2 with p of degree 4 (Cephes's
# expf has degree 5), fitted by iteratively reweighted least squares
# (tools/vecmath_fit.py) towards the minimax of the relative error of e^r,
# coefficients rounded to float.
# Run by hand with /usr/bin/python3; its output is pasted into the header.
import numpy as np

from vecmath_fit import minimax_fit

DEG = 4
HALF_LN2 = np.log(2.0) / 2
N = 4000
r = np.cos(np.pi * (np.arange(N) + 0.5) / N) * HALF_LN2
target = (np.expm1(r) - r) / r**2       # what p should be
scale = r**2 / np.exp(r)                # an error in p, relative to e^r
powers = np.vstack([r**k for k in range(DEG + 1)]).T
coef = minimax_fit(powers, target, scale, 100)

# check on a dense grid, in float as the kernel evaluates it
coef32 = [np.float32(c) for c in coef]
worst = 0.0
for x in np.linspace(-HALF_LN2, HALF_LN2, 200001, dtype=np.float32):
    p = coef32[-1]
    for c in coef32[-2::-1]:
        p = np.float32(p * x + c)
    e = 1.0 + float(x) + float(x) * float(x) * float(p)
    worst = max(worst, abs(e - np.exp(float(x))) / np.exp(float(x)))
print("/* max relative error %.2e (2^%.1f) */" % (worst, np.log2(worst)))
for c in coef32[::-1]:
    print("    %.9ef," % c)
