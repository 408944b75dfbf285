# gen_vecmath_gelu.py — the polynomials of core/ops/vecmath_kernels.h's gelu
# and its gradient. The far tail (x < -4 sqrt 2, both kernels):
# q(u) = erfcx(u / sqrt 2) = e^(u^2/2) erfc(u / sqrt 2) for u = |x|, so that
# Phi(x) = q e^(-x^2/2) / 2, as a polynomial in u itself (no rounded
# u / sqrt 2, no division), in t = u - c (c the middle of 4 sqrt 2 <= u <=
# 14.5; past 14.5 gelu is 0 or x). t = u - c is exact (Sterbenz) or nearly,
# so the polynomial sees u's digits. Interpolation at Chebyshev points
# (near-minimax), printed highest degree first for Horner's rule; the error
# printed is that of the polynomial evaluated in float32 with one rounding
# per multiply-add, relative to q. Then the forward's tail() and the
# gradient's grad_poly() (below).
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


# ---- gelu's forward (vmf_gelu_tail): Phi(-u) = erfc(u / sqrt 2) / 2 =
# e^G(u), G(u) = -u^2/2 + L(u), L(u) = log(erfcx(u / sqrt 2) / 2), for
# 0 <= u <= 4 sqrt 2, with L = C0 + C1 u + s(u): C0 and C1 have few bits
# (C0 - k ln2_hi and C1 u go into the exponential's reduced argument with at
# most one rounding, near its small result), s is small (|s| < 0.27) and a
# polynomial in t = u - 2. Printed: s's coefficients (degree 11, rounded to
# float from the top down, each lower one refitted after the rounding of
# those above), a quadratic in t within 0.05 of G(u) / ln2 (for k), and the
# polynomial p of e^r = 1 + r + r^2 p(r) on |r| <= 0.4 (degree 4).
C0, C1 = -0.8125, -0.3515625


def lawson(V, y, weight, iters=80):
    """near-minimax fit of y by the columns of V, error weighted by 'weight'"""
    w = np.ones(len(y))
    for _ in range(iters):
        W = np.sqrt(w) * weight
        c = np.linalg.lstsq(V * W[:, None], y * W, rcond=None)[0]
        e = np.abs(V @ c - y) * weight
        w = w * (e + 1e-300)
        w /= w.sum()
    return c, e.max()


def L_exact(u):
    return float(mpmath.log(q_exact(u) / 2))


def tail(deg=11):
    hi = 4 * np.sqrt(2)
    us = np.linspace(0, hi, 4000)
    t = us - 2.0
    s = np.array([L_exact(u) for u in us]) - C0 - C1 * us
    fixed = {}
    for k in range(deg, -1, -1):  # greedy rounding, top down
        rest = s - sum(c * t ** j for j, c in fixed.items())
        c, _ = lawson(np.vander(t / 2, k + 1, increasing=True), rest, np.ones(len(t)), 40)
        fixed[k] = np.float32(c[k] / 2.0 ** k)
    coef = [fixed[k] for k in range(deg + 1)]
    p = np.zeros_like(t)
    for c in coef[::-1]:
        p = p * t + float(c)
    print("/* s(u), degree %d in t = u - 2: max error %.2e (float coefficients) */"
          % (deg, np.abs(p - s).max()))
    print("    " + ", ".join("%.9g" % c for c in coef))
    G = -us * us / 2 + C0 + C1 * us + s
    quad, err = lawson(np.vander(t, 3, increasing=True), G / np.log(2), np.ones(len(t)))
    print("/* G(u) / ln2 ~ quadratic in t (for k), max error %.3f */" % err)
    print("    " + ", ".join("%.9g" % np.float32(c) for c in quad))
    r = np.linspace(-0.4, 0.4, 8001)
    r = r[np.abs(r) > 1e-6]
    y = (np.expm1(r) - r) / r ** 2
    pc, err = lawson(np.vander(r, 5, increasing=True), y, r ** 2 / np.exp(r))
    print("/* e^r = 1 + r + r^2 p(r) on [-0.4, 0.4], relative error %.2e */" % err)
    print("    " + ", ".join("%.10g" % np.float32(c) for c in pc))


