"""Where commits come from: the contract both sources (GitHub REST, a local git clone) fulfil,
and the factory that picks one from the CLI options."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from analysis.models import Commit

Progress = Callable[[int, int], None]  # (done, total)


class CommitSource(Protocol):
    repo: str  # owner/name

    async def commits_in_window(
        self, branch: str, start: datetime, end: datetime, progress: Progress | None = None
    ) -> list[Commit]:
        """Every commit of the branch's first-parent history whose committer date is in [start, end),
        newest first, with files and patches. Raises SourceError / RateLimited / InputError."""
        ...

    async def get_commit(self, ref: str) -> Commit:
        """A commit by full or short SHA. Raises RefNotFound or AmbiguousRef."""
        ...

    async def commit_for_pr(self, number: int, branch: str) -> Commit:
        """The commit that landed pull request #number on branch. Raises RefNotFound."""
        ...

    async def aclose(self) -> None: ...


def open_source(settings, store, repo: str | None, git_dir: Path | None) -> CommitSource:
    """A local clone when git_dir is given (no network, no token), GitHub otherwise."""
    from analysis.errors import InputError

    if git_dir is not None:
        from adapters.local_git import LocalGitSource

        return LocalGitSource(git_dir, repo=repo)
    if not repo:
        raise InputError("no repository: pass --repo OWNER/NAME or --git-dir PATH (or set DIGEST_REPO)")
    from adapters.github import GitHubSource

    return GitHubSource(
        repo,
        store=store,
        base_url=settings.github_api_url,
        token=settings.github_token.get_secret_value() if settings.github_token else None,
        concurrency=settings.github_concurrency,
        max_wait=settings.github_max_wait,
        timeout=settings.github_timeout,
    )


async def pick_branch(source: Any, branch: str | None, settings: Any) -> str:
    """--branch, else DIGEST_BRANCH when set, else the repository's own default branch."""
    if branch:
        return branch
    if "digest_branch" in settings.model_fields_set:
        return settings.digest_branch
    default = getattr(source, "default_branch", None)
    return await default() if default else settings.digest_branch
