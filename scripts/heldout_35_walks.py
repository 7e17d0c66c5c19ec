"""Four walks written after held-out batch 34's run, the timer-stamp fix and the spin fit on
every stream (the graph price's replay changed; `--summary` did not), before any run of them:
a Qwen2-shaped speculative-decoding verify step (batch 8, four draft tokens a sequence, six
layers of hidden 2048; transformers, bf16) and a T5-shaped encoder (batch 2, 256 tokens, four
layers with relative position biases; bf16), each on one stream; a CuPy prefix-sum pass
(row-wise cumulative sums of three matrix sizes, each normalised by its row total and reduced
to its row's argmax); a bf16 linear layer of hidden 4096 over 16 tokens beside three LoRA
adapters of ranks 8, 16 and 64, each on a stream of its own.

    python3 scripts/validate_all.py --out DIR --groups heldout35
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import LLAMA_MID  # noqa: E402


def qwen2_verify_b8_s4():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Qwen2", "bfloat16", 8, 4, **LLAMA_MID)


def t5_encoder_b2_s256():
    import torch
    from walk_parts import hf_model
    model = hf_model("T5", "bfloat16", head="EncoderModel", d_model=512, d_ff=2048, d_kv=64,
                     num_layers=4, num_heads=8, vocab_size=32128)
    ids = torch.randint(0, 32128, (2, 256), device="cuda")

    def step():
        with torch.no_grad():
            return model(input_ids=ids).last_hidden_state
    return step


def cupy_prefix_sums():
    import cupy as cp
    xs = [cp.random.random((rows, width), dtype=cp.float32)
          for rows, width in ((32, 4096), (256, 1024), (2048, 256))]

    def step():
        best = []
        for x in xs:
            c = cp.cumsum(x, axis=1)
            share = c / c[:, -1:]
            best.append(cp.argmax(share > 0.5, axis=1))
        return best[-1]
    return step


def lora_adapters_beside_base():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn
    with torch.device("cuda"):
        base = nn.Linear(4096, 4096, bias=False).to(torch.bfloat16)
        adapters = [(nn.Linear(4096, r, bias=False).to(torch.bfloat16),
                     nn.Linear(r, 4096, bias=False).to(torch.bfloat16)) for r in (8, 16, 64)]
        x = torch.randn(16, 4096, dtype=torch.bfloat16)

    def lora(a, b):
        return lambda t: b(a(t)) * 0.5

    run = fork_lanes([base] + [lora(a, b) for a, b in adapters])

    def step():
        with torch.no_grad():
            return run(x)
    return step


build = builder(131_35, {
    "ik_qwen2_verify_b8_s4": qwen2_verify_b8_s4,
    "ik_t5_encoder_b2_s256": t5_encoder_b2_s256,
    "ik_cupy_prefix_sums": (cupy_prefix_sums, "cupy"),
    "ik_lora_adapters_beside_base": lora_adapters_beside_base,
})