# ---- gelu's gradient (vm_gelu_gradf): f'(x) = Phi(x) + x phi(x) =
# e^(-u^2/2) P(u) for x < 0 and 1 - e^(-u^2/2) P(u) for x >= 0, u = |x|,
# P(u) = h(u) - u / sqrt(2 pi), h(u) = erfcx(u / sqrt 2) / 2 (one exponential,
# one polynomial, no erf branch). h = 1/2 + u (-1/sqrt(2 pi) + u H(u)) so that
# small u keep their digits (h's first two terms exact), with H a polynomial
# in t = u - 3 on [0, 6] (past 6, 1 - e P is 1 in float; below -4 sqrt 2 the
# far pieces above take over). Fitted with the error weighted as the test
# measures it: relative to the larger term, max(h, u / sqrt(2 pi)) (times
# e^(-u^2/2) on both sides), and for u > 4 sqrt 2 (x > 0 only) relative to 1.
# Printed: H's coefficients (rounded to float from the top down), and the
# largest weighted error of the float evaluation (chains of four by Horner's
# rule joined by t^4, as the kernel evaluates them).
S2PI = 1 / np.sqrt(2 * np.pi)


def H_exact(u):
    u = mpmath.mpf(u)
    h = mpmath.exp(u * u / 2) * mpmath.erfc(u / mpmath.sqrt(2)) / 2
    return float((h - mpmath.mpf(0.5) + u / mpmath.sqrt(2 * mpmath.pi)) / (u * u))


def grad_weight(u, h):
    far = 4 * np.sqrt(2)
    return np.where(u <= far, 1 / np.maximum(h, u * S2PI), np.exp(-u * u / 2))


def grad_eval(coef, mid, u):
    f32 = np.float32

    def fma(a, b, c):
        return f32(float(a) * float(b) + float(c))

    t = f32(u - f32(mid))
    chains = []
    for s in range(0, len(coef), 4):
        p = coef[s:s + 4][-1]
        for c in coef[s:s + 4][-2::-1]:
            p = fma(p, t, c)
        chains.append(p)
    t2 = f32(t * t)
    t4 = f32(t2 * t2)
    p = chains[-1]
    for ch in chains[-2::-1]:
        p = fma(p, t4, ch)
    s2 = f32(S2PI)
    h = fma(fma(p, u, -s2), u, f32(0.5))
    return fma(-u, s2, h)


def grad_poly(deg=13, mid=3.0):
    us = np.linspace(1e-3, 6.0, 4000)
    hs = np.array([q_exact(u) / 2 for u in us])
    H = np.array([H_exact(u) for u in us])
    wt = grad_weight(us, hs) * us * us
    t = us - mid
    fixed = {}
    for k in range(deg, -1, -1):  # greedy rounding, top down
        rest = H - sum(c * t ** j for j, c in fixed.items())
        c, _ = lawson(np.vander(t / 3, k + 1, increasing=True), rest, wt, 40)
        fixed[k] = np.float32(c[k] / 3.0 ** k)
    coef = [fixed[k] for k in range(deg + 1)]
    worst = 0.0
    for u in np.concatenate([np.linspace(0, 6, 12001), np.linspace(0, 1, 4001)]).astype(np.float32):
        h = q_exact(float(u)) / 2
        want = h - float(u) * S2PI
        e = abs(float(grad_eval(coef, mid, u)) - want) * float(grad_weight(float(u), h))
        worst = max(worst, e)
    print("/* H(u), degree %d in t = u - %g: P(u) within %.2e of the larger term in float */"
          % (deg, mid, worst))
    print("    " + ", ".join("%.9g" % c for c in coef))


if __name__ == "__main__":
    d2 = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    show("q on [4 sqrt 2, 14.5]", 4 * np.sqrt(2), 14.5, d2)
    tail()
    grad_poly()
