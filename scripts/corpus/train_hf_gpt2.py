"""A Hugging Face transformers job: a small GPT-2 (GPT2LMHeadModel from a config, random
weights: nothing downloaded) trained STEPS steps (argv[1], default 100) on synthetic tokens
with bf16 autocast, AdamW and gradient clipping, then generate() of 32 tokens with its KV
cache (greedy): the many small launches of decoding one token at a time, with shapes that
grow. Prints whether the loss decreased and the generated tokens' sum (native and traced
runs compare it). TL_CUPTI_TRUTH=PATH profiles the whole run with torch.profiler (CUPTI)."""
import os
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = os.environ.get("TL_CUPTI_TRUTH")
torch.manual_seed(0)
cfg = GPT2Config(vocab_size=8000, n_positions=256, n_embd=256, n_layer=4, n_head=4,
                 attn_implementation="sdpa")
model = GPT2LMHeadModel(cfg).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
gen = torch.Generator(device="cuda").manual_seed(1)
data = torch.randint(0, 8000, (4, 8, 128), device="cuda", generator=gen)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

first = loss = None
with cupti_truth(truth_path):
    model.train()
    for i in range(steps):
        with torch.cuda.nvtx.range("step"):
            x = data[i % 4]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=x, labels=x).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
        if first is None:
            first = loss.item()
    model.eval()
    with torch.no_grad():
        out = model.generate(data[0, :2, :16], max_new_tokens=32, do_sample=False,
                             pad_token_id=0)
    torch.cuda.synchronize()
print(f"steps={steps} loss_decreased={loss.item() < first} generated={int(out[:, 16:].sum())}")
