"""reports/README.md's leaderboard claims are the pages' own sentences (issue 38: "the README's prose claims must
be regenerated from the pages' own numbers with their intervals"): every line of its quoted blocks is a line of
reports/leaderboard/index.md, which `ccbench report ... --leaderboard` writes from the shipped rows."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- leaderboard-index:begin -->", "<!-- leaderboard-index:end -->"


def _blocks(text: str) -> list[str]:
    assert text.count(BEGIN) >= 1 and text.count(BEGIN) == text.count(END), "reports/README.md lost its quoted leaderboard blocks"
    inner = [part.split(END)[0] for part in text.split(BEGIN)[1:]]
    return [line.strip() for block in inner for line in block.splitlines() if line.strip()]


def test_the_readme_quotes_the_leaderboard_index_verbatim():
    readme = (ROOT / "reports" / "README.md").read_text()
    index = {line.strip() for line in (ROOT / "reports" / "leaderboard" / "index.md").read_text().splitlines()}
    quoted = _blocks(readme)
    assert len(quoted) >= 3  # the three kinds' verdicts at least
    missing = [line for line in quoted if line not in index]
    assert not missing, f"reports/README.md says what reports/leaderboard/index.md does not: {missing[:2]}"


def test_no_quoted_sentence_is_quoted_twice_in_one_block():
    # a hand-pasted copy once put a kind's size-class sentence twice in a row
    readme = (ROOT / "reports" / "README.md").read_text()
    for block in [part.split(END)[0] for part in readme.split(BEGIN)[1:]]:
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        twice = sorted({line[:80] for line in lines if lines.count(line) > 1})
        assert not twice, f"reports/README.md quotes a sentence twice in one block: {twice}"


def test_the_quoted_blocks_are_what_sweeps_quote_index_writes_from_the_index():
    import importlib.util

    spec = importlib.util.spec_from_file_location("quote_index", ROOT / "sweeps" / "quote_index.py")
    quote_index = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(quote_index)
    readme = (ROOT / "reports" / "README.md").read_text()
    index = (ROOT / "reports" / "leaderboard" / "index.md").read_text()
    assert quote_index.rewrite(readme, index) == readme, "run: python sweeps/quote_index.py reports/README.md reports/leaderboard/index.md"


def test_quote_index_takes_each_block_from_the_page_named_above_it():
    import importlib.util

    spec = importlib.util.spec_from_file_location("quote_index", ROOT / "sweeps" / "quote_index.py")
    quote_index = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(quote_index)
    index = ("- pairs supervision: [pairs.md](pairs.md)\n  **Headline (`ari`) against `kmeans`:** P1.\n"
             "  **Headline (`nmi`) against `kmeans`:** P2.\n  **Headline (`nmi`) against the best, `x`:** P3.\n"
             "  **Tuned (section 1b):** P4.\n- labels supervision: [labels.md](labels.md)\n"
             "  **Headline (`ari`) against `kmeans`:** L1.\n")
    readme = (f"A ([labels.md](leaderboard/labels.md)):\n\n{BEGIN}\nold\n{END}\n\nB ([pairs.md](leaderboard/pairs.md)):"
              f"\n\n{BEGIN}\n{END}\ntail\n")
    out = quote_index.rewrite(readme, index)
    labels, pairs = [part.split(END)[0] for part in out.split(BEGIN)[1:]]
    assert "L1" in labels and "old" not in labels and "P1" not in labels
    assert all(p in pairs for p in ("P1", "P3", "P4")) and "P2" not in pairs and out.endswith("tail\n")
