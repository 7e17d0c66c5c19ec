"""Nine walks written after 616fb93 (a linear layer's bias in cuBLASLt's epilogue, and on one
stream math-bound `addmm`s with such a bias run for real), then run once with the version of
their day (docs/validation-h200.md, "Held-out batch 14"): transformers GPT-NeoX (prefill of
2 x 128 tokens), GPT-J (decode batch 16) and Starcoder2 (prefill of 256 tokens) shapes, and on several
streams: two branches of bf16 linear layers with biases at 512 tokens, TF32 linear layers with
biases on two streams, GELU over activations beside fp16 linear layers at 64 tokens, softmax over
attention scores beside batched matmuls, an embedding gather beside a bf16 MLP, and three
streams of fp16 linear layers with biases.

    python3 scripts/validate.py --out DIR --walk-module scripts/heldout_14_walks.py \\
        --walks hn_gptneox_prefill_2x128,hn_gptj_decode_b16,...
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import decoder as _decoder, linear_chain as _linear_chain  # noqa: E402


def bf16_linear_branches_b512():
    import torch
    from walk_parts import fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        a = [torch.nn.Linear(2048, 2048).bfloat16() for _ in range(3)]
        b = [torch.nn.Linear(2048, 2048).bfloat16() for _ in range(3)]
        xa, xb = randn(512, 2048, dtype=torch.bfloat16), randn(512, 2048, dtype=torch.bfloat16)
    return fork_join(_linear_chain(a, xa, f.gelu), _linear_chain(b, xb, f.gelu))


def tf32_linear_pair_b256():
    import torch
    from walk_parts import fork_join, randn
    torch.backends.cuda.matmul.allow_tf32 = True
    with torch.device("cuda"):
        a = [torch.nn.Linear(2048, 2048) for _ in range(4)]
        b = [torch.nn.Linear(2048, 2048) for _ in range(4)]
        xa, xb = randn(256, 2048, dtype=torch.float32), randn(256, 2048, dtype=torch.float32)
    return fork_join(_linear_chain(a, xa, torch.relu), _linear_chain(b, xb, torch.relu))


def gelu_beside_linear_b64():
    import torch
    from walk_parts import chain, fork_join, randn
    f = torch.nn.functional
    with torch.device("cuda"):
        acts = randn(8192, 4096)
        layers = [torch.nn.Linear(4096, 4096).half() for _ in range(4)]
        x = randn(64, 4096)
    gelus = chain(lambda i, y: f.gelu(acts if y is None else y), 4)
    return fork_join(lambda: gelus()[:64], _linear_chain(layers, x, lambda y: y))


def softmax_beside_bmm():
    import torch
    from walk_parts import chain, fork_join, randn
    with torch.device("cuda"):
        scores = randn(32, 512, 512)
        q, k = randn(32, 512, 64), randn(32, 64, 512)
    softmaxes = chain(lambda i, y: torch.softmax(scores if y is None else y, dim=-1), 4)
    bmms = chain(lambda i, y: torch.bmm(torch.bmm(q if y is None else y, k), q), 3)
    return fork_join(lambda: softmaxes()[:, :1, :64].sum(), lambda: bmms()[:, :1, :].sum())


def embedding_beside_mlp():
    import torch
    from walk_parts import fork_join, randn
    with torch.device("cuda"):
        table = torch.nn.Embedding(32000, 2048).bfloat16()
        ids = [torch.randint(0, 32000, (4096,)) for _ in range(4)]
        up = torch.nn.Linear(2048, 5632).bfloat16()
        down = torch.nn.Linear(5632, 2048).bfloat16()
        x = randn(256, 2048, dtype=torch.bfloat16)

    def gathers():
        return sum(table(i)[:256] for i in ids)
    return fork_join(gathers, lambda: down(torch.nn.functional.silu(up(x))))


def three_streams_linear_bias():
    import torch
    from walk_parts import fork_join, randn
    with torch.device("cuda"):
        layers = [[torch.nn.Linear(1024, 1024).half() for _ in range(4)] for _ in range(3)]
        xs = [randn(128, 1024) for _ in range(3)]
    chains = [_linear_chain(layers[j], xs[j], torch.tanh) for j in range(3)]
    side = fork_join(chains[1], chains[2])
    return fork_join(chains[0], side)


build = builder(114, {
    "hn_gptneox_prefill_2x128": _decoder("GPTNeoX", "float16", 2, 128, hidden_size=2048,
                                         intermediate_size=8192, num_hidden_layers=4,
                                         num_attention_heads=16, max_position_embeddings=2048),
    "hn_gptj_decode_b16": _decoder("GPTJ", "float16", 16, 1, n_embd=2048, n_layer=6,
                                   n_head=16, rotary_dim=64, n_positions=2048),
    "hn_starcoder2_prefill_256": _decoder("Starcoder2", "float16", 1, 256, hidden_size=1536,
                                          intermediate_size=6144, num_hidden_layers=6,
                                          num_attention_heads=12, num_key_value_heads=2,
                                          max_position_embeddings=2048),
    "hn_bf16_linear_branches_b512": bf16_linear_branches_b512,
    "hn_tf32_linear_pair_b256": tf32_linear_pair_b256,
    "hn_gelu_beside_linear_b64": gelu_beside_linear_b64,
    "hn_softmax_beside_bmm": softmax_beside_bmm,
    "hn_embedding_beside_mlp": embedding_beside_mlp,
    "hn_three_streams_linear_bias": three_streams_linear_bias,
})
