"""A clone's remote URL read as a hosted repository (owner/name and web page), and credentials scrubbed
from text that may quote a URL (git's error messages)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

_URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")  # credentials in a URL, to scrub from git's messages
_SCP_LIKE = re.compile(r"(?:[^@/\s]+@)?(?P<host>[^:/\s]+):(?P<path>[^/].*)")  # [user@]host:owner/name
_PATH_SEGMENT = re.compile(r"[\w.-]+")
_WEB_SCHEMES = {"https": "https", "http": "http", "ssh": "https", "git": "https", "git+ssh": "https"}
_HOST_ALIASES = {"ssh.github.com": "github.com"}  # GitHub's ssh-over-443 endpoint


@dataclass(frozen=True, slots=True)
class RemoteRepo:
    """A hosted repository read from a remote URL (never holds the URL or its credentials)."""

    name: str  # owner/name
    web_url: str  # https://host/owner/name


def parse_remote_url(url: str) -> RemoteRepo | None:
    """owner/name and web page of a remote such as https://github.com/o/n(.git), git@github.com:o/n.git or
    ssh://git@host/o/n.git; None for local paths, file:// URLs and paths that are not owner/name."""
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        web_scheme = _WEB_SCHEMES.get(parts.scheme.lower())
        try:
            host, port = parts.hostname, parts.port  # hostname drops user:password@
        except ValueError:
            return None
        if web_scheme is None or not host:
            return None
        keep_port = port is not None and parts.scheme.lower() == web_scheme  # an ssh port is not a web port
        path = parts.path
    else:
        match = _SCP_LIKE.fullmatch(url)
        if match is None:
            return None
        web_scheme, host, port, keep_port, path = "https", match["host"].lower(), None, False, match["path"]
    segments = [s for s in path.split("/") if s]
    if len(segments) != 2:
        return None
    owner, name = segments[0], segments[1].removesuffix(".git")
    if not (_PATH_SEGMENT.fullmatch(owner) and _PATH_SEGMENT.fullmatch(name)):
        return None
    host = _HOST_ALIASES.get(host, host)
    netloc = f"[{host}]" if ":" in host else host
    if keep_port:
        netloc = f"{netloc}:{port}"
    return RemoteRepo(f"{owner}/{name}", f"{web_scheme}://{netloc}/{owner}/{name}")


def redact(text: str) -> str:
    """Text without credentials embedded in URLs (https://user:token@host → https://host)."""
    return _URL_USERINFO.sub("", text)


def searched_where(repo: str, own: str, clone: object) -> str:
    """The repository a lookup searched, for its error: the clone's path and own name (`own`) beside the
    name it was asked for when that names something else (a URL of another repository with --git-dir), so
    the message does not send the user looking in the wrong place."""
    if (
        own.casefold() == repo.casefold()
        or own.rpartition("/")[2].casefold() == repo.rpartition("/")[2].casefold()
    ):
        return repo
    return f"{repo} (looked up in the clone at {clone}, which is {own})"
