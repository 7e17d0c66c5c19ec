"""Four walks written after held-out batch 28 and the removal of the small-lanes points, before
any run of them: a Gemma-shaped decode at batch 4 on one stream, a Llama-shaped decode at
batch 8 beside a 128-token prefill chunk of a smaller Llama, a bf16 projection at 64 tokens
with two rank-16 adapters each on a lane of its own, and a recommender's embedding-bag lookups
beside its MLP at batch 512.

    python3 scripts/validate_all.py --out DIR --groups heldout29
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner  # noqa: E402
from walk_parts import decoder as _decoder  # noqa: E402


def decode_beside_prefill_chunk():
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "bfloat16", 8, 1, vocab_size=32000, hidden_size=2048,
                             intermediate_size=5632, num_hidden_layers=4,
                             num_attention_heads=16, num_key_value_heads=4,
                             max_position_embeddings=2048)
    chunk = hf_decoder_step("Llama", "bfloat16", 1, 128, vocab_size=32000, hidden_size=1024,
                            intermediate_size=2816, num_hidden_layers=4,
                            num_attention_heads=16, num_key_value_heads=4,
                            max_position_embeddings=2048)
    return fork_join(lambda: _corner(decode()), lambda: _corner(chunk()))


def projection_with_adapter_lanes():
    import torch
    from walk_parts import fork_lanes
    with torch.device("cuda"):
        x = torch.randn(64, 4096, dtype=torch.bfloat16)
        base = [torch.randn(4096, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(6)]
        downs = [[torch.randn(4096, 16, dtype=torch.bfloat16) * 0.01 for _ in range(6)]
                 for _ in range(2)]
        ups = [[torch.randn(16, 4096, dtype=torch.bfloat16) * 0.01 for _ in range(6)]
               for _ in range(2)]

    def base_lane():
        return [x @ w for w in base][-1]

    def adapter(k):
        def run():
            out = None
            for d, u in zip(downs[k], ups[k]):
                y = (x @ d) @ u * 0.5
                out = y if out is None else out + y
            return out
        return run
    return fork_lanes([base_lane, adapter(0), adapter(1)])


def embedding_bags_beside_mlp():
    import torch
    from walk_parts import fork_join
    f = torch.nn.functional
    with torch.device("cuda"):
        tables = [torch.nn.EmbeddingBag(1_000_000, 64, mode="sum") for _ in range(4)]
        idx = [torch.randint(0, 1_000_000, (512 * 20,)) for _ in range(4)]
        offsets = torch.arange(0, 512 * 20, 20)
        dense = torch.randn(512, 256)
        mlp = [torch.nn.Linear(256, 512), torch.nn.Linear(512, 512), torch.nn.Linear(512, 256)]

    def lookups():
        with torch.no_grad():
            return torch.cat([t(i, offsets) for t, i in zip(tables, idx)], dim=1)

    def bottom():
        with torch.no_grad():
            y = dense
            for layer in mlp:
                y = f.relu(layer(y))
            return y
    return fork_join(lambda: _corner(lookups()), lambda: _corner(bottom()))


build = builder(129_29, {
    "ie_gemma_decode_b4": _decoder("Gemma", "bfloat16", 4, 1, hidden_size=2048,
                                   intermediate_size=8192, num_hidden_layers=6,
                                   num_attention_heads=8, num_key_value_heads=1, head_dim=256,
                                   max_position_embeddings=2048),
    "ie_decode_beside_prefill_chunk": decode_beside_prefill_chunk,
    "ie_projection_with_adapter_lanes": projection_with_adapter_lanes,
    "ie_embedding_bags_beside_mlp": embedding_bags_beside_mlp,
})
