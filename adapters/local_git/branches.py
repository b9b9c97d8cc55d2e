"""Which commit a branch name reads in a local clone: refs/heads/<name>, unless a fetch left it behind
refs/remotes/<remote>/<name> (then that one, said once), else the remote-tracking branch, else any name git
resolves; and how old a branch's tip is, for a day the clone has nothing of."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

from adapters.local_git.git_cli import GitCli
from adapters.local_git.git_output import stamped, text_of
from analysis.errors import InputError

log = logging.getLogger(__name__)

KEPT = 64  # pairs of tips (_fresher) and tips' dates (_tip_before) remembered per source


class BranchReads(GitCli):
    """Branch resolution of bot.ports.protocols.CommitSource over a local clone, over the git calls of GitCli."""

    repo: str
    remote: str
    _fresher_of: dict[tuple[str, str, str], str]  # set by the source: (branch, local, tracking) → read
    _tip_times: dict[str, int]  # set by the source: a tip's committer date (Unix seconds)

    async def _resolve_branch(self, branch: str) -> str:
        name = branch.strip()
        if name:
            local, tracking = await self._branch_refs(name)
            if local and tracking:
                return await self._fresher(name, local, tracking)
            sha = local or tracking or await self._commit_of(name)
            if sha:
                return sha
        known = await self._known_branches()
        listed = ", ".join(known[:20]) + (f", … ({len(known) - 20} more)" if len(known) > 20 else "")
        raise InputError(f"unknown branch {branch!r} in {self.repo}; known branches: {listed or '(none)'}")

    async def _branch_refs(self, name: str) -> tuple[str | None, str | None]:
        """The commits refs/heads/<name> and refs/remotes/<remote>/<name> point at (None: no such branch),
        in one call."""
        refs = (f"refs/heads/{name}", f"refs/remotes/{self.remote}/{name}")
        fmt = "%(refname)%00%(objecttype)%00%(objectname)%00%(*objecttype)%00%(*objectname)"
        out = await self._git_async("for-each-ref", f"--format={fmt}", *refs)  # refs/…: never an option
        found: dict[str, str] = {}
        for line in text_of(out).splitlines():
            ref, kind, sha, peeled_kind, peeled = (line.split("\0") + [""] * 5)[:5]
            if kind == "commit" or peeled_kind == "commit":
                found[ref] = sha if kind == "commit" else peeled  # an annotated tag's commit (^{commit})
        return found.get(refs[0]), found.get(refs[1])

    async def _fresher(self, name: str, local: str, tracking: str) -> str:
        """The branch to read when both the local branch and the remote-tracking one exist: the remote-tracking
        one when the local branch is strictly behind it (a plain `git fetch` moves only origin/<name>: the
        local branch would read days that never come), else the local one (ahead, or diverged: said once).
        One git call per pair of tips, remembered."""
        if local == tracking:
            return local
        key = (name, local, tracking)
        if key not in self._fresher_of:
            out = await self._git_async("rev-list", "--left-right", "--count", f"{local}...{tracking}")
            only_local, only_tracking = (int(n) for n in text_of(out).split())
            remote_name = f"{self.remote}/{name}"
            chosen = local
            if only_local == 0 and only_tracking:
                chosen = tracking
                log.warning(
                    "%s: local branch %r is %d commit(s) behind %r (a fetch that did not move it): reading %s",
                    self.repo, name, only_tracking, remote_name, remote_name,
                )  # fmt: skip
            elif only_local and only_tracking:
                log.warning(
                    "%s: local branch %r and %r have diverged (%d and %d commit(s) of their own): reading the"
                    " local branch; update it (git pull) if %s is the one to report",
                    self.repo, name, remote_name, only_local, only_tracking, remote_name,
                )  # fmt: skip
            if len(self._fresher_of) >= KEPT:
                self._fresher_of.pop(next(iter(self._fresher_of)))
            self._fresher_of[key] = chosen
        return self._fresher_of[key]

    async def _commit_of(self, ref: str) -> str | None:
        proc = await asyncio.to_thread(
            self._spawn, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"]
        )
        return text_of(proc.stdout).strip() if proc.returncode == 0 else None

    async def _known_branches(self) -> list[str]:
        out = await self._git_async(
            "for-each-ref", "--format=%(refname:short)", "refs/heads/", f"refs/remotes/{self.remote}/"
        )
        names = [n for n in text_of(out).splitlines() if n and not n.endswith("/HEAD") and n != self.remote]
        return list(dict.fromkeys(names))

    async def _tip_before(self, tip: str, start: datetime) -> datetime | None:
        """tip's committer date (UTC) when before start, else None: one small call per tip, remembered."""
        if tip not in self._tip_times:
            if len(self._tip_times) >= KEPT:
                self._tip_times.pop(next(iter(self._tip_times)))
            walked = stamped(await self._git_async("rev-list", "--no-walk", "--timestamp", tip))
            self._tip_times[tip] = walked[0][0] if walked else 0
        stamp = self._tip_times[tip]
        return datetime.fromtimestamp(stamp, UTC) if stamp < start.timestamp() else None
