"""Four walks written after held-out batch 31's run and the process-state probes that followed
it (no change to either price since batch 31 was run), before any run of them: a
SmolLM3-shaped decode at batch 8 (no rotary embedding on every fourth layer) and a Glm4-shaped
prefill of 64 tokens (partial rotary embedding, extra norms after attention and MLP), each on
one stream; a Llama-shaped decode at batch 4 beside speculative decoding's acceptance of the
previous step's draft (the target's probabilities of five draft tokens gathered, compared
with the draft's, the run of accepted tokens by cumprod, the bonus token by argmax); a
ControlNet-shaped branch of residual blocks (GroupNorm, SiLU, 3x3 convolutions, fp16) beside
the blocks of the UNet it conditions, each on a stream of its own.

    python3 scripts/validate_all.py --out DIR --groups heldout32
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_registry import builder  # noqa: E402
from walk_parts import corner as _corner  # noqa: E402
from walk_parts import decoder as _decoder  # noqa: E402


def decode_beside_draft_acceptance():
    import torch
    from walk_parts import fork_join, hf_decoder_step
    decode = hf_decoder_step("Llama", "bfloat16", 4, 1, vocab_size=32000, hidden_size=2048,
                             intermediate_size=5632, num_hidden_layers=4,
                             num_attention_heads=16, num_key_value_heads=4,
                             max_position_embeddings=2048)
    with torch.device("cuda"):
        target_logits = torch.randn(4, 6, 32000)
        draft_probs = torch.rand(4, 5)
        draft_tokens = torch.randint(0, 32000, (4, 5, 1))
        coins = torch.rand(4, 5)

    def accept():
        probs = target_logits.softmax(-1)
        target_p = probs[:, :5].gather(2, draft_tokens).squeeze(2)
        accepted = (coins < (target_p / draft_probs).clamp(max=1.0)).float().cumprod(1)
        length = accepted.sum(1).long()
        bonus = probs.argmax(-1).gather(1, length.unsqueeze(1))
        return bonus.float() + length.float().unsqueeze(1)
    return fork_join(lambda: _corner(decode()), lambda: _corner(accept()))


def res_blocks(channels, size, blocks):
    """A step through `blocks` residual blocks of `channels` over a batch of 2 `size`-square
    maps, fp16: GroupNorm(32), SiLU, 3x3 convolution, twice, plus the input."""
    import torch
    nn = torch.nn
    with torch.device("cuda"):
        def conv():
            return nn.Conv2d(channels, channels, 3, padding=1)
        layers = [nn.ModuleList([nn.GroupNorm(32, channels), conv(), nn.GroupNorm(32, channels),
                                 conv()]) for _ in range(blocks)]
        layers = [m.half().eval() for m in layers]
        x = torch.randn(2, channels, size, size, dtype=torch.float16)
    act = nn.functional.silu

    def run():
        with torch.no_grad():
            y = x
            for n1, c1, n2, c2 in layers:
                y = y + c2(act(n2(c1(act(n1(y))))))
            return y
    return run


def controlnet_beside_unet():
    from walk_parts import fork_join
    control, unet = res_blocks(320, 32, 2), res_blocks(640, 16, 3)
    return fork_join(lambda: _corner(control()), lambda: _corner(unet()))


build = builder(131_32, {
    "ih_smollm3_decode_b8": _decoder("SmolLM3", "bfloat16", 8, 1, hidden_size=2048,
                                     intermediate_size=5632, num_hidden_layers=8,
                                     num_attention_heads=16, num_key_value_heads=4,
                                     max_position_embeddings=2048, pad_token_id=0),
    "ih_glm4_prefill_64": _decoder("Glm4", "bfloat16", 1, 64, hidden_size=2048,
                                   intermediate_size=5632, num_hidden_layers=6,
                                   num_attention_heads=16, num_key_value_heads=2, head_dim=128,
                                   max_position_embeddings=2048, pad_token_id=0),
    "ih_decode_beside_draft_acceptance": decode_beside_draft_acceptance,
    "ih_controlnet_beside_unet": controlnet_beside_unet,
})
