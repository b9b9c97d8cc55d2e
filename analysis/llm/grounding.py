"""Post-generation checks: the analysis may cite only what the commit holds (DESIGN.md §3, §4).

`ground` removes statements that cite a file the commit did not change, or a figure (percentage,
multiplier, version) that appears neither in the commit message nor in any patch: the reference
reports invented "约 1.2–1.5×" speed-ups and "v0.3.0 即将发布". It also neutralises chat mentions and
strips trailers / e-mail addresses the model may have copied, so nothing it writes can ping a channel.

`consistent_change_type` lets an explicit title tag or conventional-commit prefix overrule the
model's change type: a `[Bugfix]` commit is a bugfix, a revert is a revert.

What is deliberately not checked: plain integers (line counts, PR numbers, "3 files"), two-part
decimals without a unit ("12.8" could be anything), model names such as "SM-100" or "H100", and
paths without a known file extension (too easily confused with "CPU/GPU" or "ci/build").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from analysis.heuristic.change_type import CONVENTIONAL_TYPES, PRECEDENCE, STRONG_TAGS, firm_type, tag_types
from analysis.heuristic.signals import BEHAVIOUR
from analysis.labels import label
from analysis.models import Analysis, ChangeType, Commit
from analysis.text import EMAIL, neutralize_mentions
from analysis.titles import (
    REVERT_TITLE,
    conventional_prefix,
    declares_no_functional_change,
    gitmoji_kind,
    leading_tags,
    without_gitmoji,
)

if TYPE_CHECKING:
    from analysis.heuristic import Assessment

# --------------------------------------------------------------------------------------------
# What counts as a cited file
# --------------------------------------------------------------------------------------------

_FILE_EXT = frozenset(
    {"py", "pyi", "pyx", "pxd", "cu", "cuh", "c", "cc", "cpp", "cxx", "h", "hh", "hpp", "hxx", "inl"}
    | {"rs", "go", "java", "kt", "kts", "scala", "js", "jsx", "mjs", "cjs", "ts", "tsx", "vue", "svelte"}
    | {"rb", "php", "swift", "mm", "cs", "fs", "lua", "jl", "dart", "zig", "ex", "exs", "erl", "hs", "ml"}
    | {"nim", "sh", "bash", "zsh", "fish", "ps1", "bat", "cmd", "md", "mdx", "rst", "txt", "adoc"}
    | {"yaml", "yml", "toml", "ini", "cfg", "conf", "json", "jsonc", "xml", "proto", "sql", "html", "htm"}
    | {"css", "scss", "less", "cmake", "mk", "gradle", "tf", "lock", "ipynb", "metal", "hip", "ptx", "asm"}
    | {"vim", "clj", "groovy", "sbt", "bzl", "bazel"}
    # Not "m", "s", "r": "a.m." and "U.S." are prose.
)
_SPECIAL_NAMES = frozenset({"Dockerfile", "Makefile", "CMakeLists.txt", "Jenkinsfile", "Gemfile", "Rakefile"})
# A file-like token: ASCII segments joined by '/', ending in a name with an extension. ASCII only, so
# that a path written against Chinese text ("修改了pkg/foo.py中的") is still found. Leading "./",
# "a/", "b/" and trailing ":123" / "#L10" line references are removed before matching.
_PATH_TOKEN = re.compile(r"(?<![\w@/.-])((?:[\w.-]+/)*[\w.-]*[\w-]\.[A-Za-z0-9]+)(?![\w/])", re.ASCII)
_LINE_REF = re.compile(r"(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?)$")

# --------------------------------------------------------------------------------------------
# What counts as a figure (ASCII classes: "提升30%左右" and "2x加速" are figures too)
# --------------------------------------------------------------------------------------------

_NUM = r"\d[\d,]*(?:\.\d+)?"
_DASH = r"\s*(?:-|–|—|~|～|〜|to|到|至)\s*"
_PERCENT = rf"(?:{_NUM}\s*(?:%|％|percent\b))"
_MULT = rf"(?:{_NUM}\s*(?:[x×X](?![\w])|倍))"
# A range shares its unit: "1.2–1.5×", "20-30%", "1.2x to 1.5x", "3 到 5 倍".
_RANGE_UNIT = re.compile(
    rf"(?P<a>{_NUM})\s*(?P<ua>[%％x×X]|倍)?{_DASH}(?P<b>{_NUM})\s*(?P<u>%|％|percent\b|[x×X](?![\w])|倍)",
    re.ASCII,
)
_FIGURE = re.compile(rf"{_PERCENT}|{_MULT}", re.ASCII)
_NUMBER = re.compile(_NUM, re.ASCII)
# Versions: "v0.3", "v1.2.3", "2.8.1" (three parts or more, or a 'v' prefix). Not "12.8", not "SM-100".
_VERSION = re.compile(r"(?<![\w.])(?:[vV]\d+(?:\.\d+)+|\d+\.\d+\.\d+(?:\.\d+)*)(?![\w]|\.\d)", re.ASCII)
_SOURCE_VERSION = re.compile(r"\d+(?:\.\d+)+", re.ASCII)


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the commit holds, prepared once per commit."""

    paths: frozenset[str]  # changed and previous paths, lower-case
    basenames: frozenset[str]
    dirs: frozenset[str]  # every directory prefix of a changed path, without trailing '/'
    figures: frozenset[tuple[str, str]]  # (unit, value) of every percentage / multiplier
    versions: frozenset[str]  # every dotted number sequence


