"""Writes tests/lua/data/half_torch.safetensors for tests/lua/test_half.lua:
float32 inputs covering every float32 class (zeros, float32 subnormals,
float16 subnormals, ties at both parities in the normal and subnormal
ranges, the overflow edges, infinities, NaN, random bit patterns) and their
conversions by PyTorch 1.13 (x.to(torch.float16), x.to(torch.bfloat16)),
stored as F32, F16 and BF16 with the bytes PyTorch produced. Run by hand:
    /usr/bin/python3 tests/lua/data/gen_half_torch.py
"""
import json
import struct

import numpy as np
import torch

rng = np.random.default_rng(7)
vals = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 65504.0, 65519.0, 65519.996, 65520.0, 65536.0,
        -65520.0, 1e-8, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -14, 2.0 ** -15,
        1.17549435e-38, 1e-45, -1e-45, 3.4028235e38, float("inf"), float("-inf")]
# float16 ties: (k + 1/2) ulp above 1 for even and odd k, and in the subnormal range
for k in range(0, 8):
    vals.append(1.0 + (k + 0.5) * 2.0 ** -10)
    vals.append((k + 0.5) * 2.0 ** -24)
# bfloat16 ties: (k + 1/2) ulp above 1 (ulp 2^-7)
for k in range(0, 8):
    vals.append(1.0 + (k + 0.5) * 2.0 ** -7)
bits = rng.integers(0, 2 ** 32, size=2000, dtype=np.uint64).astype(np.uint32)
randoms = bits.view(np.float32)
randoms = randoms[~np.isnan(randoms)]          # NaN separately (payloads differ)
x = np.concatenate([np.array(vals, dtype=np.float32), randoms,
                    rng.normal(0, 100, 500).astype(np.float32),
                    np.array([np.nan], dtype=np.float32)])

xt = torch.from_numpy(x)
f16 = xt.to(torch.float16).view(torch.int16).numpy().tobytes()
bf16 = xt.to(torch.bfloat16).view(torch.int16).numpy().tobytes()
tensors = [("x", "F32", x.tobytes()), ("f16", "F16", f16), ("bf16", "BF16", bf16)]
header, data = {}, b""
for name, dtype, raw in tensors:
    header[name] = {"dtype": dtype, "shape": [len(x)],
                    "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
h = json.dumps(header).encode()
with open("tests/lua/data/half_torch.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data)
print(len(x), "values")
