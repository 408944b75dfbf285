# gen_vecmath_powlog.py — the tables of core/ops/vecmath_kernels.h's
# vmf_log_ext (pow's logarithm): x = 2^e m with m in [1 - 2^-6, 2 - 2^-5),
# the bits of x minus those of 1 - 2^-6 cut by their top four mantissa bits
# into 16 intervals; c is the interval's centre on a grid of 1/16 (1 for the
# interval around 1), log(c) = hi + lo with hi on a grid of 2^-17 (so that
# e ln2_hi + hi is exact in float) and lo rounded to float. Run by hand with
# /usr/bin/python3; its output is pasted into the header. Prints max |s|,
# s = (m - c) / (m + c) over the intervals (the series' argument).
import math
import struct


def from_bits(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def bits(f):
    return struct.unpack("<I", struct.pack("<f", f))[0]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


OFF = bits(1 - 2**-6)
cs, his, los, worst = [], [], [], 0.0
for i in range(16):
    lo = from_bits(OFF + (i << 19))
    hi = from_bits(OFF + ((i + 1) << 19)) if i < 15 else 2 * from_bits(OFF)
    c = 1.0 if i == 0 else round(math.sqrt(lo * hi) * 16) / 16
    worst = max(worst, abs(lo - c) / (lo + c), abs(hi - c) / (hi + c))
    lc = math.log(c)
    h = round(lc * 2**17) / 2**17
    cs.append(c)
    his.append(h)
    los.append(f32(lc - h))
def chex(v):
    """float.hex without the trailing zeros"""
    if v == 0:
        return "0.0"
    m, e = float.hex(v).split("p")
    return m.rstrip("0").rstrip(".") + "p" + e


print("/* off 0x%08x, max |s| %.4f */" % (OFF, worst))
for name, vals in (("vm_log_c", cs), ("vm_log_c_hi", his), ("vm_log_c_lo", los)):
    print("static const float %s[16] = {" % name)
    for k in range(0, 16, 4):
        print("    " + " ".join("%sf," % chex(v) for v in vals[k:k + 4]))
    print("};")
