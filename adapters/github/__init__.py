"""GitHub REST: the commit source (source.py), its JSON read into the domain (shapes.py), a branch's
first-parent chain (chain.py)."""

from adapters.github.shapes import commit_from_api, commit_from_detail
from adapters.github.source import GitHubSource

__all__ = ["GitHubSource", "commit_from_api", "commit_from_detail"]
