# vecmath_fit.py — the fit the gen_vecmath_*.py scripts share: the
# coefficients c of sum_k c_k powers[:, k] ~ target, fitted by iteratively
# reweighted least squares (Lawson's algorithm) towards the minimax of the
# error scaled by 'scale' (the error of the function the polynomial serves,
# relative to its value).
import numpy as np


def minimax_fit(powers, target, scale, rounds):
    weight = np.ones(len(target))
    for _ in range(rounds):
        coef = np.linalg.lstsq(powers * (weight * scale)[:, None], target * weight * scale,
                               rcond=None)[0]
        err = np.abs((powers @ coef - target) * scale)
        weight *= err / err.max() + 1e-2
        weight /= weight.max()
    return coef
