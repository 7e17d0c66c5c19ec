"""Kernels of the validation walks' kinds side by side, two at a time: each walk is one kind
alone (`alone:KIND`, six of its kernels on a side stream) or two kinds (`pair:A+B`, six of A's
kernels on one side stream beside six of B's on another), for `scripts/validate.py`. How
far two chains of known kernels overlap in a graph is what `replay`'s stand-ins and `replay
--summary`'s sharing model (`crates/launch-econ/src/sharing.rs`) have to price; these walks
isolate it from the rest of a real step. Every kernel reads inputs of its own (no kernel finds
another's in the L2). Results: docs/validation-h200.md, "Kernels two at a time".

    python3 scripts/validate.py --out DIR --launch-econ target/release/launch-econ \
        --walk-module scripts/kernel_pair_walks.py \
        --walks $(python3 scripts/kernel_pair_walks.py | tr ' ' ,)

(`kernel_pair_walks.py experts` names the walks of the gated-MLP expert's kernels instead,
`kernel_pair_walks.py confine` the LayerNorms of 4 to 128 rows beside the 1024 GEMV and beside
themselves.)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from concurrent_walks import fork_join_n  # noqa: E402

COUNT = 6


def chain(kind):
    """COUNT kernels of `kind` one after another, each on inputs of its own; returns a
    function running them that returns one element of the last output."""
    import torch
    f = torch.nn.functional
    bf = torch.bfloat16
    with torch.device("cuda"):
        if kind == "gemv_4096":  # memory-bound cuBLAS GEMV, one block an SM
            xs = [(torch.randn(1, 4096, dtype=bf), torch.randn(4096, 4096, dtype=bf) * 0.02)
                  for _ in range(COUNT)]
            return lambda: [f.linear(x, w) for x, w in xs][-1].reshape(-1)[:1]
        if kind == "gemv_1024":  # latency-bound small GEMV
            xs = [(torch.randn(1, 1024, dtype=bf), torch.randn(1024, 1024, dtype=bf) * 0.02)
                  for _ in range(COUNT)]
            return lambda: [f.linear(x, w) for x, w in xs][-1].reshape(-1)[:1]
        if kind == "sdpa_8192":  # memory-bound decode attention, 8 heads over 8192 positions
            q = torch.randn(1, 8, 1, 128, dtype=bf)
            kv = [(torch.randn(1, 8, 8192, 128, dtype=bf), torch.randn(1, 8, 8192, 128, dtype=bf))
                  for _ in range(COUNT)]
            return lambda: [f.scaled_dot_product_attention(q, k, v)
                            for k, v in kv][-1].reshape(-1)[:1]
        if kind == "gemm_256":  # prefill-sized GEMM, 256 tokens, 2048 -> 8192
            xs = [(torch.randn(256, 2048, dtype=bf), torch.randn(8192, 2048, dtype=bf) * 0.02)
                  for _ in range(COUNT)]
            return lambda: [f.linear(x, w) for x, w in xs][-1].reshape(-1)[:1]
        if kind == "gemm_b32":  # batch-32 MLP GEMM, fp16 2560 -> 6912
            xs = [(torch.randn(32, 2560, dtype=torch.float16),
                   torch.randn(6912, 2560, dtype=torch.float16) * 0.02) for _ in range(COUNT)]
            return lambda: [f.linear(x, w) for x, w in xs][-1].reshape(-1)[:1].float().to(bf)
        if kind == "add_16m":  # memory-bound element-wise, many waves of blocks
            xs = [(torch.randn(1 << 24, dtype=bf), torch.randn(1 << 24, dtype=bf))
                  for _ in range(COUNT)]
            return lambda: [a + b for a, b in xs][-1][:1]
        if kind.startswith("norm_b"):  # small-grid normalisation, N rows x 4096: N blocks
            rows = int(kind[len("norm_b"):])
            xs = [torch.randn(rows, 4096, dtype=bf) for _ in range(COUNT)]
            return lambda: [f.layer_norm(x, (4096,)) for x in xs][-1].reshape(-1)[:1]
        # The kernels of a gated-MLP expert (`unseen_walks.gated_mlp_experts`, fp16, batch 8,
        # hidden 1536 -> 4096): the fused gate-and-up GEMM, the down GEMM (split-K) and the
        # gate's SiLU and product (two small element-wise kernels).
        h = torch.float16
        if kind == "up_b8":
            xs = [(torch.randn(8, 1536, dtype=h), torch.randn(8192, 1536, dtype=h) * 0.02)
                  for _ in range(COUNT)]
            return lambda: [f.linear(x, w) for x, w in xs][-1].reshape(-1)[:1].float().to(bf)
        if kind == "down_b8":
            xs = [(torch.randn(8, 4096, dtype=h), torch.randn(1536, 4096, dtype=h) * 0.02)
                  for _ in range(COUNT)]
            return lambda: [f.linear(x, w) for x, w in xs][-1].reshape(-1)[:1].float().to(bf)
        if kind == "silu_b8":
            xs = [torch.randn(8, 8192, dtype=h) for _ in range(COUNT)]

            def gate():
                out = None
                for x in xs:
                    a, b = x.chunk(2, dim=-1)
                    out = f.silu(a) * b
                return out.reshape(-1)[:1].float().to(bf)
            return gate
    raise KeyError(kind)


KINDS = ["gemv_4096", "gemv_1024", "sdpa_8192", "gemm_256", "gemm_b32", "add_16m", "norm_b32"]
# A second set: the gated-MLP expert's kernels, with the 4096 GEMV to compare across runs.
EXPERT_KINDS = ["up_b8", "down_b8", "silu_b8", "gemv_4096"]


# A third set: LayerNorms of 4 to 128 rows (one block a row) beside the 1024 GEMV, whose 128
# blocks each fill an SM's register file (168 registers x 384 threads) and leave the others
# 4 SMs of an H200, and beside themselves: how much longer a small kernel runs when it finds
# few SMs free, by how many of its blocks share each.
CONFINE_ROWS = [4, 8, 16, 32, 64, 128]


def confine_names():
    """The confinement set: the GEMV and each LayerNorm alone, each LayerNorm beside the
    GEMV and beside itself."""
    norms = [f"norm_b{r}" for r in CONFINE_ROWS]
    out = ["alone:gemv_1024"] + [f"alone:{n}" for n in norms]
    out += [f"pair:gemv_1024+{n}" for n in norms]
    out += [f"pair:{n}+{n}" for n in norms]
    return out


def names(kinds=KINDS):
    """Every walk of `kinds`: each kind alone, then every pair (a kind with itself
    included)."""
    out = [f"alone:{k}" for k in kinds]
    out += [f"pair:{a}+{b}" for i, a in enumerate(kinds) for b in kinds[i:]]
    return out


def build(name):
    import torch
    torch.manual_seed(17)
    what, _, kinds = name.partition(":")
    if what == "alone":
        return fork_join_n([chain(kinds)]), "torch"
    if what == "pair":
        a, _, b = kinds.partition("+")
        return fork_join_n([chain(a), chain(b)]), "torch"
    raise KeyError(name)


if __name__ == "__main__":
    # `python3 scripts/kernel_pair_walks.py [experts | confine | KIND,KIND,...]`: the walks'
    # names.
    arg = sys.argv[1] if len(sys.argv) > 1 else ""
    if arg == "confine":
        print(" ".join(confine_names()))
    else:
        kinds = EXPERT_KINDS if arg == "experts" else (arg.split(",") if arg else KINDS)
        print(" ".join(names(kinds)))
