"""Four walks written after held-out batch 37's run, the re-run of every stored multi-stream
walk and the paced stand-in that writes (tried and reverted; no change to either graph price
since 89f45ba), before any run of them: a Cohere2-shaped decode at batch 2 (interleaved
sliding-window and global attention layers, parallel attention and MLP blocks, layer norm
without bias; transformers, fp16) and a Swin-shaped image encoder at batch 2 (two stages of
shifted-window attention: window partition, cyclic shifts and relative position biases;
transformers, fp16), each on one stream; per-tensor FP8 quantisation of activations (absolute
maximum, scale, clamp and cast to e4m3 over 8 x 1024 x 1024) on a stream beside bf16 GEMMs
of the next layer on another; eight SwiGLU experts of hidden 1024 (2816 wide), each over its
own 8 of 64 tokens on a stream of its own, scattered back.

    python3 scripts/validate_all.py --out DIR --groups heldout38
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def cohere2_decode_b2():
    from walk_parts import hf_decoder_step
    return hf_decoder_step("Cohere2", "float16", 2, 1, hidden_size=1024,
                           intermediate_size=2816, num_hidden_layers=4, num_attention_heads=16,
                           num_key_value_heads=4, vocab_size=32000,
                           max_position_embeddings=2048, sliding_window=512)


def swin_stages_b2():
    import torch
    from walk_parts import hf_model
    model = hf_model("Swin", "float16", head="Model", image_size=224, embed_dim=96,
                     depths=[2, 2], num_heads=[3, 6], window_size=7)
    with torch.device("cuda"):
        pixels = torch.randn(2, 3, 224, 224, dtype=torch.float16)

    def step():
        with torch.no_grad():
            return model(pixel_values=pixels).last_hidden_state
    return step


def fp8_quantise_beside_gemm():
    import torch
    from walk_parts import fork_join
    from walk_parts import corner as _corner
    with torch.device("cuda"):
        acts = torch.randn(8, 1024, 1024, dtype=torch.bfloat16)
        x = torch.randn(64, 4096, dtype=torch.bfloat16)
        weights = [torch.randn(4096, 4096, dtype=torch.bfloat16) for _ in range(4)]
    fp8 = torch.float8_e4m3fn
    top = torch.finfo(fp8).max

    def quantise():
        scale = top / acts.abs().amax().float().clamp(min=1e-12)
        q = (acts.float() * scale).clamp(-top, top).to(fp8)
        return q.view(torch.uint8)

    def gemms():
        y = x
        for w in weights:
            y = torch.nn.functional.silu(y @ w)
        return y

    run = fork_join(lambda: _corner(quantise()), lambda: _corner(gemms()))

    def step():
        with torch.no_grad():
            return run()
    return step


def eight_expert_lanes_b8():
    import torch
    from walk_parts import fork_lanes
    nn = torch.nn

    class Expert(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = nn.Linear(1024, 2816, bias=False)
            self.up = nn.Linear(1024, 2816, bias=False)
            self.down = nn.Linear(2816, 1024, bias=False)

        def forward(self, t):
            return self.down(nn.functional.silu(self.gate(t)) * self.up(t))

    with torch.device("cuda"):
        experts = [Expert().to(torch.bfloat16) for _ in range(8)]
        x = torch.randn(64, 1024, dtype=torch.bfloat16)
        order = torch.randperm(64)
        rows = [order[8 * k: 8 * (k + 1)] for k in range(8)]
        out = torch.zeros(64, 1024, dtype=torch.bfloat16)

    def lane(expert, idx):
        def run(t):
            y = expert(t.index_select(0, idx))
            out.index_copy_(0, idx, y)
            return y
        return run

    run = fork_lanes([lane(e, r) for e, r in zip(experts, rows)])

    def step():
        with torch.no_grad():
            return run(x) + out[0, 0]
    return step


build = builder(131_38, {
    "io_cohere2_decode_b2": cohere2_decode_b2,
    "io_swin_stages_b2": swin_stages_b2,
    "io_fp8_quantise_beside_gemm": fp8_quantise_beside_gemm,
    "io_eight_expert_lanes_b8": eight_expert_lanes_b8,
})
