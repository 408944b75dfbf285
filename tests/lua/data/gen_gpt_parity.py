# gen_gpt_parity.py — the reference run of tests/lua/test_gpt_parity.lua:
# nanoGPT's model (model.py's formulation, as train.py builds it: bias=False,
# dropout 0, tied embeddings, the manual causal attention path that torch
# 1.13 takes) initialised in PyTorch 1.13 and trained 20 steps with
# train.py's loop (get_lr's warm-up and cosine, AdamW with weight decay on
# the 2-D weights only, betas (0.9, 0.99), clip_grad_norm_ at 1.0) on fixed
# batches. A reduced config (2 layers, 4 heads, 32 wide, block 16, vocab 65,
# batch 4) keeps the weights file at 108 KB. Writes the initial weights and
# the batches to tests/lua/data/gpt_parity.safetensors and prints the losses
# and the final weights' sums as Lua. bench/torch_char_gpt.py imports the
# model from here. Run by hand:
#   /usr/bin/python3 tests/lua/data/gen_gpt_parity.py > tests/lua/data/gpt_parity.lua
import json, math, os, struct

import torch
import torch.nn as nn
from torch.nn import functional as F

CFG = dict(n_layer=2, n_head=4, n_embd=32, block_size=16, vocab_size=65, batch_size=4,
           learning_rate=1e-2, min_lr=1e-3, warmup_iters=5, lr_decay_iters=20,
           weight_decay=0.1, beta1=0.9, beta2=0.99, grad_clip=1.0)
STEPS = 20


class LayerNorm(nn.Module):
    def __init__(self, ndim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, None, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"], bias=False)
        self.c_proj = nn.Linear(c["n_embd"], c["n_embd"], bias=False)
        self.n_head, self.n_embd = c["n_head"], c["n_embd"]
        bs = c["block_size"]
        self.register_buffer("bias", torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"], bias=False)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"], bias=False)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1, self.attn = LayerNorm(c["n_embd"]), CausalSelfAttention(c)
        self.ln_2, self.mlp = LayerNorm(c["n_embd"]), MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab_size"], c["n_embd"]),
            wpe=nn.Embedding(c["block_size"], c["n_embd"]),
            h=nn.ModuleList([Block(c) for _ in range(c["n_layer"])]),
            ln_f=LayerNorm(c["n_embd"])))
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c["n_layer"]))

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def get_lr(it, c):
    if it < c["warmup_iters"]:
        return c["learning_rate"] * (it + 1) / (c["warmup_iters"] + 1)
    if it > c["lr_decay_iters"]:
        return c["min_lr"]
    ratio = (it - c["warmup_iters"]) / (c["lr_decay_iters"] - c["warmup_iters"])
    return c["min_lr"] + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (c["learning_rate"] - c["min_lr"])


def make_optimizer(model, c):
    """configure_optimizers: AdamW, weight decay on the 2-D weights only."""
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    nodecay = [p for p in params if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": c["weight_decay"]},
                              {"params": nodecay, "weight_decay": 0.0}],
                             lr=c["learning_rate"], betas=(c["beta1"], c["beta2"]))


def train_step(model, opt, x, y, it, c):
    """One iteration of train.py's loop; returns the loss (before the update)."""
    for group in opt.param_groups:
        group["lr"] = get_lr(it, c)
    loss = model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), c["grad_clip"])
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def save_safetensors(path, tensors):
    head, blobs, off = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous()
        dt = {torch.float32: "F32", torch.int64: "I64"}[t.dtype]
        b = t.numpy().tobytes()
        head[name] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(head).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def main():
    torch.manual_seed(1337)
    model = GPT(CFG)
    # batches: windows of a text with structure to learn (a period-23 sequence of
    # random tokens, one token in 8 replaced at random)
    g = torch.Generator().manual_seed(28)
    period = torch.randint(CFG["vocab_size"], (23,), generator=g)
    text = period.repeat(200)
    noise = torch.rand(text.shape, generator=g) < 0.125
    text[noise] = torch.randint(CFG["vocab_size"], (int(noise.sum()),), generator=g)
    starts = torch.randint(len(text) - CFG["block_size"] - 1, (STEPS, CFG["batch_size"]), generator=g)
    batches = torch.stack([torch.stack([text[s:s + CFG["block_size"] + 1] for s in row])
                           for row in starts])                       # (STEPS, batch, block + 1)

    weights = {k: v.clone() for k, v in model.state_dict().items()
               if not k.endswith(".attn.bias") and k != "lm_head.weight"}
    weights["batches"] = batches
    save_safetensors(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpt_parity.safetensors"),
                     weights)

    opt = make_optimizer(model, CFG)
    losses = []
    for it in range(STEPS):
        x, y = batches[it, :, :-1].contiguous(), batches[it, :, 1:].contiguous()
        losses.append(train_step(model, opt, x, y, it, CFG).item())

    print("-- generated by tests/lua/data/gen_gpt_parity.py (torch %s); do not edit" % torch.__version__)
    print("return {")
    print("  config = {%s}," % ", ".join("%s = %r" % kv for kv in CFG.items()))
    print("  losses = {%s}," % ", ".join(repr(v) for v in losses))
    print("  -- after the 20 steps: each weight's sum and sum of squares (float64)")
    print("  final = {")
    for k, v in model.state_dict().items():
        if k in weights:
            d = v.double()
            print("    [%r] = {%r, %r}," % (k, d.sum().item(), (d * d).sum().item()))
    print("  },")
    print("}")


if __name__ == "__main__":
    main()
