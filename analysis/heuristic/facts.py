"""The facts every rule looks at, computed once per commit: path kinds, areas (folders), the title's
tags and subject, the message body, the size for the prior, kernel files, the patches read, which files
only change prose, and which files change what users run.

What users run: when the packaging says what it ships (`Commit.shipped`), a shipped file is runtime code
whatever its folder is called (`pkg/v1/sample/` included) and a Python file it does not ship is not
(an example or tutorial tree, a script), while sources in other languages stay runtime code (packaging
metadata rarely lists the sources of compiled extensions). Without packaging facts, the path kinds
decide (docs, tests, CI, examples, benchmarks and dev tooling are not runtime code). Either way a file
whose every changed line is a comment, docstring or message text is prose, not code: read from its patch
(text_only.py), or, for a Python file the surface step parsed before and after, from its syntax trees
(`Commit.prose_files`), which also see through a hunk that starts inside a docstring holding code examples."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from analysis.heuristic.code_lines import code_only
from analysis.heuristic.text_only import prose_only
from analysis.models import Commit, FileChange
from analysis.paths import (
    PathKind,
    builds_what_ships,
    classify_path,
    is_low_value,
    kind_in,
    language_of,
    review_priority,
)
from analysis.surface.packaging_files import is_dev_requirements, is_packaging_file, is_requirements_file
from analysis.surface.release_entries import Entry, declared_entries
from analysis.text import strip_trailers, without_squash_list
from analysis.titles import (
    PR_SUFFIX,
    REVERTS_SHA,
    REVERTS_SHA_LINE,
    declares_no_functional_change,
    is_revert_title,
    leading_tags,
    message_title,
)

# Patch text scanned per signal: keeps a 3000-file commit fast; the rest is counted but not read.
_PATCH_BUDGET = 250_000
_PER_FILE_PATCH_CAP = 60_000
AREA_DEPTH = 3  # folder segments that name an area

# What the message says about security: an advisory id (CVE, GHSA) anywhere in it, and security words,
# which count only in the title, where they are a claim about the change.
ADVISORY = re.compile(r"\b(CVE-\d{4}-\d{4,}|GHSA(?:-[0-9a-z]{4}){3})\b", re.IGNORECASE)
SECURITY_WORDS = re.compile(
    r"\b(security|vulnerab\w*|exploit\w*|xss|csrf|ssrf|rce|privilege escalation|auth(?:entication)? bypass|"
    r"path traversal|directory traversal|arbitrary code|unsafe deseriali[sz]ation|sandbox escape"
    # a comparison of secrets made constant-time is a timing-attack fix; "constant time" alone may be a speed-up
    r"|timing attacks?|timing side[- ]channels?|constant[- ]time\s+(?:compar\w*|equal\w*|check\w*)"
    r"|(?:tokens?|secrets?|passwords?|keys?|signatures?|digests?)\b[^.\n]{0,30}?\bin\s+constant[- ]time)\b",
    re.IGNORECASE,
)

NON_RUNTIME = frozenset(
    {PathKind.DOCS, PathKind.EXAMPLE, PathKind.TESTS, PathKind.BENCHMARK, PathKind.CI, PathKind.TOOLING}
)


@dataclass(frozen=True, slots=True)
class Area:
    name: str  # folder path, "" for the repository root
    files: int
    lines: int
    kinds: tuple[PathKind, ...]  # most common first
    unshipped: bool = False  # its Python sources are not in what the packaging ships (an example tree)


def _areas(
    files: tuple[FileChange, ...], kinds: tuple[PathKind, ...], shipped: frozenset[str] | None = None
) -> list[Area]:
    """Folders touched (up to three segments deep: `pkg/model_executor/models`), most files first."""
    groups: dict[str, list[tuple[FileChange, PathKind]]] = {}
    for f, k in zip(files, kinds, strict=True):
        groups.setdefault(folder(f.path, AREA_DEPTH), []).append((f, k))
    areas = [
        Area(
            name,
            len(members),
            sum(f.changes for f, _ in members),
            common_kinds(k for _, k in members),
            _unshipped(members, shipped),
        )
        for name, members in groups.items()
    ]
    return sorted(areas, key=lambda a: (-a.files, -a.lines, a.name))


def _unshipped(members: list[tuple[FileChange, PathKind]], shipped: frozenset[str] | None) -> bool:
    sources = [f.path for f, k in members if k == PathKind.SOURCE and language_of(f.path) == "python"]
    return shipped is not None and bool(sources) and not any(p in shipped for p in sources)


def folder(path: str, depth: int) -> str:
    segments = [s for s in path.replace("\\", "/").split("/") if s]
    return "/".join(segments[:-1][:depth])


def common_kinds(kinds: Iterable[PathKind]) -> tuple[PathKind, ...]:
    return tuple(k for k, _ in Counter(kinds).most_common())


@dataclass(frozen=True, slots=True)
class Facts:
    commit: Commit
    files: tuple[FileChange, ...]
    kinds: tuple[PathKind, ...]  # parallel to files
    tags: tuple[str, ...]  # title tags, normalised ("bugfix", "ci/build", ...)
    subject: str  # title without tags and "(#123)"
    body: str  # message body without title and trailers
    counted_lines: int  # size for the prior: commit totals minus low-value files' lines
    ignored_lines: int
    areas: tuple[Area, ...]  # folders touched, most files first
    kernels: tuple[str, ...]  # paths of GPU / native kernel code
    by_path: dict[str, FileChange]
    diffs: dict[str, Diff]  # patches read within the scan budget, by path
    prose: frozenset[str]  # source files whose changed lines are all comments, docstrings or message text
    runtime: frozenset[str]  # files whose change reaches what users run (see the module docstring)
    reverts: bool  # the title says it reverts (a revert title or tag) or the message names a reverted sha
    advisories: tuple[str, ...]  # security advisory ids in the title and body, in order
    security_words: tuple[str, ...]  # security words in the subject, lower-cased, in order
    # submodule pointers moved (a patch of "Subproject commit" lines only), not under docs/tests/CI/examples:
    # (path, old commit, new commit)
    submodules: tuple[tuple[str, str, str], ...] = ()
    # the title declares no functional change (`[NFC]`, `… (NFC)`: analysis/titles.py): a refactor by its
    # author's word, whose title words claim nothing new users would see
    no_functional_change: bool = False
    # the release-notes entries the commit adds for itself: its author's word on the kind of change
    # (analysis/surface/release_entries.py)
    entries: tuple[Entry, ...] = ()

    def kinds_present(self) -> set[PathKind]:
        return set(self.kinds)

    def meaningful(self) -> Iterator[tuple[FileChange, PathKind]]:
        return ((f, k) for f, k in zip(self.files, self.kinds, strict=True) if not is_low_value(k))

    def lines_of(self, *kinds: PathKind) -> int:
        return sum(f.changes for f, k in zip(self.files, self.kinds, strict=True) if k in kinds)

    def files_of(self, *kinds: PathKind) -> list[FileChange]:
        return [f for f, k in zip(self.files, self.kinds, strict=True) if k in kinds]


def commit_facts(commit: Commit, own: frozenset[str] = frozenset()) -> Facts:
    """`own`: the vendored-looking trees the branch maintains as its own code (HistoryFacts.own_trees): their
    files count as what they are, not as someone else's code."""
    files = tuple(commit.files)
    kinds = tuple(kind_in(f.path, own) if own else classify_path(f.path) for f in files)
    ignored = sum(f.changes for f, k in zip(files, kinds, strict=True) if is_low_value(k))
    tags, subject = _split_title(commit.title)
    body = _body(commit.message)
    counted = max(0, commit.changed_lines - ignored)
    diffs = _read_diffs(files, kinds)
    kernels = tuple(f.path for f, k in zip(files, kinds, strict=True) if _is_kernel(f, k, diffs.get(f.path)))
    by_path = {f.path: f for f in files}
    areas = tuple(_areas(files, kinds, commit.shipped))
    parsed_prose = commit.prose_files or frozenset()  # the syntax trees' verdict (surface/same_code.py)
    prose = frozenset(
        f.path
        for f, k in zip(files, kinds, strict=True)
        if k == PathKind.SOURCE
        and (
            f.path in parsed_prose
            or (f.path in diffs and prose_only(diffs[f.path].text, diffs[f.path].language))
        )
    )
    stated = {c.path for c in commit.surface} if commit.surface is not None else None
    submodules = _submodules(files, kinds)
    runtime = frozenset(
        f.path
        for f, k in zip(files, kinds, strict=True)
        if f.path not in prose
        and _is_runtime(f.path, k, commit.shipped)
        and not (stated is not None and _metadata_only(f.path) and f.path not in stated)
    ) | {path for path, _, _ in submodules}
    return Facts(
        commit,
        files,
        kinds,
        tags,
        subject,
        body,
        counted,
        ignored,
        areas,
        kernels,
        by_path,
        diffs,
        prose,
        runtime,
        reverts=is_revert_title(commit.title) or "revert" in tags or bool(REVERTS_SHA.search(commit.message)),
        advisories=tuple(m.group(0) for m in ADVISORY.finditer(commit.title + "\n" + body)),
        security_words=tuple(m.group(0).lower() for m in SECURITY_WORDS.finditer(subject)),
        submodules=submodules,
        no_functional_change=declares_no_functional_change(commit.title),
        entries=declared_entries(commit),
    )


