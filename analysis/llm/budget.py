"""The diff a model gets to see, within a token budget, and the file list that goes with it.

Rules (DESIGN.md §3, issue 3 item 4):
- Lockfiles, generated, vendored, minified and binary files, and files whose patch the source did
  not serve, are left out with their reason: their diff tells a reviewer little or nothing.
- The rest is ranked by `review_priority` (source, config, manifests, build, tooling, tests, docs),
  ties by more changed lines first, then by path (deterministic).
- High-priority files (source, config, dependency manifests) are shown whole while they fit; one
  that does not fit is shown hunk by hunk, whole hunks only. Such a big file first gets one hunk
  (so a commit's central file is never crowded out by its small neighbours), then the smaller
  high-priority files are shown whole, then those not shown whole get as many hunks as fit.
  Lower-priority files are shown whole or not at all, with what is left over.
- A commit without high-priority files (docs only, tests only) may clip its top-ranked file alone.
- When nothing at all fits (one huge patch), the top file is clipped to the whole hunks that fit;
  if even its first hunk is larger than the budget, that hunk is cut at a line boundary and the cut
  is marked. The same cut, to half the budget, serves the top-ranked file when its first hunk alone
  is too big but smaller files would fit (a new 600-line module beside small edits): the commit's
  central file is never left unseen. These are the only places we cut inside a hunk.
- The text ends with a line naming what was left out, so the model (and the reader, through
  `coverage_note`) knows the analysis covers N of M files.

Token accounting adds up per-piece estimates (each piece ends at a line break); the estimator is
subadditive over such pieces, so the sum bounds `estimate_tokens(text)` and the budget always holds.

Over 400 lines because it is one budget: the diff's selection, its markers and the file list spend the same
tokens and are planned together.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from analysis.llm.tokens import estimate_tokens
from analysis.models import Commit, FileChange
from analysis.paths import PathKind, classify_path, is_low_value, review_priority

# Files at or above this priority (lower number) may be shown in part.
_CLIP_PRIORITY = review_priority(PathKind.DEPENDENCY_MANIFEST)
_TRAILER_NAMES = 4  # paths named in the diff's closing line
_CENTRAL_SHARE = 0.5  # of the budget, for the top file when even its first hunk does not fit
_NOTE_NAMES = 2  # paths named per reason in a reader's coverage note

REASON_UNAVAILABLE = "diff unavailable"
REASON_BUDGET = "budget"

_REASON_TEXT = {
    "en": {
        "lockfile": "lockfile",
        "generated": "generated",
        "vendored": "vendored",
        "minified": "minified",
        "binary": "binary",
        REASON_UNAVAILABLE: "no diff available",
        REASON_BUDGET: "over the length budget",
    },
    "zh": {
        "lockfile": "锁文件",
        "generated": "生成文件",
        "vendored": "第三方代码",
        "minified": "压缩文件",
        "binary": "二进制文件",
        REASON_UNAVAILABLE: "无差异内容",
        REASON_BUDGET: "超出篇幅",
    },
}


def _cost(piece: str) -> int:
    """Tokens of one piece of the text, including the line break that follows it."""
    return estimate_tokens(piece + "\n")


@dataclass(slots=True)
class DiffSelection:
    text: str  # the diff block given to the model
    shown: list[str] = field(default_factory=list)  # paths shown whole
    clipped: list[str] = field(default_factory=list)  # paths shown in part
    omitted: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    files_total: int = 0  # commit.file_count: may exceed the files listed when the source capped them
    tokens: int = 0  # estimate_tokens(text)

    @property
    def unlisted(self) -> int:
        """Files the commit changed that the source did not list at all."""
        return max(0, self.files_total - len(self.shown) - len(self.clipped) - len(self.omitted))

    @property
    def complete(self) -> bool:
        """Every changed file is shown whole."""
        return not self.clipped and not self.omitted and len(self.shown) == self.files_total

    def coverage_note(self, lang: str) -> str | None:
        """None when complete; else e.g. "covered 12 of 14 files (2 left out — lockfile: uv.lock;
        over the length budget: docs/a.md)" / "已覆盖 14 个文件中的 12 个（未包含 2 个——…）"."""
        if self.complete:
            return None
        zh = lang == "zh"
        shown, total, part = len(self.shown), self.files_total, len(self.clipped)
        if zh:
            head = (
                f"已完整覆盖 {total} 个文件中的 {shown} 个"
                if part
                else f"已覆盖 {total} 个文件中的 {shown} 个"
            )
            if part:
                head += f"，部分覆盖 {part} 个（{_names(self.clipped, lang)}）"
        else:
            head = f"covered {shown} of {total} files" + (" in full" if part else "")
            if part:
                head += f", {part} in part ({_names(self.clipped, lang)})"
        left = len(self.omitted) + self.unlisted
        if not left:
            return head
        details = _left_out_details(self.omitted, self.unlisted, lang)
        return head + (f"（未包含 {left} 个——{details}）" if zh else f" ({left} left out — {details})")


