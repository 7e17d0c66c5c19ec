"""Six walks written after de89203 (element-wise kernels of a walk whose data the L2 holds
share the L2's bandwidth) and after its first test (batch 68), before any run, with the
method unchanged since: a second test of that version on other kernels and neighbours. Four
lanes of rotary embeddings over 8 heads × 128 (bf16, 6 passes); two lanes of residual add and
RMSNorm over 8 × 2048 fp16 beside a lane of decode attention (8 heads, 512 keys of 128, fp16);
three lanes of tanh-GELU over 64 × 1024 bf16 beside a lane of a small bf16 MLP (4 tokens,
1024 → 2816 → 1024, SiLU); two lanes of bias, ReLU and scale over 512 × 1024 f32 (10 passes);
eight lanes of SiLU written out (x · sigmoid(x)) over 16 × 1024 fp16 (6 passes); three lanes of
log-softmax and exp over 16 × 4096 f32 (6 passes).

    python3 scripts/validate_all.py --out DIR --groups heldout69
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import fork_lanes, no_grad_step, repeated, rms_norm  # noqa: E402
from walk_registry import builder  # noqa: E402


def lanes(count, make, *others):
    """A step of `count` lanes `make()` and the `others` lanes, forked and joined."""
    return no_grad_step(fork_lanes([make() for _ in range(count)] + list(others)))


def four_lanes_of_rotary_bf16():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.randn(8, 128, dtype=torch.bfloat16)
            cos = torch.randn(128, dtype=torch.bfloat16)
            sin = torch.randn(128, dtype=torch.bfloat16)

        def rotate(y):
            half = torch.cat((-y[..., 64:], y[..., :64]), dim=-1)
            return y * cos + half * sin
        return repeated(x, 6, rotate)
    return lanes(4, lane)


def rmsnorm_lanes_beside_attention_fp16():
    import torch
    with torch.device("cuda"):
        q = torch.randn(1, 8, 1, 128, dtype=torch.float16)
        k = torch.randn(1, 8, 512, 128, dtype=torch.float16)
        v = torch.randn(1, 8, 512, 128, dtype=torch.float16)

    def attention():
        y = q
        for _ in range(6):
            y = torch.nn.functional.scaled_dot_product_attention(y, k, v)
        return y

    def lane():
        with torch.device("cuda"):
            x = torch.randn(8, 2048, dtype=torch.float16)
            r = torch.randn(8, 2048, dtype=torch.float16)
            g = torch.ones(2048, dtype=torch.float16)
        return repeated(x, 6, lambda y, r=r, g=g: rms_norm(y + r, g))
    return lanes(2, lane, attention)


def gelu_lanes_beside_small_mlp_bf16():
    import torch
    nn = torch.nn
    mlp = nn.Sequential(nn.Linear(1024, 2816, bias=False), nn.SiLU(),
                        nn.Linear(2816, 1024, bias=False)).cuda().bfloat16().eval()
    x = torch.randn(4, 1024, device="cuda", dtype=torch.bfloat16)

    def mlp_lane():
        y = x
        for _ in range(3):
            y = mlp(y)
        return y

    def lane():
        with torch.device("cuda"):
            h = torch.randn(64, 1024, dtype=torch.bfloat16)
        return repeated(h, 8, lambda y: torch.nn.functional.gelu(y, approximate="tanh"))
    return lanes(3, lane, mlp_lane)


def two_lanes_of_bias_relu_scale_f32():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.randn(512, 1024)
            b = torch.randn(1024)
        return repeated(x, 10, lambda y, b=b: torch.relu(y + b) * 0.9)
    return lanes(2, lane)


def eight_lanes_of_written_out_silu_fp16():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.randn(16, 1024, dtype=torch.float16)
        return repeated(x, 6, lambda y: y * torch.sigmoid(y))
    return lanes(8, lane)


def three_lanes_of_log_softmax_exp_f32():
    import torch

    def lane():
        with torch.device("cuda"):
            x = torch.randn(16, 4096)
        return repeated(x, 6, lambda y: torch.exp(torch.log_softmax(y, dim=-1)) * 4096.0)
    return lanes(3, lane)


build = builder(131_69, {
    "kt_four_lanes_of_rotary_bf16": four_lanes_of_rotary_bf16,
    "kt_rmsnorm_lanes_beside_attention_fp16": rmsnorm_lanes_beside_attention_fp16,
    "kt_gelu_lanes_beside_small_mlp_bf16": gelu_lanes_beside_small_mlp_bf16,
    "kt_two_lanes_of_bias_relu_scale_f32": two_lanes_of_bias_relu_scale_f32,
    "kt_eight_lanes_of_written_out_silu_fp16": eight_lanes_of_written_out_silu_fp16,
    "kt_three_lanes_of_log_softmax_exp_f32": three_lanes_of_log_softmax_exp_f32,
})