def _unit(raw: str) -> str:
    raw = raw.strip().lower()
    if raw in ("%", "％", "percent"):
        return "%"
    return "x"  # x, ×, 倍


def _value(raw: str) -> str:
    try:
        return format(Decimal(raw.replace(",", "")).normalize(), "f")
    except InvalidOperation:
        return raw


def _figures(text: str) -> set[tuple[str, str]]:
    """(unit, value) of every percentage and multiplier in the text, range ends included."""
    found: set[tuple[str, str]] = set()
    for m in _RANGE_UNIT.finditer(text):
        unit = _unit(m.group("u"))
        found.update({(unit, _value(m.group("a"))), (unit, _value(m.group("b")))})
    for m in _FIGURE.finditer(text):
        number = _NUMBER.match(m.group(0))
        if number:
            found.add((_unit(m.group(0)[number.end() :]), _value(number.group(0))))
    return found


def _evidence(commit: Commit, extra: str = "") -> Evidence:
    return evidence_of([commit], extra)


def evidence_of(commits: Iterable[Commit], extra: str = "") -> Evidence:
    """What a set of commits holds (a thread answer may cite any commit of its day), plus `extra`."""
    commits = list(commits)
    paths: set[str] = set()
    for f in (f for c in commits for f in c.files):
        paths.add(f.path.lower())
        if f.previous_path:
            paths.add(f.previous_path.lower())
    dirs = {p.rsplit("/", k)[0] for p in paths for k in range(1, p.count("/") + 1)}
    source = "\n".join(
        [extra, *(c.message for c in commits), *(f.patch or "" for c in commits for f in c.files)]
    )
    return Evidence(
        paths=frozenset(paths),
        basenames=frozenset(p.rsplit("/", 1)[-1] for p in paths),
        dirs=frozenset(dirs),
        figures=frozenset(_figures(source)),
        versions=frozenset(_SOURCE_VERSION.findall(source)),
    )


# --------------------------------------------------------------------------------------------
# Finding unsupported citations in a piece of text
# --------------------------------------------------------------------------------------------


def _clean_path(token: str) -> str:
    token = _LINE_REF.sub("", token.strip("`'\"*()[]<>,;:"))
    for prefix in ("./", "a/", "b/"):
        if token.startswith(prefix) and len(token) > len(prefix):
            token = token[len(prefix) :]
    return token


def _is_file_citation(token: str) -> bool:
    name = token.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    return ext.lower() in _FILE_EXT or name in _SPECIAL_NAMES


def _path_supported(token: str, ev: Evidence) -> bool:
    low = token.lower()
    if low in ev.paths or low in ev.dirs:
        return True
    if "/" not in low:
        return low in ev.basenames
    # "layers/fused_moe.py" for "pkg/model_executor/layers/fused_moe.py": a suffix at a '/' boundary.
    return any(p.endswith("/" + low) for p in ev.paths)