def _names(paths: list[str], lang: str, limit: int = _NOTE_NAMES) -> str:
    listed = ("、" if lang == "zh" else ", ").join(paths[:limit])
    rest = len(paths) - limit
    if rest <= 0:
        return listed
    return f"{listed} 及另外 {rest} 个" if lang == "zh" else f"{listed} and {rest} more"


def _left_out_details(omitted: list[tuple[str, str]], unlisted: int, lang: str) -> str:
    by_reason: dict[str, list[str]] = {}
    for path, reason in omitted:
        by_reason.setdefault(reason, []).append(path)
    texts = _REASON_TEXT.get(lang, _REASON_TEXT["en"])
    sep = "：" if lang == "zh" else ": "
    parts = [f"{texts.get(reason, reason)}{sep}{_names(paths, lang)}" for reason, paths in by_reason.items()]
    if unlisted:
        parts.append(
            f"{unlisted} 个未被数据源列出" if lang == "zh" else f"{unlisted} not listed by the source"
        )
    return ("；" if lang == "zh" else "; ").join(parts)


# --------------------------------------------------------------------------------------------
# Candidates
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Candidate:
    file: FileChange
    key: tuple[int, int, str]  # rank: review priority, more changed lines first, path
    header: str
    hunks: list[str]
    header_cost: int
    hunk_costs: list[int]

    @property
    def whole_cost(self) -> int:
        return self.header_cost + sum(self.hunk_costs)

    @property
    def clippable(self) -> bool:
        return self.key[0] <= _CLIP_PRIORITY


@dataclass(slots=True)
class _Part:
    """What is shown of one file: all hunks, some of them, or the first one cut."""

    cand: _Candidate
    hunks: list[int]  # indexes into cand.hunks
    cut_lines: int | None = None  # the first hunk cut to this many lines
    cost: int = 0

    @property
    def whole(self) -> bool:
        return self.cut_lines is None and len(self.hunks) == len(self.cand.hunks)


def split_hunks(patch: str) -> list[str]:
    """A unified-diff patch as hunks, each starting at its '@@' line; any text before the first '@@'
    stays with the first hunk."""
    hunks: list[list[str]] = []
    for line in patch.split("\n"):
        if line.startswith("@@") or not hunks:
            hunks.append([line])
        else:
            hunks[-1].append(line)
    texts = ["\n".join(h) for h in hunks]
    if len(texts) > 1 and not texts[0].startswith("@@"):  # a preamble joins the first real hunk
        texts[1] = texts[0] + "\n" + texts[1]
        texts.pop(0)
    return [t.rstrip("\n") for t in texts if t.strip()]


def file_header(f: FileChange) -> str:
    moved = f", from {f.previous_path}" if f.previous_path and f.previous_path != f.path else ""
    return f"--- a/{f.path} ({f.status}{moved}, +{f.additions} -{f.deletions})"


def _rank_key(f: FileChange, kind: PathKind) -> tuple[int, int, str]:
    return (review_priority(kind), -f.changes, f.path)


def _candidates(commit: Commit) -> tuple[list[_Candidate], list[tuple[tuple[int, int, str], str, str]]]:
    """Files that may be shown (ranked) and files left out for what they are (with rank keys)."""
    cands: list[_Candidate] = []
    excluded: list[tuple[tuple[int, int, str], str, str]] = []
    for f in commit.files:
        kind = classify_path(f.path)
        key = _rank_key(f, kind)
        if is_low_value(kind):
            excluded.append((key, f.path, kind.value))
        elif not f.patch and f.changes > 0:
            excluded.append((key, f.path, REASON_UNAVAILABLE))
        else:  # a patch, or nothing to show at all (pure rename, empty file): the header says it
            header = file_header(f)
            hunks = split_hunks(f.patch) if f.patch else []
            cands.append(_Candidate(f, key, header, hunks, _cost(header), [_cost(h) for h in hunks]))
    cands.sort(key=lambda c: c.key)
    excluded.sort(key=lambda e: e[0])
    return cands, excluded


