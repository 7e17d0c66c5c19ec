#!/usr/bin/env python3
"""Brings the README's pasted output of the commands that need no GPU (`predict`, `replay
--summary`) up to what a build prints, after a change to the offline model or its wording:
the test `readme_pastes` fails until they are (GPU pastes are measurements and are left).

Each pasted line that the command still prints is kept; one it no longer prints is replaced
by the first printed line after the last kept one that starts alike (its first 16
characters); a printed line the paste lacks is added where `--add` names a phrase it holds
(a new figure the README's example should show). What it changed goes to stdout; a pasted
line with no counterpart is reported and left for a person.

    python3 scripts/refresh_readme_pastes.py --launch-econ target/release/launch-econ \\
        [--readme README.md] [--add PHRASE ...] [--check]
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def offline(args):
    """Whether `launch-econ ARGS` touches no GPU."""
    return bool(args) and (args[0] == "predict" or (args[0] == "replay" and "--summary" in args))


def refresh(block, printed, add=()):
    """The paste `block` (its lines after the command) brought up to `printed`; with the
    lines it changed and those it could not place."""
    out, changed, unplaced, pos = [], [], [], 0
    for line in block:
        if not line.strip():
            out.append(line)
            continue
        if line in printed[pos:]:
            k = printed.index(line, pos)
        else:
            alike = [k for k in range(pos, len(printed)) if printed[k][:16] == line[:16]]
            if not alike:
                out.append(line)
                unplaced.append(line)
                continue
            k = alike[0]
            changed.append((line, printed[k]))
        # Printed lines between the last kept one and this one that hold an --add phrase.
        for extra in printed[pos:k]:
            if any(a in extra for a in add) and extra not in block:
                out.append(extra)
                changed.append((None, extra))
        out.append(printed[k])
        pos = k + 1
    return out, changed, unplaced


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--launch-econ", required=True)
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--add", action="append", default=[])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    args = ap.parse_args()
    binary = os.path.abspath(args.launch_econ)
    with open(args.readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, i, stale = [], 0, False
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if line.strip() != "```text" or i >= len(lines) or not lines[i].startswith("$ launch-econ "):
            continue
        command = lines[i]
        block = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            block.append(lines[i])
            i += 1
        cmd = command[len("$ launch-econ "):].split()
        if not offline(cmd):
            out += [command] + block
            continue
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        p = subprocess.run([binary] + cmd, capture_output=True, text=True, cwd=ROOT, env=env)
        if p.returncode != 0:
            sys.exit(f"launch-econ {' '.join(cmd)} failed: {p.stderr.strip()[-400:]}")
        new, changed, unplaced = refresh(block, (p.stdout + p.stderr).split("\n"), args.add)
        for old, now in changed:
            stale = True
            print(f"{command}\n  - {old}\n  + {now}" if old else f"{command}\n  + {now}")
        for line in unplaced:
            print(f"{command}\n  ? not printed, left as it is: {line}")
        out += [command] + new
    if args.check:
        sys.exit(1 if stale else 0)
    with open(args.readme, "w", encoding="utf-8") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
