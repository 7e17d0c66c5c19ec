"""Long documents' sections: a contents list, and the citations of them elsewhere.

The validation log (docs/validation-h200.md) grows a section a change, newest first, and the
README, the code's comments and the scripts cite its sections, and the README's, by title
(`docs/validation-h200.md, "Two levels"`, `README, "The offline model"`). `contents` writes
the list of a document's `## ` sections between the lines `<!-- contents -->` and
`<!-- /contents -->` (with --check: exits 1 where it is stale); `refs` checks that every
citation of a document in the repository's tracked files names one of its headings or bold
run-in titles (a part of it, `…` for words left out), so that a renamed section cannot leave a
reader hunting. The scripts' tests run both checks.

    python3 scripts/doc_sections.py contents docs/validation-h200.md
    python3 scripts/doc_sections.py contents --check docs/validation-h200.md
    python3 scripts/doc_sections.py refs docs/validation-h200.md README.md
"""
import argparse
import os
import re
import subprocess
import sys

OPEN, CLOSE = "<!-- contents -->", "<!-- /contents -->"

# How each document is cited: its name (or what the text calls it), then the title in double
# quotes. A bare `section "…"` is the validation log's, as the repository writes it.
CITED_AS = {
    "validation-h200.md": r"validation doc|validation-h200\.md|\bsection",
    "README.md": r"\bREADME",
}
# A bold run-in title at a paragraph's start: `**Title.**`.
RUN_IN = re.compile(r"^\s*(?:[-*] |\d+\. )?\*\*(.+?)\*\*")


def anchor(title, seen):
    """GitHub's anchor for a heading `title`: lower case, every character but letters,
    digits, spaces, hyphens and underscores dropped, spaces to hyphens; a repeated anchor
    gets -1, -2, … (`seen` counts them)."""
    a = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
    n = seen.get(a, 0)
    seen[a] = n + 1
    return a if n == 0 else f"{a}-{n}"


def outside_code(lines):
    """`lines` outside fenced code blocks."""
    fenced = False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield line


def sections(lines):
    """The `## ` headings of `lines`, in order."""
    return [line[3:].strip() for line in outside_code(lines) if line.startswith("## ")]


def titles(lines):
    """Everything a citation may name: every heading's text and every bold run-in title."""
    out = []
    for line in outside_code(lines):
        if line.startswith("#"):
            out.append(line.lstrip("#").strip())
        elif m := RUN_IN.match(line):
            out.append(m.group(1))
    return out


def contents(lines):
    """The contents list of `lines`, as lines."""
    seen = {}
    return [f"- [{title}](#{anchor(title, seen)})" for title in sections(lines)]


def with_contents(text):
    """`text` with its contents list made anew. A document without the markers gets them
    before its first `## ` heading."""
    lines = text.split("\n")
    toc = contents(lines)
    if OPEN in lines and CLOSE in lines:
        start, end = lines.index(OPEN), lines.index(CLOSE)
        if end < start:
            raise ValueError(f"{CLOSE} comes before {OPEN}")
        return "\n".join(lines[:start + 1] + toc + lines[end:])
    first = next((i for i, line in enumerate(lines) if line.startswith("## ")), None)
    if first is None:
        raise ValueError("no `## ` section to list")
    return "\n".join(lines[:first] + ["**Contents**", "", OPEN] + toc + [CLOSE, ""] + lines[first:])


def plain(s):
    """`s` compared loosely: no backticks, one space between words, lower case."""
    return re.sub(r"\s+", " ", s.replace("`", "")).strip().lower()


def names(citation, title):
    """Whether `citation` names `title`: its parts (split at `…` or `...`) in it, in order."""
    at = 0
    for part in (plain(p) for p in re.split(r"…|\.\.\.", citation)):
        if not part:
            continue
        at = title.find(part, at)
        if at < 0:
            return False
        at += len(part)
    return True


def prose(text):
    """`text` with comment leaders (`//!`, `///`, `//`, `#`) taken off each line and the lines
    joined, so that a citation broken over comment lines reads whole."""
    return " ".join(re.sub(r"^\s*(?://[!/]?|#)\s?", "", line) for line in text.split("\n"))


def citation_pattern(document):
    """What a citation of a section of `document` (a path) looks like."""
    name = os.path.basename(document)
    if name not in CITED_AS:
        raise ValueError(f"no known way of citing {name} (known: {', '.join(CITED_AS)})")
    return re.compile(rf'(?:{CITED_AS[name]})\)?,?\s+(?:section\s+)?"([^"]{{3,200}})"')


def citations(pattern, text):
    """The section titles `text` cites by `pattern`."""
    return [m.group(1) for m in pattern.finditer(prose(text))]


def stale_citations(document, lines, files):
    """(file, citation) for every citation of `document` (its path; `lines` its text) in
    `files` (path, text) that names none of its titles."""
    pattern = citation_pattern(document)
    known = [plain(t) for t in titles(lines)]
    return [(path, c) for path, text in files for c in citations(pattern, text)
            if not any(names(c, t) for t in known)]


def tracked_texts(root):
    """(path, text) of the Markdown, Rust and Python files git tracks under `root`."""
    listed = subprocess.run(["git", "-C", root, "ls-files", "*.md", "*.rs", "*.py"],
                            capture_output=True, text=True, check=True).stdout.split()
    for path in listed:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            yield path, f.read()


def refs(documents, root):
    """Checks every citation of `documents` in the tracked files under `root`; 1 where one
    names no section (each said on stderr)."""
    try:
        files = list(tracked_texts(root))
        stale = []
        for document in documents:
            with open(document, encoding="utf-8") as f:
                lines = f.read().split("\n")
            stale += [(document, path, c) for path, c in stale_citations(document, lines, files)]
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        sys.exit(f"doc_sections: {e}")
    for document, path, c in stale:
        print(f'{path}: cites "{c}", which names no section of {document}', file=sys.stderr)
    return 1 if stale else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="job", required=True)
    c = sub.add_parser("contents", help="write (or check) the log's contents list")
    c.add_argument("document")
    c.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 where the list is missing or stale")
    r = sub.add_parser("refs", help="check that citations of documents' sections name one")
    r.add_argument("documents", nargs="+")
    r.add_argument("--root", default=".", help="the git checkout whose files are read")
    args = ap.parse_args(argv)
    if args.job == "refs":
        return refs(args.documents, args.root)
    try:
        with open(args.document, encoding="utf-8") as f:
            text = f.read()
        new = with_contents(text)
    except (OSError, ValueError) as e:
        sys.exit(f"doc_sections: {args.document}: {e}")
    if args.check:
        if new != text:
            print(f"{args.document}: contents list stale; run scripts/doc_sections.py contents "
                  f"{args.document}", file=sys.stderr)
            return 1
        return 0
    if new != text:
        with open(args.document, "w", encoding="utf-8") as f:
            f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