# --------------------------------------------------------------------------------------------
# Selection
# --------------------------------------------------------------------------------------------


def _hunks_marker(cand: _Candidate, shown: int) -> str:
    return f"[… {len(cand.hunks) - shown} of {len(cand.hunks)} hunks of {cand.file.path} not shown: length budget]"


def _cut_marker(total_lines: int, kept: int) -> str:
    return f"[… hunk cut after {kept} of {total_lines} lines: length budget]"


def _whole(cand: _Candidate) -> _Part:
    return _Part(cand, list(range(len(cand.hunks))), cost=cand.whole_cost)


def _by_hunks(cand: _Candidate, avail: int, limit: int | None = None) -> _Part | None:
    """Whole hunks in file order that fit (at most `limit`), skipping those that do not; None when
    none fits."""
    marker = _cost(_hunks_marker(cand, 0))
    room = avail - cand.header_cost - marker
    chosen: list[int] = []
    for i, cost in enumerate(cand.hunk_costs):
        if limit is not None and len(chosen) >= limit:
            break
        if cost <= room:
            chosen.append(i)
            room -= cost
    if not chosen:
        return None
    return _Part(cand, chosen, cost=cand.header_cost + marker + sum(cand.hunk_costs[i] for i in chosen))


def _cut_first_hunk(cand: _Candidate, avail: int) -> _Part | None:
    """The first hunk cut at a line boundary to fit (the '@@' line and at least one more)."""
    if not cand.hunks:
        return None
    lines = cand.hunks[0].split("\n")
    room = avail - cand.header_cost - _cost(_cut_marker(len(lines), len(lines)))
    room -= _cost(_hunks_marker(cand, 1)) if len(cand.hunks) > 1 else 0
    kept = 0
    for line in lines:
        cost = _cost(line)
        if cost > room:
            break
        room -= cost
        kept += 1
    if kept < 2:
        return None
    return _Part(cand, [0], cut_lines=kept, cost=avail - room)


def _render_part(part: _Part) -> list[str]:
    cand = part.cand
    out = [cand.header]
    if part.cut_lines is not None:
        lines = cand.hunks[0].split("\n")
        out.append("\n".join(lines[: part.cut_lines]))
        out.append(_cut_marker(len(lines), part.cut_lines))
    else:
        out.extend(cand.hunks[i] for i in part.hunks)
    if len(part.hunks) < len(cand.hunks):
        out.append(_hunks_marker(cand, len(part.hunks)))
    return out


def _trailer(omitted: list[tuple[str, str]], unlisted: int, total: int, names: int = _TRAILER_NAMES) -> str:
    left = len(omitted) + unlisted
    if not left:
        return ""
    listed = ", ".join(f"{path} ({reason})" for path, reason in omitted[:names])
    more = len(omitted) - min(names, len(omitted))
    text = f"[left out of this diff: {left} of {total} files"
    text += f" — {listed}" if listed else ""
    text += f" and {more} more" if more and listed else ""
    text += f"; {unlisted} not listed by the source" if unlisted else ""
    return text + "]"


def _trailer_reserve(commit: Commit, unlisted: int) -> int:
    """An upper bound of the closing line's cost, whatever ends up left out: the longest names."""
    entries = sorted((f"{f.path} ({REASON_UNAVAILABLE})" for f in commit.files), key=_cost, reverse=True)
    worst = [(e, "") for e in entries[:_TRAILER_NAMES]]
    n = max(1, len(commit.files))
    return _cost(_trailer(worst + [("", "")] * n, unlisted + 10 * n, 10 * commit.file_count + 10))


