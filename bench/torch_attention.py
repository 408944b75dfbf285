# torch_attention.py [THREADS] — PyTorch's side of bench/attention.lua: the
# explicit masked-softmax attention of nanoGPT's CausalSelfAttention when
# flash attention is unavailable ("slow attention"):
#   att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
#   att = att.masked_fill(bias[:, :, :T, :T] == 0, float('-inf'))
#   att = F.softmax(att, dim=-1)
#   y = att @ v
# q, k, v of shape (12, 4, T, 32) float32, T = 64, 256, 1024; forward alone
# (under torch.no_grad, as inference runs it) and forward + backward of
# sum(y * w) for q, k, v; wall time per call, median of 7 runs, printed as
# "attn_fwd_T MS" and "attn_fwdbwd_T MS".
import math
import sys
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
torch.manual_seed(1)
RUNS = 7
bias = torch.tril(torch.ones(1024, 1024)).view(1, 1, 1024, 1024)


def attention(q, k, v):
    T = q.size(-2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = att.masked_fill(bias[:, :, :T, :T] == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    return att @ v


def median_ms(f, reps):
    for _ in range(2):
        f()
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        times.append((time.perf_counter() - t0) * 1e3 / reps)
    times.sort()
    return times[len(times) // 2]


for T in (64, 256, 1024):
    q, k, v, w = (torch.randn(12, 4, T, 32) for _ in range(4))
    reps = 2 if T == 1024 else 10

    def fwd():
        with torch.no_grad():
            return attention(q, k, v)

    def fwdbwd():
        qq, kk, vv = (t.detach().requires_grad_() for t in (q, k, v))
        (attention(qq, kk, vv) * w).sum().backward()
        return qq.grad, kk.grad, vv.grad

    print("attn_fwd_%d %.3f" % (T, median_ms(fwd, reps)))
    print("attn_fwdbwd_%d %.3f" % (T, median_ms(fwdbwd, reps)))