def unsupported_items(text: str, ev: Evidence) -> list[str]:
    """The files and figures `text` cites that the commit does not hold."""
    bad: list[str] = []
    for m in _PATH_TOKEN.finditer(text):
        token = _clean_path(m.group(1))
        if _VERSION.fullmatch(token) or not _is_file_citation(token):
            continue
        if not _path_supported(token, ev):
            bad.append(token)
    covered: list[tuple[int, int]] = []
    for m in _RANGE_UNIT.finditer(text):
        covered.append(m.span())
        unit = _unit(m.group("u"))
        ends = {(unit, _value(m.group("a"))), (unit, _value(m.group("b")))}
        if not ends <= ev.figures:
            bad.append(m.group(0).strip())
    for m in _FIGURE.finditer(text):
        if any(a <= m.start() < b for a, b in covered):
            continue
        number = _NUMBER.match(m.group(0))
        if number and (_unit(m.group(0)[number.end() :]), _value(number.group(0))) not in ev.figures:
            bad.append(m.group(0).strip())
    for m in _VERSION.finditer(text):
        if m.group(0).lstrip("vV") not in ev.versions:
            bad.append(m.group(0))
    return bad


# --------------------------------------------------------------------------------------------
# Removing what is unsupported
# --------------------------------------------------------------------------------------------

# Sentence ends: Chinese full stops, semicolons, and '. ' (a dot followed by a space, so that
# "pkg/foo.py" and "v0.3.0" stay whole).
_SENTENCE_END = re.compile(r"(?<=[。！？；;!?])|(?<=\.)(?=\s)|(?<=\n)")


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s]


def plain_text(text: str) -> str:
    """Mentions neutralised, copied e-mail addresses and trailer lines removed."""
    text = re.sub(r"(?im)^\s*(signed-off-by|co-authored-by|reviewed-by)\s*:.*$", "", text)
    return neutralize_mentions(EMAIL.sub("", text)).strip()


@dataclass(slots=True)
class _Grounder:
    ev: Evidence
    unknown: str
    cited: list[str] = field(default_factory=list)  # the unsupported files and figures found
    statements: int = 0  # sentences and list items removed

    def prose(self, text: str) -> str:
        """Text without the sentences that cite something unsupported; "unknown" if nothing is left."""
        kept: list[str] = []
        for sentence in sentences(plain_text(text)):
            bad = unsupported_items(sentence, self.ev)
            if bad:
                self.cited.extend(bad)
                self.statements += 1
            else:
                kept.append(sentence)
        return "".join(kept).strip() or self.unknown

    def items(self, values: Iterable[str]) -> list[str]:
        """List items without those that cite something unsupported; ["unknown"] when every item
        was removed (an empty list would read as "none identified", which nobody said)."""
        kept: list[str] = []
        dropped = 0
        for value in filter(None, map(plain_text, values)):
            bad = unsupported_items(value, self.ev)
            if bad:
                self.cited.extend(bad)
                dropped += 1
            else:
                kept.append(value)
        self.statements += dropped
        return [self.unknown] if dropped and not kept else kept


def _note(lang: str, count: int) -> str:
    """How many statements were removed, never what: naming an invented path or figure would put it
    in front of readers. What was removed is kept in Analysis.grounding_removed."""
    if lang == "zh":
        return f"事实核查：删除了 {count} 处引用了提交中不存在的文件或数据的内容"
    return f"grounding: removed {count} statements citing files or figures not in the commit"


def ground(analysis: Analysis, commit: Commit, lang: str, *, allowed_text: str = "") -> Analysis:
    """A copy of `analysis` without statements citing files the commit did not change or figures it
    does not contain, plus a note saying how many were removed (what they cited goes to
    `grounding_removed`, for the JSON output and llm_calls only). Every text field also has chat
    mentions neutralised and copied e-mail addresses / trailers removed. `allowed_text` is text we
    gave the model ourselves (e.g. the heuristic prior's reason): its figures count as grounded."""
    g = _Grounder(_evidence(commit, allowed_text), label(lang, "unknown"))
    update: dict[str, Any] = {
        "summary": g.prose(analysis.summary),
        "importance_reason": g.prose(analysis.importance_reason),
        "scope": g.items(analysis.scope),
        "risks": g.items(analysis.risks),
        "recommendations": g.items(analysis.recommendations),
        "insights": {key: g.prose(value) for key, value in analysis.insights.items()},
    }
    if g.statements:
        update["notes"] = [*analysis.notes, _note(lang, g.statements)]
        update["grounding_removed"] = list(dict.fromkeys([*analysis.grounding_removed, *g.cited]))
    return analysis.model_copy(update=update)


