"""The hand-labelled follow-up links (data/followup_links.jsonl) and how find_links scores on them.

Each line is one decision a maintainer took by reading the commits of a bundle (vllm main 2025-06..12,
pydantic main 2024-09..2026-08): a follow-up commit (sha, landing time, title and the relevant excerpt
of its message), the earlier commit it names or seems to name (null when it names nothing that
landed on the branch: an issue number, another repository's commit, a date), and the verdict:
`revert`, `fix` (fix-forward) or `none`. `named` is false for a revert or fix that names its original
only by paraphrase (recall counts only the links that name their original). `form` says which
pattern the decision exercises; `note` why the verdict is what it is.

The decisions of a repository make one mini-history, in landing order. Every link find_links draws
in it is checked: one a label confirms is right; one with another kind, one against a `none`, one from
an unnamed follow-up to a commit the label does not give, or one between commits no label pairs is
wrong. bench/bench_links.py prints the same figures.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from analysis.history.followups import FollowUpLink, PastCommit, find_links

DATA = Path(__file__).parent / "data" / "followup_links.jsonl"
KINDS = ("revert", "fix")


@dataclass(frozen=True, slots=True)
class Decision:
    id: str
    repo: str
    follow_up: str
    original: str | None
    verdict: str  # "revert", "fix" or "none"
    named: bool
    form: str
    note: str


@dataclass
class Score:
    """Links found against the labels, by kind."""

    right: Counter[str] = field(default_factory=Counter)  # links the labels confirm, by kind
    drawn: Counter[str] = field(default_factory=Counter)  # links find_links drew, by kind
    labelled: Counter[str] = field(default_factory=Counter)  # labelled links that name their original
    found: Counter[str] = field(default_factory=Counter)  # of those, found with the right kind
    wrong: list[str] = field(default_factory=list)  # "id: why" for every wrong link
    missed: list[str] = field(default_factory=list)  # ids of labelled named links not found

    def precision(self, kind: str | None = None) -> float:
        kinds = [kind] if kind else KINDS
        drawn = sum(self.drawn[k] for k in kinds)
        return sum(self.right[k] for k in kinds) / drawn if drawn else 1.0

    def recall(self, kind: str | None = None) -> float:
        kinds = [kind] if kind else KINDS
        labelled = sum(self.labelled[k] for k in kinds)
        return sum(self.found[k] for k in kinds) / labelled if labelled else 1.0


def load(path: Path = DATA) -> tuple[list[Decision], dict[str, dict[str, PastCommit]]]:
    """The decisions and, by repository, the commits they mention (one message per sha)."""
    decisions: list[Decision] = []
    commits: dict[str, dict[str, PastCommit]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        repo = commits.setdefault(row["repo"], {})
        for part in (row["follow_up"], row["original"]):
            if part is None:
                continue
            commit = PastCommit(part["sha"], datetime.fromisoformat(part["at"]), part["message"])
            if repo.setdefault(commit.sha, commit) != commit:
                raise ValueError(f"{row['id']}: {commit.sha} appears with two messages")
        original = row["original"]["sha"] if row["original"] else None
        decisions.append(
            Decision(
                row["id"],
                row["repo"],
                row["follow_up"]["sha"],
                original,
                row["verdict"],
                row["named"],
                row["form"],
                row["note"],
            )
        )
    return decisions, commits


Finder = Callable[[Sequence[PastCommit]], Sequence[FollowUpLink]]


def score(
    decisions: list[Decision], commits: dict[str, dict[str, PastCommit]], find: Finder = find_links
) -> Score:
    """How `find` (today's find_links, or another revision's for a benchmark) does on the decisions."""
    result = Score()
    for repo, by_sha in commits.items():
        mine = [d for d in decisions if d.repo == repo]
        links = {(link.original, link.follow_up): link for link in find(list(by_sha.values()))}
        _score_repo(mine, links, result)
    return result


def _score_repo(decisions: list[Decision], links: dict[tuple[str, str], FollowUpLink], result: Score) -> None:
    by_pair = {(d.original, d.follow_up): d for d in decisions if d.original}
    for pair, link in links.items():
        kind = link.kind.value
        result.drawn[kind] += 1
        decision = by_pair.get(pair)
        if decision is not None and decision.verdict == kind:
            result.right[kind] += 1
        elif decision is not None:
            result.wrong.append(f"{decision.id}: labelled {decision.verdict}, drawn {kind}")
        else:
            result.wrong.append(f"{pair[1][:10]} → {pair[0][:10]}: {kind} between commits no label pairs")
    for d in decisions:
        if d.verdict == "none" or not d.named or d.original is None:
            continue
        result.labelled[d.verdict] += 1
        link = links.get((d.original, d.follow_up))
        if link is not None and link.kind.value == d.verdict:
            result.found[d.verdict] += 1
        else:
            result.missed.append(d.id)


def counts(decisions: list[Decision]) -> dict[tuple[str, str], int]:
    """Decisions by (repository, verdict), for the report."""
    return dict(Counter((d.repo, d.verdict) for d in decisions))
