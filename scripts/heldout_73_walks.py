"""Six walks written after 53cdedd (an element-wise kernel of a walk within the L2 asks up to the
L2's bandwidth; an `out=` tensor is written, not read) and before a per-block lane cost
(each other lane costs a node more by its kernel's blocks; no small-pair floor among lanes
within the L2), before any run: the first test of both, on lanes of element-wise kernels
from a few blocks to thousands, two to six lanes, every walk's data within two thirds of a
50 MiB L2. Two fp16 lanes of GELU over 1 Mi elements (8 passes); three bf16 lanes of
sigmoid-gated products over 16 x 256 (12 passes); four f32 lanes of residual adds and a
scaling over 256 Ki elements (6 passes); six fp16 lanes of a scale and shift over 32 Ki
elements (8 passes); two f32 lanes of softplus over 512 Ki elements (6 passes) beside two
lanes of tanh over 4 Ki; three bf16 lanes of clamped exponentials over 2 Ki, 128 Ki and
1 Mi elements side by side (10 passes).

    python3 scripts/validate_all.py --out DIR --groups heldout73
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import lanes_step as lanes, no_grad_step, fork_lanes, lane_of  # noqa: E402
from walk_registry import builder  # noqa: E402


def two_lanes_of_gelu_fp16():
    import torch
    return lanes(2, lambda: lane_of((1 << 20,), torch.float16, 8,
                                    torch.nn.functional.gelu))


def three_lanes_of_sigmoid_gates_bf16():
    import torch
    return lanes(3, lambda: lane_of((16, 256), torch.bfloat16, 12,
                                    lambda y: y * torch.sigmoid(y)))


def four_lanes_of_residual_scales_f32():
    import torch

    def lane():
        with torch.device("cuda"):
            r = torch.randn(1 << 18)
        return lane_of((1 << 18,), torch.float32, 6, lambda y, r=r: (y + r) * 0.5)
    return lanes(4, lane)


def six_lanes_of_scale_shift_fp16():
    import torch
    return lanes(6, lambda: lane_of((1 << 15,), torch.float16, 8, lambda y: y * 0.9 + 0.1))


def softplus_lanes_beside_small_tanh_lanes_f32():
    import torch
    softplus = [lane_of((1 << 19,), torch.float32, 6, torch.nn.functional.softplus)
                for _ in range(2)]
    tanh = [lane_of((1 << 12,), torch.float32, 6, torch.tanh) for _ in range(2)]
    return no_grad_step(fork_lanes(softplus + tanh))


def clamped_exp_lanes_of_three_sizes_bf16():
    import torch
    return no_grad_step(fork_lanes([
        lane_of((n,), torch.bfloat16, 10, lambda y: torch.exp(y.clamp(-4.0, 4.0)) * 0.05)
        for n in (1 << 11, 1 << 17, 1 << 20)]))


build = builder(131_73, {
    "kx_two_lanes_of_gelu_fp16": two_lanes_of_gelu_fp16,
    "kx_three_lanes_of_sigmoid_gates_bf16": three_lanes_of_sigmoid_gates_bf16,
    "kx_four_lanes_of_residual_scales_f32": four_lanes_of_residual_scales_f32,
    "kx_six_lanes_of_scale_shift_fp16": six_lanes_of_scale_shift_fp16,
    "kx_softplus_lanes_beside_small_tanh_lanes_f32": softplus_lanes_beside_small_tanh_lanes_f32,
    "kx_clamped_exp_lanes_of_three_sizes_bf16": clamped_exp_lanes_of_three_sizes_bf16,
})