def _choose(cands: list[_Candidate], avail: int) -> dict[int, _Part]:
    """Which part of each candidate (by index) is shown; see the module docstring for the order."""
    parts: dict[int, _Part] = {}

    def take(i: int, part: _Part | None) -> None:
        nonlocal avail
        old = parts[i].cost if i in parts else 0
        if part is not None and part.cost <= avail + old:
            parts[i] = part
            avail -= part.cost - old

    def rest_whole() -> None:
        for i, c in enumerate(cands):
            if i not in parts and c.whole_cost <= avail:
                take(i, _whole(c))

    def extend(indexes: list[int]) -> None:
        for i in indexes:
            if not (i in parts and parts[i].whole):
                take(i, _by_hunks(cands[i], avail + (parts[i].cost if i in parts else 0)))

    # Files that may be shown in part: the high-priority ones or, in a commit without any (docs or
    # tests only), its top-ranked file, which then grows only after its neighbours are shown whole.
    clippable = [i for i, c in enumerate(cands) if c.clippable]
    fallback = not clippable and bool(cands)
    clippable = clippable or ([0] if cands else [])
    big = [i for i in clippable if cands[i].whole_cost > avail]
    for i in big:  # 1. one hunk of each clippable file too big to show whole: never crowded out
        take(i, _by_hunks(cands[i], avail, limit=1))
    if big and big[0] not in parts and big[0] == clippable[0]:
        # The commit's central file is one hunk larger than the budget (typically a new module):
        # the one huge patch we clip, to a share of the budget, rather than leave it unseen.
        take(big[0], _cut_first_hunk(cands[big[0]], int(avail * _CENTRAL_SHARE)))
    for i in clippable:  # 2. the other clippable files whole
        if i not in parts and i not in big:
            take(i, _whole(cands[i]))
    if fallback:
        rest_whole()
    extend(clippable)  # 3. clippable files not shown whole: as many whole hunks as fit
    if not parts and cands:  # 4. nothing fits: clip the top file, cutting its first hunk if need be
        take(0, _by_hunks(cands[0], avail) or _cut_first_hunk(cands[0], avail))
    rest_whole()  # 5. lower-priority files whole, with what is left
    return parts


def whole_diff_cost(commit: Commit) -> int | None:
    """What the commit's whole diff costs in the prompt, or None when part of it would be left out whatever
    the budget (a lockfile, a patch not available, files not listed)."""
    cands, excluded = _candidates(commit)
    if excluded or commit.file_count > len(commit.files):
        return None
    return sum(c.whole_cost for c in cands)


def select_diff(commit: Commit, budget_tokens: int) -> DiffSelection:
    """The diff block for the model within `budget_tokens` (estimate_tokens(text) <= budget)."""
    cands, excluded = _candidates(commit)
    unlisted = max(0, commit.file_count - len(commit.files))
    total_whole = sum(c.whole_cost for c in cands)
    if not excluded and not unlisted and total_whole <= budget_tokens:
        parts = {i: _whole(c) for i, c in enumerate(cands)}  # everything fits: no closing line needed
    else:
        parts = _choose(cands, max(0, budget_tokens - _trailer_reserve(commit, unlisted)))
    return _assemble(commit, cands, excluded, parts, unlisted, budget_tokens)


def _assemble(
    commit: Commit,
    cands: list[_Candidate],
    excluded: list[tuple[tuple[int, int, str], str, str]],
    parts: dict[int, _Part],
    unlisted: int,
    budget: int,
) -> DiffSelection:
    pieces: list[str] = []
    sel = DiffSelection(text="", files_total=commit.file_count)
    left: list[tuple[tuple[int, int, str], str, str]] = list(excluded)
    for i, cand in enumerate(cands):
        part = parts.get(i)
        if part is None:
            left.append((cand.key, cand.file.path, REASON_BUDGET))
            continue
        pieces.extend(_render_part(part))
        (sel.shown if part.whole else sel.clipped).append(cand.file.path)
    # Budget omissions first (they are files a reviewer would have read), then by rank.
    left.sort(key=lambda e: (e[2] != REASON_BUDGET, e[0]))
    sel.omitted = [(path, reason) for _, path, reason in left]
    body = "\n".join(pieces)
    sel.text = _with_trailer(body, sel.omitted, unlisted, commit.file_count, budget)
    sel.tokens = estimate_tokens(sel.text)
    return sel


def _with_trailer(body: str, omitted: list[tuple[str, str]], unlisted: int, total: int, budget: int) -> str:
    """The body and its closing line, shortened (fewer names, then none) if it must be to fit."""
    for names in (_TRAILER_NAMES, 1, 0):
        trailer = _trailer(omitted, unlisted, total, names)
        text = f"{body}\n{trailer}" if body and trailer else body or trailer
        if estimate_tokens(text) <= budget:
            return text
    return body if estimate_tokens(body) <= budget else ""


# --------------------------------------------------------------------------------------------
# File list
# --------------------------------------------------------------------------------------------


def _file_line(f: FileChange) -> str:
    kind = classify_path(f.path).value
    if f.previous_path and f.previous_path != f.path:
        return f"{f.status} {f.previous_path} → {f.path} (+{f.additions} -{f.deletions}) [{kind}]"
    return f"{f.status} {f.path} (+{f.additions} -{f.deletions}) [{kind}]"