# --------------------------------------------------------------------------------------------
# Change type from the title
# --------------------------------------------------------------------------------------------

# The tags and prefixes that overrule the model: fewer words than the heuristic reads (it also takes
# [Typo], [Release], [Config], "style:" and more as hints), meaning what they mean there.
_TAG_WORDS = (
    "bugfix bugfixes fix fixes bug hotfix bugfixing perf performance optimization optimisation speedup "
    "doc docs documentation test tests testing ci build ci/build cicd feature feat newfeature "
    "refactor refactoring nfc nfci security cve deps dependency dependencies revert"
)
_PREFIX_WORDS = (
    "fix bugfix hotfix feat feature perf docs doc test tests ci build refactor revert security deps"
)
_TAG_TYPES = {word: STRONG_TAGS[word] for word in _TAG_WORDS.split()}
_PREFIX_TYPES = {word: CONVENTIONAL_TYPES[word] for word in _PREFIX_WORDS.split()}
_LONGEST_TAG = 40  # characters in one tag; the heuristic reads tags up to title.TAG_MAX
# "chore(deps): bump x" states a dependency change; other scopes say nothing about the type.
_DEP_SCOPES = frozenset({"deps", "dep", "deps-dev"})
_DEP_KINDS = frozenset({"chore", "build", "fix"})
# A more specific type the model may keep under a tag: a [Bugfix] that fixes a vulnerability.
_REFINEMENTS = {ChangeType.BUGFIX: {ChangeType.SECURITY}}
# The rules' types that state nothing of their own.
_UNSAID = frozenset({ChangeType.REFACTOR, ChangeType.OTHER})


def title_change_types(title: str) -> list[ChangeType]:
    """The change types an explicit title tag ("[Bugfix]", "[CI/Build]"), a declaration of no functional change
    ("(NFC)"), conventional prefix ("fix:", "feat(api)!:") or gitmoji ("✨", ":bug:") states, in title order; a
    leading "Revert" states a revert."""
    tags, rest = leading_tags(title, longest=_LONGEST_TAG)
    found = tag_types(tags, _TAG_TYPES)
    if REVERT_TITLE.match(without_gitmoji(rest)) or REVERT_TITLE.match(title):
        return [ChangeType.REVERT]
    if declares_no_functional_change(title):  # "[X86] Fix a warning (NFC)": a refactor by its author's word
        found.append(ChangeType.REFACTOR)
    prefix = conventional_prefix(rest.strip())
    if prefix is not None:
        kind, scope = prefix
        if scope in _DEP_SCOPES and kind in _DEP_KINDS:
            found.append(ChangeType.DEPENDENCY)
        elif kind in _PREFIX_TYPES:
            found.append(_PREFIX_TYPES[kind])
    elif (kind := gitmoji_kind(rest)) in _PREFIX_TYPES:  # "✨ Add x" states it as "feat: add x" does
        found.append(_PREFIX_TYPES[kind])
    return list(dict.fromkeys(found))


def consistent_change_type(
    commit: Commit, proposed: ChangeType, rules: Assessment | None = None
) -> ChangeType:
    """The model's change type unless the title states another: a stated type wins (the most
    meaningful one when the title states several and the model chose none of them). With the rules'
    assessment, also unless the facts settle it (firm_type: a revert, paths all of one kind, a title that
    begins "Fix" or bumps the manifests), and never a revert the commit is not, nor a refactor of a commit the
    code shows changing what users get (a small model called "Drop support for Python 3.9" a revert)."""
    stated = title_change_types(commit.title)
    if not stated and rules is not None:
        firm = firm_type(rules.facts)
        if firm is not None and firm != proposed and proposed not in _REFINEMENTS.get(firm, ()):
            return firm
        if proposed == ChangeType.REVERT and rules.change != ChangeType.REVERT:
            return rules.change
        changes_users = rules.judgment.impact >= BEHAVIOUR
        if proposed == ChangeType.REFACTOR and changes_users and rules.change not in _UNSAID:
            return rules.change
    if not stated or proposed in stated:
        return proposed
    if any(proposed in _REFINEMENTS.get(t, ()) for t in stated) and ChangeType.REVERT not in stated:
        return proposed
    return min(stated, key=PRECEDENCE.index)
