"""Rewrite the quoted blocks of ``reports/README.md``'s leaderboard section from ``reports/leaderboard/index.md``.

The README's leaderboard claims are the pages' own sentences (``tests/test_reports_readme_leaderboard.py``):
each ``<!-- leaderboard-index:begin -->`` block quotes, verbatim, the index's lines for one page, named by the
first page link above the block (``pairs.md``, ``dense_pairs.md``, ``labels.md``, ``k_free.md``). A kind's
block holds its headline sentences in the pages' metric, the other metrics' headline against the best (issue
50, item 7: both metrics in the headline) and its tuned and k-free verdicts; the k-free board's block holds
its index line and the coverage line. Run after ``ccbench report ... --leaderboard`` (step 4 of
``sweeps/README.md``, "What runs next"), so that no sentence is pasted by hand:

    python sweeps/quote_index.py reports/README.md reports/leaderboard/index.md
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

BEGIN, END = "<!-- leaderboard-index:begin -->", "<!-- leaderboard-index:end -->"
_KIND = re.compile(r"^- (\w+) supervision: ")
_PAGE = re.compile(r"\(leaderboard/(\w+)\.md\)")


def index_lines(index: str) -> dict[str, list[str]]:
    """The index's lines per page: ``{kind: [its indented sentences]}``, and ``k_free`` (its bullet and the
    coverage line)."""
    out: dict[str, list[str]] = {}
    kind = None
    for line in index.splitlines():
        if m := _KIND.match(line):
            kind = m.group(1)
            out[kind] = []
        elif line.startswith("- the k-free board"):
            kind = None
            out["k_free"] = [line]
        elif line.startswith("Sweep coverage:") and "k_free" in out:
            out["k_free"].append(line)
        elif kind and line.startswith("  **"):
            out[kind].append(line.strip())
    return out


def _metric(sentence: str) -> str | None:
    m = re.match(r"\*\*[^`]*\(`(\w+)`", sentence)
    return m.group(1) if m else None


def quoted(lines: list[str], metric: str) -> list[str]:
    """What a kind's block quotes: every sentence in ``metric``, the tuned and k-free verdicts, and each other
    metric's headline against the best."""
    keep = []
    for line in lines:
        other = _metric(line)
        if other in (None, metric) or (line.startswith("**Headline (") and "against the best" in line):
            keep.append(line)
    return keep


def rewrite(readme: str, index: str, metric: str = "ari") -> str:
    """``readme`` with each quoted block replaced by its page's lines from ``index``."""
    pages = index_lines(index)
    parts = readme.split(BEGIN)
    out = [parts[0]]
    for part in parts[1:]:
        _, rest = part.split(END, 1)
        links = _PAGE.findall(out[-1].rstrip().rsplit("\n\n", 1)[-1])
        if not links or links[0] not in pages:
            raise SystemExit(f"quote_index: no page of the index named above a quoted block (found {links})")
        kind = links[0]
        lines = pages[kind] if kind == "k_free" else quoted(pages[kind], metric)
        out.append(BEGIN + "\n" + "\n\n".join(lines) + "\n\n" + END + rest)
    return "".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readme", type=Path)
    parser.add_argument("index", type=Path)
    parser.add_argument("--metric", default="ari", help="the pages' metric (ccbench report --metric)")
    opts = parser.parse_args(argv)
    try:
        readme, index = opts.readme.read_text(), opts.index.read_text()
    except OSError as exc:
        raise SystemExit(f"quote_index: {exc.filename}: {exc.strerror} (run ccbench report ... --leaderboard first)")
    text = rewrite(readme, index, opts.metric)
    opts.readme.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
