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
