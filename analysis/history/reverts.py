"""Reverts within one day: a commit reverted later the same day must not read as if it stood."""

from __future__ import annotations

import re

from analysis.models import Analysis, Commit
from analysis.titles import PR_SUFFIX, REVERTS_SHA, leading_tags

_REVERT_OF = re.compile(r'^Revert\s+"(.+)"', re.IGNORECASE)  # the title git writes, naming the original


def reverted_by(commits: list[Commit]) -> dict[str, Commit]:
    """{sha of a reverted commit: the commit that reverts it}, for reverts among these commits, by the
    "This reverts commit <sha>" line git writes or a `Revert "<title>"` title."""
    by_title = {PR_SUFFIX.sub("", c.title): c for c in commits}
    result: dict[str, Commit] = {}
    for commit in commits:
        for prefix in REVERTS_SHA.findall(commit.message):
            target = next((c for c in commits if c.sha.startswith(prefix.lower()) and c is not commit), None)
            if target is not None:
                result[target.sha] = commit
        m = _REVERT_OF.match(leading_tags(PR_SUFFIX.sub("", commit.title))[1])
        if m and (target := by_title.get(m.group(1).strip())) is not None and target is not commit:
            result.setdefault(target.sha, commit)
    return result


def mark_reverted(analyses: dict[str, Analysis], commits: list[Commit], lang: str) -> dict[str, Analysis]:
    """Analyses with a note on every commit reverted later in the same list."""
    marked = dict(analyses)
    for sha, reverter in reverted_by(commits).items():
        if sha in marked:
            note = (
                f"该提交已在同一天被 {reverter.short_sha} 回滚，其改动不再生效。"
                if lang == "zh"
                else f"Reverted the same day by {reverter.short_sha}: this change no longer stands."
            )
            marked[sha] = marked[sha].model_copy(update={"notes": [note, *marked[sha].notes]})
    return marked
