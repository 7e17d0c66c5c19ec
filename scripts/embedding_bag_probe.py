#!/usr/bin/env python3
"""Where held-out batch 29's embedding bags beside an MLP spend their graph step: the walk's
two lanes captured alone and forked together, unprofiled (replays between events, medians),
the lookups with their tables shrunk to 64 Ki rows (so their random rows stay in the L2), and
the MLP in bf16 instead of f32 (cuBLAS's tensor-core kernels in place of its FMA ones).

    python3 scripts/embedding_bag_probe.py --out embedding_bag.json [--trials 15]

Needs a CUDA device and PyTorch.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from walk_parts import capture, corner, fork_join, fork_lanes, graph_times, probe_args  # noqa: E402


def main():
    args = probe_args(__doc__, 15)
    import torch
    f = torch.nn.functional
    torch.manual_seed(129_29)

    def tables_of(rows):
        with torch.device("cuda"):
            tables = [torch.nn.EmbeddingBag(rows, 64, mode="sum") for _ in range(4)]
            idx = [torch.randint(0, rows, (512 * 20,)) for _ in range(4)]
            offsets = torch.arange(0, 512 * 20, 20)

        def lookups():
            with torch.no_grad():
                return torch.cat([t(i, offsets) for t, i in zip(tables, idx)], dim=1)
        return lookups

    with torch.device("cuda"):
        dense = torch.randn(512, 256)
        mlp = [torch.nn.Linear(256, 512), torch.nn.Linear(512, 512), torch.nn.Linear(512, 256)]
        dense16 = dense.bfloat16()
        mlp16 = [torch.nn.Linear(m.in_features, m.out_features).bfloat16() for m in mlp]

    def mlp_of(x, layers):
        def run():
            with torch.no_grad():
                y = x
                for layer in layers:
                    y = f.relu(layer(y))
                return y
        return run
    bottom, bottom16 = mlp_of(dense, mlp), mlp_of(dense16, mlp16)

    big, small = tables_of(1_000_000), tables_of(64 * 1024)
    graphs = {
        "walk": capture(fork_join(lambda: corner(big()), lambda: corner(bottom()))),
        "lookups_alone": capture(fork_lanes([big])),
        "mlp_alone": capture(fork_lanes([bottom])),
        "lookups_64k_rows_alone": capture(fork_lanes([small])),
        "walk_64k_rows": capture(fork_join(lambda: corner(small()), lambda: corner(bottom()))),
        "mlp_bf16_alone": capture(fork_lanes([bottom16])),
        "walk_bf16_mlp": capture(fork_join(lambda: corner(big()), lambda: corner(bottom16()))),
    }
    out = graph_times(torch, graphs, args.trials)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
