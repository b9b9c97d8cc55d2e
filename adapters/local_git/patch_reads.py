"""A batch of commits' patch sections for LocalGitSource: from the source's long-running `git diff-tree --stdin`
(diff_tree.py), or from a `git log -p` of their own once that failed (an older git without --diff-merges)."""

from __future__ import annotations

import asyncio
import logging
import secrets
import subprocess

from adapters.local_git.diff_tree import DIFF_TREE_OPTIONS, DiffTree
from adapters.local_git.git_cli import DIFF_OPTIONS, GIT_TIMEOUT, LOG_OPTIONS, PATCH_OPTIONS, GitCli
from adapters.local_git.git_output import Patch, parse_patches, parse_tree_patches
from analysis.errors import SourceError

log = logging.getLogger(__name__)


class PatchReads(GitCli):
    """`_patches` over the git calls of GitCli; `_close_diffs` ends the diff-tree process, if one was started."""

    repo: str
    _diffs: DiffTree | None = None  # the long-running diff-tree, made on first use
    _diffs_failed = False  # it failed once: git log -p from then on

    async def _patches(self, shas: list[str]) -> dict[str, list[Patch]]:
        """Per commit sha (each once, in this order), its file sections (git_output.Patch)."""
        if not self._diffs_failed:
            if self._diffs is None:
                self._diffs = DiffTree(self._start_diff_tree, GIT_TIMEOUT)
            try:
                return parse_tree_patches(await asyncio.to_thread(self._diffs.patches, shas), shas)
            except SourceError as exc:
                log.warning("%s: reading patches with git log instead of git diff-tree: %s", self.repo, exc)
                self._close_diffs()
                self._diffs_failed = True
        nonce = secrets.token_hex(16)
        out = await self._git_async(
            "log", *LOG_OPTIONS, *PATCH_OPTIONS, f"--format={nonce}%H", stdin="\n".join(shas) + "\n"
        )
        return parse_patches(out, nonce.encode())

    def _start_diff_tree(self) -> subprocess.Popen[bytes]:
        args = [*DIFF_TREE_OPTIONS, *DIFF_OPTIONS, *PATCH_OPTIONS]
        return self._popen(args, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def _close_diffs(self) -> None:
        if self._diffs is not None:
            self._diffs.close()
            self._diffs = None
