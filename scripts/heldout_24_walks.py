"""Seven walks written after the replay of a walk with branches began to run after eight
launches by default (the state of a framework's process, `launch_econ::prior_streams`) and
before any run of them; six on several streams, of kinds the batches before did not hold: a
BERT encoder's batch beside a Llama decode, four Medusa-style draft heads forked from one
Llama decode, four expert MLPs behind a router's top-k, a GPT-NeoX decode beside a Qwen2
32-token prefill, two Phi-3 decodes of batches 1 and 16 side by side and KV-cache appends
beside a decode; and one on one stream (a Qwen3 decode at batch 8), which the new default
leaves as it was.

    python3 scripts/validate_all.py --out DIR --groups heldout24
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import LLAMA_SMALL as SMALL, LLAMA_MID as MID  # noqa: E402
from walk_parts import corner as _corner, decoder, fork_lanes  # noqa: E402


def bert_encoder_beside_decode():
    import torch
    from walk_parts import fork_join, hf_decoder_step, hf_model
    decode = hf_decoder_step("Llama", "bfloat16", 2, 1, **MID)
    bert = hf_model("Bert", "float16", "Model", hidden_size=768, num_hidden_layers=6,
                    num_attention_heads=12, intermediate_size=3072, vocab_size=30522)
    ids = torch.randint(0, 30522, (8, 64), device="cuda")

    def encode():
        with torch.no_grad():
            return bert(input_ids=ids).last_hidden_state
    return fork_join(lambda: _corner(decode()), lambda: _corner(encode()))


def medusa_heads_b1():
    import torch
    from walk_parts import hf_model
    base = hf_model("Llama", "bfloat16", **SMALL)
    heads = []
    with torch.device("cuda"):
        for _ in range(4):
            heads.append(torch.nn.Sequential(
                torch.nn.Linear(1024, 1024), torch.nn.SiLU(),
                torch.nn.Linear(1024, 32000, bias=False)).to(torch.bfloat16))
    ids = torch.randint(0, 32000, (1, 1), device="cuda")
    mask = torch.ones(1, 1, 1, 1, dtype=torch.bool, device="cuda")
    fork = fork_lanes(heads)

    def step():
        with torch.no_grad():
            h = base.model(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state
            return fork(h[:, -1])
    return step


def four_experts_with_router_b8():
    import torch
    f = torch.nn.functional
    with torch.device("cuda"):
        x = torch.randn(8, 2048, dtype=torch.bfloat16)
        router = torch.nn.Linear(2048, 4, bias=False).to(torch.bfloat16)
        experts = [[torch.nn.Linear(2048, 5632, bias=False).to(torch.bfloat16) for _ in range(2)]
                   + [torch.nn.Linear(5632, 2048, bias=False).to(torch.bfloat16)]
                   for _ in range(4)]

    def mlp(e):
        gate, up, down = e
        return lambda h: down(f.silu(gate(h)) * up(h))
    fork = fork_lanes([mlp(e) for e in experts])

    def step():
        with torch.no_grad():
            weights, _ = torch.topk(router(x).float().softmax(-1), 2, dim=-1)
            return fork(x) * weights.sum()
    return step


def gptneox_beside_qwen2_prefill():
    from walk_parts import fork_join, hf_decoder_step
    neox = hf_decoder_step("GPTNeoX", "float16", 4, 1, hidden_size=2048, intermediate_size=8192,
                           num_hidden_layers=6, num_attention_heads=16, vocab_size=32000,
                           max_position_embeddings=2048)
    qwen = hf_decoder_step("Qwen2", "float16", 1, 32, **SMALL)
    return fork_join(lambda: _corner(neox()), lambda: _corner(qwen()))


def two_phi3_decodes():
    from walk_parts import fork_join, hf_decoder_step
    cfg = dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=6,
               num_attention_heads=16, max_position_embeddings=2048, vocab_size=32064,
               pad_token_id=0)
    a = hf_decoder_step("Phi3", "bfloat16", 1, 1, **cfg)
    b = hf_decoder_step("Phi3", "bfloat16", 16, 1, **cfg)
    return fork_join(lambda: _corner(a()), lambda: _corner(b()))


def kv_append_beside_decode():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "bfloat16", 4, 1, **MID)
    with torch.device("cuda"):
        caches = [torch.zeros(4, 4, 2048, 128, dtype=torch.bfloat16) for _ in range(12)]
        new = torch.randn(4, 4, 16, 128, dtype=torch.bfloat16)
        at = torch.arange(1000, 1016)

    def append():
        for c in caches:
            c.index_copy_(2, at, new)
        return caches[-1][:, :, 1000]
    return fork_join(lambda: _corner(decode()), lambda: _corner(append()))


build = builder(124, {
    "hz_bert_encoder_beside_decode": bert_encoder_beside_decode,
    "hz_medusa_heads_b1": medusa_heads_b1,
    "hz_four_experts_with_router_b8": four_experts_with_router_b8,
    "hz_gptneox_beside_qwen2_prefill": gptneox_beside_qwen2_prefill,
    "hz_two_phi3_decodes": two_phi3_decodes,
    "hz_kv_append_beside_decode": kv_append_beside_decode,
    "hz_qwen3_decode_b8": decoder("Qwen3", "bfloat16", 8, 1, hidden_size=2048,
                                  intermediate_size=6144, num_hidden_layers=8,
                                  num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                                  max_position_embeddings=2048),
})
