"""Seven walks for `scripts/validate.py --walk-module`, written after the 80-walk run at 6966250
and run once with that version unchanged, on kinds the method had not met: another
transformers architecture (OPT: learned positions, biased projections, ReLU MLP) at decode
batch 4, a Llama-shaped decoder at decode batch 64 (GEMMs far from the GEMV regime), a whole
training step (forward, backward through autograd's own thread, a foreach SGD update with
momentum), int8 GEMMs through `torch._int_mm` with requantisation between them, ConvNeXt
blocks (7 x 7 depthwise convolutions, channels-last LayerNorm, pointwise MLPs), three streams
ordered layer by layer by events (a second request one layer behind the first, a third stream
copying each of the first's layer outputs aside) rather than forked and joined once, and a
CuPy row softmax from an `ElementwiseKernel` and axis reductions
(results: docs/validation-h200.md, "Walks of kinds not met before, and
streams ordered by the program's own events").

    python3 scripts/validate.py --out DIR --walk-module scripts/unmet_walks.py \
        --walks opt_decode_b4,llama_decode_b64,mlp_train_step_b64,int8_gemm_chain_b32,\
convnext_blocks_b4,staged_three_streams,cupy_row_softmax
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402


def opt_step():
    """An OPT-shaped decoder (hidden 2048, 16 layers, 32 heads, ReLU MLP of 8192) at decode
    batch 4, fp16. OPT derives positions from a 2-D mask; with the prepared 4-D mask
    `walk_parts.hf_step` gives, the positions are passed too."""
    import torch
    from walk_parts import hf_model
    model = hf_model("OPT", "float16", hidden_size=2048, ffn_dim=8192, num_hidden_layers=16,
                     num_attention_heads=32, vocab_size=32000, max_position_embeddings=2048,
                     word_embed_proj_dim=2048)
    b = 4
    ids = torch.randint(0, model.config.vocab_size, (b, 1), device="cuda")
    mask = torch.ones(b, 1, 1, 1, dtype=torch.bool, device="cuda")
    positions = torch.zeros(b, 1, dtype=torch.long, device="cuda")

    def step():
        with torch.no_grad():
            return model(input_ids=ids, attention_mask=mask, position_ids=positions,
                         use_cache=False).logits
    return step


def llama_b64_step():
    """A Llama-shaped decoder (hidden 2048, 16 layers, GQA 32/4 heads) at decode batch 64,
    bf16."""
    from walk_parts import LLAMA, hf_decoder_step
    return hf_decoder_step("Llama", "bfloat16", 64, 1, **dict(LLAMA, num_hidden_layers=16))


def train_step():
    """One training step of a bf16 MLP stack (hidden 1024 -> 4096 -> 1024, LayerNorm and
    residual, 6 layers) at batch 64: gradients zeroed in place, MSE loss, backward, SGD with
    momentum (foreach). Every tensor the step touches exists before capture (the warm-up
    makes the gradients and momentum buffers)."""
    import torch
    nn = torch.nn

    class Layer(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.norm, self.up, self.down = nn.LayerNorm(d), nn.Linear(d, h), nn.Linear(h, d)

        def forward(self, x):
            return x + self.down(nn.functional.gelu(self.up(self.norm(x))))

    d, h = 1024, 4096
    with torch.device("cuda"):
        model = nn.Sequential(*[Layer(d, h) for _ in range(6)]).to(torch.bfloat16)
        x = torch.randn(64, d, dtype=torch.bfloat16)
        target = torch.randn(64, d, dtype=torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, foreach=True)

    def step():
        opt.zero_grad(set_to_none=False)
        loss = nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        return loss.detach()
    return step


def int8_chain_step():
    """Twelve 4096 x 4096 int8 GEMMs at 32 tokens through `torch._int_mm` (int32 results),
    each result scaled, through ReLU, rounded and clamped back to int8 for the next."""
    import torch
    d, tokens = 4096, 32
    with torch.device("cuda"):
        ws = [torch.randint(-8, 8, (d, d), dtype=torch.int8) for _ in range(12)]
        x = torch.randint(-8, 8, (tokens, d), dtype=torch.int8)
    scale = 1.0 / 512.0

    def step():
        y = x
        for w in ws:
            acc = torch._int_mm(y, w)
            y = torch.relu(acc.float() * scale).round().clamp(-127, 127).to(torch.int8)
        return y
    return step


def convnext_step():
    """Six ConvNeXt blocks (192 channels, 28 x 28, batch 4, fp16): 7 x 7 depthwise
    convolution, LayerNorm over channels (channels-last), 192 -> 768 -> 192 pointwise MLP with
    GELU, layer scale, residual."""
    import torch
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
            self.norm = nn.LayerNorm(c)
            self.pw1, self.pw2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
            self.gamma = nn.Parameter(torch.full((c,), 1e-2))

        def forward(self, x):
            y = self.dw(x).permute(0, 2, 3, 1)
            y = self.pw2(nn.functional.gelu(self.pw1(self.norm(y)))) * self.gamma
            return x + y.permute(0, 3, 1, 2)

    c = 192
    with torch.device("cuda"):
        model = nn.Sequential(*[Block(c) for _ in range(6)]).half().eval()
        x = torch.randn(4, c, 28, 28, dtype=torch.float16)

    def step():
        with torch.no_grad():
            return model(x)
    return step


def staged_streams_step():
    """Two requests through six fp16 layers (hidden 2048, batch 8: linear, GELU) on two
    streams, the second one layer behind the first (its layer i adds the first's layer-i
    output, waited on by an event), and a third stream copying each of the first's layer
    outputs into a history buffer as soon as it is made; joined on the current stream."""
    import torch
    f = torch.nn.functional
    d, layers = 2048, 6
    with torch.device("cuda"):
        wa = [torch.randn(d, d, dtype=torch.float16) * 0.02 for _ in range(layers)]
        wb = [torch.randn(d, d, dtype=torch.float16) * 0.02 for _ in range(layers)]
        xa0 = torch.randn(8, d, dtype=torch.float16)
        xb0 = torch.randn(8, d, dtype=torch.float16)
        history = torch.empty(layers, 8, d, dtype=torch.float16)
    first, second, copier = (torch.cuda.Stream() for _ in range(3))

    def step():
        main = torch.cuda.current_stream()
        for s in (first, second, copier):
            s.wait_stream(main)
        xa, xb, made = xa0, xb0, []
        for i in range(layers):
            with torch.cuda.stream(first):
                xa = f.gelu(f.linear(xa, wa[i]))
                ready = torch.cuda.Event()
                ready.record()
            made.append(xa)
            copier.wait_event(ready)
            with torch.cuda.stream(copier):
                history[i].copy_(xa)
            second.wait_event(ready)
            with torch.cuda.stream(second):
                xb = f.gelu(f.linear(xb + xa, wb[i]))
        for s in (first, second, copier):
            main.wait_stream(s)
        return xb + history.sum(0)
    return step


def cupy_softmax_step():
    """CuPy: a row softmax over 2048 x 4096 f32 repeated 12 times: row max, an
    `ElementwiseKernel` for exp(x - max), row sum, a scaled division."""
    import cupy as cp
    x = cp.random.random((2048, 4096), dtype=cp.float32)
    exp_sub = cp.ElementwiseKernel("T x, T m", "T y", "y = exp(x - m)", "exp_sub")

    def step():
        y = x
        for _ in range(12):
            e = exp_sub(y, y.max(axis=1, keepdims=True))
            y = e / e.sum(axis=1, keepdims=True) * 4096.0
        return y
    return step


build = builder(17, {
    "opt_decode_b4": opt_step,
    "llama_decode_b64": llama_b64_step,
    "mlp_train_step_b64": train_step,
    "int8_gemm_chain_b32": int8_chain_step,
    "convnext_blocks_b4": convnext_step,
    "staged_three_streams": staged_streams_step,
    "cupy_row_softmax": (cupy_softmax_step, "cupy"),
})
