"""A local clone through the git CLI: the commit source (source.py), which commit a branch name reads
(branches.py), the files at a commit (file_reads.py), running git (git_cli.py), parsing its output
(git_output.py), a remote URL read as a hosted repository (remote.py)."""

from adapters.local_git.remote import RemoteRepo, parse_remote_url, redact
from adapters.local_git.source import LocalGitSource

__all__ = ["LocalGitSource", "RemoteRepo", "parse_remote_url", "redact"]
