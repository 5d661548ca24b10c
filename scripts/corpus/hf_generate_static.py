"""A Hugging Face inference job: a small GPT-2 (GPT2LMHeadModel from a config, random
weights: nothing downloaded) generates TOKENS new tokens (argv[1], default 100), greedy, for a
batch of 4 prompts of 16 tokens, with a static KV cache (cache_implementation="static"): the
generation loop compiles the decoding step with torch.compile and replays it as a CUDA graph
(its cudagraph trees) for every token, the pattern transformers recommends for fast
generation. Prints the generated tokens' sum and whether the step was compiled.

TORCHINDUCTOR_COMPILE_THREADS=1 unless set (one process compiles: the trace stays one
process). TL_CUPTI_TRUTH=PATH profiles the whole run with torch.profiler (CUPTI)."""
import os
import sys

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = os.environ.get("TL_CUPTI_TRUTH")
torch.manual_seed(0)
cfg = GPT2Config(vocab_size=8000, n_positions=512, n_embd=256, n_layer=4, n_head=4,
                 attn_implementation="sdpa")
model = GPT2LMHeadModel(cfg).cuda().eval()
gen = torch.Generator(device="cuda").manual_seed(1)
prompt = torch.randint(1, 8000, (4, 16), device="cuda", generator=gen)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

with cupti_truth(truth_path):
    with torch.no_grad():
        out = model.generate(prompt, max_new_tokens=tokens, min_new_tokens=tokens,
                             do_sample=False, pad_token_id=0, cache_implementation="static")
    torch.cuda.synchronize()
compiled = type(getattr(model, "_compiled_call", None)).__name__ if \
    getattr(model, "_compiled_call", None) is not None else "no"
print(f"tokens={tokens} generated={int(out[:, 16:].sum())} shape={tuple(out.shape)} "
      f"compiled={compiled}")