def _folder(path: str, depth: int) -> str:
    parts = path.strip("/").split("/")[:-1]
    return "/".join(parts[:depth]) + "/" if parts else "(root)"


def _group_lines(files: tuple[FileChange, ...], depth: int) -> list[tuple[str, int]]:
    """(line, number of files) per folder at `depth`, most files first, then by name."""
    groups: dict[str, list[FileChange]] = {}
    for f in files:
        groups.setdefault(_folder(f.path, depth), []).append(f)
    lines: list[tuple[str, int, str]] = []
    for name, members in groups.items():
        kinds = Counter(classify_path(f.path).value for f in members)
        kind_text = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
        adds, dels = sum(f.additions for f in members), sum(f.deletions for f in members)
        noun = "file" if len(members) == 1 else "files"
        lines.append((f"{name} {len(members)} {noun} (+{adds} -{dels}) [{kind_text}]", len(members), name))
    lines.sort(key=lambda t: (-t[1], t[2]))
    return [(line, n) for line, n, _ in lines]


def file_list(commit: Commit, max_tokens: int) -> str:
    """One line per file, "status path (+a -d) [kind]"; when that is too long, one line per folder
    with counts, ending with "… and N more files". The counts always add up to commit.file_count."""
    unlisted = max(0, commit.file_count - len(commit.files))
    unlisted_line = f"… and {unlisted} more files not listed by the source" if unlisted else ""
    full = [_file_line(f) for f in commit.files] + ([unlisted_line] if unlisted_line else [])
    text = "\n".join(full)
    if estimate_tokens(text) <= max_tokens:
        return text
    head = (
        f"{commit.file_count} files changed (+{commit.total_additions} -{commit.total_deletions}), by folder:"
    )
    tail = [unlisted_line] if unlisted_line else []
    # The deepest grouping that fits whole; if none does, two levels with the biggest folders first.
    for depth in (3, 2, 1):
        lines = [head, *(line for line, _ in _group_lines(commit.files, depth)), *tail]
        if estimate_tokens("\n".join(lines)) <= max_tokens:
            return "\n".join(lines)
    return _truncate_groups(head, _group_lines(commit.files, 2), unlisted, max_tokens)


def _truncate_groups(head: str, groups: list[tuple[str, int]], unlisted: int, max_tokens: int) -> str:
    """The head, as many folder lines as fit, and a closing "… and N more files" for the rest."""
    lines = [head]
    used = _cost(head)
    remaining = sum(n for _, n in groups) + unlisted
    reserve = _cost(f"… and {remaining} more files in {len(groups)} more folders or not listed by the source")
    for line, n in groups:
        cost = _cost(line)
        if used + cost + reserve > max_tokens:
            break
        lines.append(line)
        used += cost
        remaining -= n
    shown_groups = len(lines) - 1
    if remaining == unlisted and unlisted:
        lines.append(f"… and {unlisted} more files not listed by the source")
    elif remaining:
        more_folders = len(groups) - shown_groups
        tail = f" ({unlisted} of them not listed by the source)" if unlisted else ""
        lines.append(f"… and {remaining} more files in {more_folders} more folders{tail}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# A conversation's turns
# --------------------------------------------------------------------------------------------

TURN_MAX_TOKENS = 400  # one earlier message (a digest card can be long) keeps at most this much


def fit_turns(
    turns: list[tuple[str, str]], budget_tokens: int, turn_max: int = TURN_MAX_TOKENS
) -> list[tuple[str, str]]:
    """The most recent turns, oldest first, whose text fits `budget_tokens`: newest first until the
    next would not fit; a long turn is cut to its first `turn_max` tokens at a line or word break."""
    kept: list[tuple[str, str]] = []
    used = 0
    for who, text in reversed(turns):
        text = _clip(text.strip(), turn_max)
        cost = estimate_tokens(f"{who}: {text}") + 1
        if not text or used + cost > budget_tokens:
            if text:
                break
            continue
        kept.append((who, text))
        used += cost
    kept.reverse()
    return kept


def _clip(text: str, max_tokens: int) -> str:
    if estimate_tokens(text) <= max_tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest prefix that fits, with room for the mark
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid] + " …") <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    head = text[:lo]
    cut = max(head.rfind("\n"), head.rfind(" "))
    return (head[:cut] if cut > lo // 2 else head).rstrip() + " …"
