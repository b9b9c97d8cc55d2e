"""What a user may type to name a commit (CLI `analyze`, chat `/digest`): a full or short SHA,
`#12345` (a pull request), a commit or pull-request URL, or `owner/name@sha`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from analysis.errors import InputError
from analysis.window import parse_day

REPO = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
_SHA = re.compile(r"^[0-9a-fA-F]{4,64}$")  # 64: a SHA-256 repository's full object name
_PR = re.compile(r"^(?:PR)?#?(\d{1,9})$", re.IGNORECASE)
_COMMIT_URL = re.compile(
    r"^https?://[^/\s]+/(?P<repo>[^/\s]+/[^/\s]+)/(?:commit|commits)/(?P<sha>[0-9a-fA-F]{4,64})(?:[/?#].*)?$"
)
_PR_URL = re.compile(r"^https?://[^/\s]+/(?P<repo>[^/\s]+/[^/\s]+)/pull/(?P<num>\d{1,9})(?:[/?#].*)?$")
_REPO_AT = re.compile(r"^(?P<repo>[^@\s]+/[^@\s]+)@(?P<rest>\S+)$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# A full object name as git and GitHub write it: SHA-1 (40) or SHA-256 (64) lower-case hex digits.
_FULL_OBJECT_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class Ref:
    kind: Literal["sha", "pr", "date"]
    value: str  # hex SHA (lower case), PR number, or ISO date
    repo: str | None  # None: the channel's / the command's default repository

    @property
    def pr_number(self) -> int:
        return int(self.value)

    @property
    def day(self) -> date:
        return date.fromisoformat(self.value)


def is_full_object_name(text: str) -> bool:
    """Whether `text` is a commit's or blob's full object name (safe to hand to git's stdin or a URL path)."""
    return bool(_FULL_OBJECT_NAME.fullmatch(text))


def check_repo(name: str) -> str:
    if not REPO.match(name):
        raise InputError(f"bad repository {name!r}: use OWNER/NAME, e.g. vllm-project/vllm")
    return name


def parse_ref(text: str, default_repo: str | None = None) -> Ref:
    """Parse a reference; raises InputError with a usage hint when it is none of the accepted forms."""
    raw = text.strip().strip("<>")  # Slack wraps URLs in <…>
    raw = raw.split("|", 1)[0]  # and may append |label
    if not raw:
        raise InputError("empty reference: give a SHA, #PR, a commit URL, owner/name@sha or a date")
    if m := _COMMIT_URL.match(raw):
        return Ref("sha", m.group("sha").lower(), check_repo(_strip_git(m.group("repo"))))
    if m := _PR_URL.match(raw):
        return Ref("pr", m.group("num"), check_repo(_strip_git(m.group("repo"))))
    repo = default_repo
    if m := _REPO_AT.match(raw):
        repo, raw = check_repo(m.group("repo")), m.group("rest")
    if _DAY.match(raw):
        return Ref("date", parse_day(raw).isoformat(), repo)
    if _SHA.match(raw) and not raw.isdigit():
        return Ref("sha", raw.lower(), repo)
    if (m := _PR.match(raw)) and (raw.startswith("#") or raw.upper().startswith("PR")):
        return Ref("pr", m.group(1), repo)
    if _SHA.match(raw):  # all digits, 4+ long, no '#': still a plausible short SHA
        return Ref("sha", raw, repo)
    raise InputError(
        f"cannot read {text.strip()[:80]!r} as a commit: use a SHA (abc1234), #PR, a commit URL,"
        " owner/name@sha or YYYY-MM-DD"
    )


def _strip_git(repo: str) -> str:
    return repo[:-4] if repo.endswith(".git") else repo
