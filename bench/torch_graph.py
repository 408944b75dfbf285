# torch_graph.py — PyTorch's side of bench/graph.lua (1 thread, float32,
# medians of 7 runs), printed as "key microseconds":
#   exec_add       a torch.jit.trace'd chain of 1000 `y + c` on 1-element
#                  tensors, per node (TorchScript's interpreter, the nearest
#                  thing to moonflow's executor);
#   chain_eager    the 20-op chain of bench/graph.lua, eagerly, per call;
#   chain_trace    the same chain through torch.jit.trace, per call.
import time

import torch

torch.set_num_threads(1)
RUNS = 7
NODES = 1000


def time_us(iters, units, body):
    times = []
    for _ in range(RUNS):
        t0 = time.process_time()
        body(iters)
        times.append((time.process_time() - t0) / (iters * units) * 1e6)
    times.sort()
    return times[len(times) // 2]


def f20(x):
    y = x
    for _ in range(4):
        y = torch.tanh(y * 0.5 + 0.25)
        y = torch.exp(-y) - y
    return y


def chain(x, c):
    y = x
    for _ in range(NODES):
        y = y + c
    return y


def main():
    x = torch.full((1,), 0.3)
    c = torch.full((1,), 1e-3)
    with torch.no_grad():
        traced_chain = torch.jit.trace(chain, (x, c))
        for _ in range(3):
            traced_chain(x, c)
        print("exec_add %.3f" % time_us(200, NODES, lambda n: [traced_chain(x, c)
                                                                for _ in range(n)]))
        print("chain_eager %.3f" % time_us(3000, 1, lambda n: [f20(x) for _ in range(n)]))
        traced = torch.jit.trace(f20, (x,))
        for _ in range(3):
            traced(x)
        print("chain_trace %.3f" % time_us(3000, 1, lambda n: [traced(x) for _ in range(n)]))


if __name__ == "__main__":
    main()
