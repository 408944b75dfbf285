# torch_char_gpt.py THREADS FILE — the char-GPT training step of
# bench/char_gpt.lua in PyTorch: nanoGPT's model.py formulation and train.py's
# step (tests/lua/data/gen_gpt_parity.py's GPT, make_optimizer, train_step)
# on the CPU recipe (4 layers, 4 heads, 128 wide, block 64, batch 12, vocab
# 65), random tokens. Writes its initial weights and batches to FILE
# (safetensors) for moonflow's side, then prints "gpt torch MS": the median
# over 5 rounds of 20 steps of the wall time per step (after 5 warm-up steps).
# With a third argument "profile", torch.autograd.profiler's self CPU time
# per op per step over 20 steps instead.
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "lua", "data"))
from gen_gpt_parity import GPT, make_optimizer, save_safetensors, train_step  # noqa: E402

torch.set_num_threads(int(sys.argv[1]))
CFG = dict(n_layer=4, n_head=4, n_embd=128, block_size=64, vocab_size=65, batch_size=12,
           learning_rate=1e-3, min_lr=1e-4, warmup_iters=100, lr_decay_iters=2000,
           weight_decay=0.1, beta1=0.9, beta2=0.99, grad_clip=1.0)
ROUNDS, STEPS, WARMUP, NBATCH = 5, 20, 5, 8

torch.manual_seed(1337)
model = GPT(CFG)
g = torch.Generator().manual_seed(28)
batches = torch.randint(CFG["vocab_size"], (NBATCH, CFG["batch_size"], CFG["block_size"] + 1),
                        generator=g)
weights = {k: v.clone() for k, v in model.state_dict().items()
           if not k.endswith(".attn.bias") and k != "lm_head.weight"}
weights["batches"] = batches
save_safetensors(sys.argv[2], weights)

opt = make_optimizer(model, CFG)
xs = [batches[i, :, :-1].contiguous() for i in range(NBATCH)]
ys = [batches[i, :, 1:].contiguous() for i in range(NBATCH)]
it = 0
for _ in range(WARMUP):
    train_step(model, opt, xs[it % NBATCH], ys[it % NBATCH], it, CFG)
    it += 1
if len(sys.argv) > 3 and sys.argv[3] == "profile":
    with torch.autograd.profiler.profile() as prof:
        for _ in range(STEPS):
            train_step(model, opt, xs[it % NBATCH], ys[it % NBATCH], it, CFG)
            it += 1
    events = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)
    total = sum(e.self_cpu_time_total for e in events) / STEPS / 1e3
    print("%-36s %9.3f ms  100.0%%" % ("total (self time per step)", total))
    for e in events:
        ms = e.self_cpu_time_total / STEPS / 1e3
        if ms >= 0.005 * total:
            print("%-36s %9.3f ms  %5.1f%%" % (e.key, ms, 100 * ms / total))
    sys.exit(0)
times = []
for _ in range(ROUNDS):
    t0 = time.perf_counter()
    for _ in range(STEPS):
        train_step(model, opt, xs[it % NBATCH], ys[it % NBATCH], it, CFG)
        it += 1
    times.append((time.perf_counter() - t0) / STEPS * 1e3)
times.sort()
print("gpt torch %.2f" % times[len(times) // 2])