# git's and GitHub's patch of a submodule whose pointer moved: one "Subproject commit <sha>" line a side.
_SUBPROJECT = re.compile(r"^([-+])Subproject commit ([0-9a-f]{7,40})(?:-dirty)?$", re.M)


def _submodules(
    files: tuple[FileChange, ...], kinds: tuple[PathKind, ...]
) -> tuple[tuple[str, str, str], ...]:
    """Submodules whose pointer moved: the code of another repository the build compiles in (a compiler's
    toolchain, a kernel library), a new version of it as surely as a pin raised in a manifest. Outside
    docs, tests, CI, examples and tooling: a docs theme's submodule is no code users run."""
    out = []
    for f, k in zip(files, kinds, strict=True):
        patch = f.patch
        if not patch or "Subproject commit" not in patch or k in NON_RUNTIME:
            continue
        sides = {sign: sha for sign, sha in _SUBPROJECT.findall(patch)}
        changed = [
            line for line in patch.split("\n") if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        if len(sides) == 2 and len(changed) == 2:
            out.append((f.path, sides["-"][:7], sides["+"][:7]))
    return tuple(out)


_NOT_RUNTIME_WHEN_SHIPPED = frozenset({PathKind.TESTS, PathKind.DOCS})


def _metadata_only(path: str) -> bool:
    """A packaging or requirements file (not setup.py, which is code): it changes what users run only through
    what it states for them (dependencies, supported versions), which the surface facts list; a change to
    its tool sections, development groups or descriptive fields changes nothing users run."""
    return (is_packaging_file(path) or is_requirements_file(path)) and not path.endswith("setup.py")


def _is_runtime(path: str, kind: PathKind, shipped: frozenset[str] | None) -> bool:
    if is_low_value(kind):
        return False
    if kind == PathKind.DEPENDENCY_MANIFEST and is_dev_requirements(path):
        return False  # `requirements-dev.txt`, `requirements/ci/gpu.txt`: the maintainers' tools, not users'
    if kind == PathKind.CONFIG and _hidden(path) and (shipped is None or path not in shipped):
        return False  # a tool's own settings (`.yamlfmt.yaml`, `.markdownlint.yaml`)
    if shipped is None:
        return kind not in NON_RUNTIME
    if path in shipped:
        return kind not in _NOT_RUNTIME_WHEN_SHIPPED
    if kind == PathKind.BUILD and not builds_what_ships(path):
        # A task runner (Makefile, justfile, noxfile.py) beside packaging that says what ships: the package's
        # build backend never runs it, so only developers do.
        return False
    if kind == PathKind.SOURCE and (_hidden(path) or language_of(path) == "shell"):
        # A hidden or shell script the packaging does not ship: the repository's chores, which what ships
        # never runs.
        return False
    if kind == PathKind.SOURCE:
        return language_of(path) != "python"
    return kind not in NON_RUNTIME


def _hidden(path: str) -> bool:
    """A dotfile or a file in a dot-folder; not a dotenv file (`.env.production`), which an app reads at run time."""
    parts = path.split("/")
    return not parts[-1].startswith(".env") and any(p.startswith(".") and p not in (".", "..") for p in parts)


@dataclass(frozen=True, slots=True)
class Diff:
    """One file's patch, split once: rules run their patterns over whole texts, which is what
    keeps them fast on huge commits."""

    text: str  # the whole patch, context lines included
    removed: str  # removed lines without their "-", newline-joined
    added: str  # added lines without their "+", newline-joined
    language: str | None = None  # analysis.paths.language_of the file

    def changed_lines(self) -> list[str]:
        return [*self.removed.split("\n"), *self.added.split("\n")]

    def added_code(self) -> str:
        """The added lines without string literals and comments (where the language is known),
        newline-joined. Computed on demand: callers test the raw `added` text cheaply first."""
        return "\n".join(line for side, line in self._code_lines() if side == "+")

    def removed_code(self) -> str:
        """The removed lines without string literals and comments, newline-joined (as `added_code`)."""
        return "\n".join(line for side, line in self._code_lines() if side == "-")

    def code(self) -> str:
        """Every line of the patch (context, removed, added) without string literals and comments."""
        return "\n".join(line for _, line in self._code_lines())

    def _code_lines(self) -> list[tuple[str, str]]:
        # Each hunk is scanned twice, as the old file (context and removed lines) and as the new one
        # (context and added lines), so a string opened on one side never swallows the other side.
        out: list[tuple[str, str]] = []
        hunks = _HUNK_START.split(self.text)[1:] or ["\n" + self.text]  # a patch without a header
        for hunk in hunks:
            lines = [(line[:1], line[1:]) for line in hunk.split("\n")[1:] if line[:1] in (" ", "+", "-")]
            for side in ("-", "+"):
                mine = [(sign, text) for sign, text in lines if sign in (" ", side)]
                code = code_only((text for _, text in mine), self.language)
                out += [
                    (sign, text)
                    for (sign, _), text in zip(mine, code, strict=True)
                    if sign != " " or side == "+"
                ]
        return out


_HUNK_START = re.compile(r"^@@", re.M)


def _read_diffs(files: tuple[FileChange, ...], kinds: tuple[PathKind, ...]) -> dict[str, Diff]:
    """Patches the rules may read: whole patches only, most reviewable kinds first, until the
    budget is spent. Keeps a 3000-file commit fast; unread files are counted but not inspected."""
    budget = _PATCH_BUDGET
    diffs: dict[str, Diff] = {}
    for i in sorted(range(len(files)), key=lambda i: review_priority(kinds[i])):
        patch = files[i].patch
        if not patch or is_low_value(kinds[i]) or len(patch) > min(budget, _PER_FILE_PATCH_CAP):
            continue
        budget -= len(patch)
        diffs[files[i].path] = _split_diff(patch, language_of(files[i].path))
    return diffs


def _split_diff(patch: str, language: str | None = None) -> Diff:
    # File headers ("--- a/x", "+++ b/x"), if a source left them in, come before the first hunk.
    start = patch.find("@@")
    body = patch[start:] if start >= 0 else patch
    # the lines split once and sorted by their first character: cheaper than a pattern per side
    lines = body.split("\n")
    removed = "\n".join([line[1:] for line in lines if line[:1] == "-"])
    added = "\n".join([line[1:] for line in lines if line[:1] == "+"])
    return Diff(patch, removed, added, language)


_GPU_EXT = (".cu", ".cuh", ".hip", ".metal", ".cl", ".ptx")
_KERNEL_DIRS = frozenset({"csrc", "triton_ops", "cuda_kernels"})
# Markers of kernel code by language, looked for in the patch's code (context lines included) with
# strings and comments removed: a regex pattern or a prompt that names `__global__` is not a kernel.
_KERNEL_HINTS = {"python": ("triton", "tl.", "num_warps"), "c": ("__global__", "<<<")}
_KERNEL_MARKERS = {
    "python": re.compile(r"@triton\.jit|\btl\.(constexpr|load|store|program_id)\b|\bnum_warps\b"),
    "c": re.compile(r"__global__|<<<"),
}
_C_FAMILY = frozenset({"c", "cpp"})


def _is_kernel(f: FileChange, kind: PathKind, diff: Diff | None) -> bool:
    """By path first (a .cu file, a csrc/ folder), then by the language's own kernel markers."""
    if kind != PathKind.SOURCE:
        return False
    path = f.path.lower()
    if path.endswith(_GPU_EXT) or set(path.split("/")[:-1]) & _KERNEL_DIRS:
        return True
    family = "c" if diff is not None and diff.language in _C_FAMILY else diff.language if diff else None
    if diff is None or family not in _KERNEL_HINTS or not any(h in diff.text for h in _KERNEL_HINTS[family]):
        return False  # a plain substring test first: far cheaper than scanning the code
    # the code is the patch with strings emptied and comments cut, which never makes a marker: none in the patch,
    # none in its code, and the code is not scanned
    marker = _KERNEL_MARKERS[family]
    return bool(marker.search(diff.text) and marker.search(diff.code()))


def _split_title(title: str) -> tuple[tuple[str, ...], str]:
    if title == "(no message)":  # Commit.title's placeholder for an empty message
        return (), ""
    tags, rest = leading_tags(title)
    rest = PR_SUFFIX.sub("", rest).strip(" :-\t")
    return tags, rest or title.strip()


def _body(message: str) -> str:
    body = message_title(message)[1]  # a merge commit's pull request title is its title, not its body
    # git's own revert line is said by the summary already, more readably; a squash's list of the commits it
    # squashed says nothing of the change.
    return without_squash_list(REVERTS_SHA_LINE.sub("", strip_trailers(body)).strip())
