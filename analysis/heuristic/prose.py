"""The heuristic analysis's text in Chinese or English: the importance reason, summary, scope,
risks, recommendations, insights and notes. Everything here only formats facts computed by the
other modules; untrusted commit text is cut, stripped of trailers, e-mails, mentions and Markdown
constructs before use.

Over 400 lines because it is one voice: every field of a heuristic analysis in two languages, formatted from
the same facts with the same untrusted-text rules.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from analysis.heuristic.facts import AREA_DEPTH, Area, Facts, common_kinds, folder
from analysis.heuristic.phrases import KIND_NAMES, t
from analysis.heuristic.scores import Judgment
from analysis.heuristic.signals import SIZE_MEDIUM_MAX, Signal
from analysis.labels import importance_word, quote_elided
from analysis.models import (
    BREAKING_KINDS,
    DEPENDENCY_KINDS,
    INSIGHT_DIMENSIONS,
    MODULE_KINDS,
    ChangeType,
    FileChange,
    Importance,
    SurfaceChange,
    SurfaceKind,
    user_name,
)
from analysis.paths import PathKind
from analysis.text import code_text, neutralize_mentions, one_line, strip_trailers
from analysis.titles import REVERTS_SHA, reverted_title

if TYPE_CHECKING:
    from analysis.history.facts import HistoryFacts

_MAX_AREAS = 6  # folders listed in a scope before "N other folders"
_PERF_CLAIM = re.compile(
    r"\b(perf|performance|throughput|latency|faster|slower|speed ?up|optimi[sz]\w*|tpot|ttft|memory usage)\b",
    re.I,
)
_MAX_ITEMS = 3


def _num(n: int) -> str:
    return f"{n:,}"


def _code(text: str) -> str:
    """An identifier or path as a code span. Paths and names come from the commit too: no backticks
    (they would break the span) and no mentions."""
    return f"`{code_text(text)}`"


def _items(lang: str, items: Iterable[str]) -> str:
    """Up to three facts as code spans, then how many more there are."""
    values = list(items)
    shown = [_code(v) for v in values[:_MAX_ITEMS]]
    if len(values) > _MAX_ITEMS:
        return t(lang, "list_sep").join(shown) + t(
            lang, "more", total=_num(len(values)), rest=_num(len(values) - _MAX_ITEMS)
        )
    return t(lang, "list_sep").join(shown)


def _untrusted(text: str, limit: int, lang: str) -> str:
    """Commit text as plain prose: one line, no trailers or e-mails, no mentions, no Markdown
    constructs (links, headings, HTML), balanced backticks. Over `limit`, whole sentences are kept
    (at least the first, unless it is itself over twice `limit`: then it is elided, its size stated)."""
    text = strip_trailers(text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"!?\[([^\]\n]*)\]\([^)\n]*\)", r"\1", text)  # [label](url) → label
    # <url|label> (a link disguised as its label) → label; <url> → nothing: no stray "<" is left.
    text = re.sub(r"<https?://[^\s|<>]*(?:\|([^<>\n]*))?>", lambda m: m.group(1) or "", text)
    text = re.sub(r"https?://\S+", "", text)
    # Line-level Markdown (headings, quotes, bullets, checkboxes) would be noise once joined.
    text = re.sub(r"^[ \t]*(#{1,6}|>|[-*+]|\d+[.)])[ \t]+(\[[ xX]\][ \t]+)?", "", text, flags=re.M)
    text = neutralize_mentions(one_line(text))
    if text.count("`") % 2:
        text = text.replace("`", "'")
    if len(text) > limit:
        text = _whole_sentences(text, limit)
    if len(text) > 2 * limit:  # one endless "sentence" (a 190 KB message): never quote it all
        text = quote_elided(lang, text, limit)
        text = text.replace("`", "'") if text.count("`") % 2 else text
    return text.strip()


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def _whole_sentences(text: str, limit: int) -> str:
    sentences = _SENTENCE_END.split(text)
    kept = [sentences[0]]
    for sentence in sentences[1:]:
        if len(" ".join([*kept, sentence])) > limit:
            break
        kept.append(sentence)
    result = " ".join(kept)
    return result.replace("`", "'") if result.count("`") % 2 else result


def _join_clauses(parts: list[str], lang: str) -> str:
    """Clauses joined by "; ": in English the later ones start lower-case, mid-sentence."""
    if lang == "en":
        parts = parts[:1] + [p[:1].lower() + p[1:] for p in parts[1:]]
    return t(lang, "sep").join(parts)


def reason(facts: Facts, judgment: Judgment, lang: str, history: HistoryFacts | None = None) -> str:
    """The two scores' decisive facts and what decided the tier, short enough to read at a glance: at most
    REASON_FACTS facts per score, then how many more; names as users type them, no code expressions.
    "impact (high): breaks users: removes `Config.old` (no alias) and 4 more; risk (medium): 120 changed
    lines in 3 files, riskier than 70% of the last 180 days' commits; decided by impact"."""
    impact = _impact_clause(judgment.signals, lang)
    risk = _risk_clauses(facts, judgment, lang, history)
    return t(lang, "sep").join(
        [
            t(lang, "impact", tier=importance_word(lang, judgment.impact_tier), facts=impact),
            t(lang, "risk", tier=importance_word(lang, judgment.risk_tier), facts=risk),
            t(lang, f"decided_{judgment.decided_by}"),
        ]
    )


REASON_FACTS = 3  # facts stated per score in the reason line; the rest are counted
RISK_ITEMS = 1  # examples named per risk adjustment (new files, dependencies …); the rest are counted
# What the impact clause states: the findings of weight, else the facts stated in their place (public-API
# paths, new model files, a revert, prose-only files, nothing users run, a version bump).
_IMPACT_KEYS = (
    "breaking", "breaking_deep", "declared_breaking", "supported_dropped", "security", "behaviour",
    "config_default", "switch", "user_impact", "title_default", "host_patch", "setting_default", "notice",
    "setting_added", "feature", "title_feature", "supported_added", "behaviour_deep", "notice_deep",
    "feature_deep", "public_api", "new_model", "revert", "prose", "non_runtime", "version_bump",
)  # fmt: skip
_BREAKING_KEYS = frozenset({"breaking", "breaking_deep", "declared_breaking", "supported_dropped"})


def _impact_clause(signals: Iterable[Signal], lang: str) -> str:
    """The findings of weight, heaviest first, else the statements without weight (a finding makes
    "only docstrings changed in x" beside it noise); REASON_FACTS facts in all, grouped under their finding,
    and how many more."""
    mine = [s for s in signals if s.key in _IMPACT_KEYS]
    # A revert weighs what it undoes but never "breaks users" (scores.judge caps it): its removals are what
    # it takes back, said so, or the reason would call a medium commit breaking.
    reverting = any(s.key == "revert" for s in mine)
    weighed = sorted((s for s in mine if s.impact), key=lambda s: -s.impact)
    ordered = weighed or mine
    groups: list[str] = []
    budget, hidden = REASON_FACTS, 0
    for signal in ordered:
        items = _reason_items(signal, lang)
        if not items:  # a statement without items (a revert, nothing users run changed)
            if budget > 0:
                groups.append(t(lang, signal.key, items=""))
                budget -= 1
            else:
                hidden += 1
            continue
        shown, rest = items[:budget], items[budget:]
        hidden += len(rest)
        budget -= len(shown)
        if shown:
            key = "takes_back" if reverting and signal.key in _BREAKING_KEYS else signal.key
            groups.append(t(lang, key, items=t(lang, "list_sep").join(shown)))
    text = t(lang, "clause_sep").join(groups) or t(lang, "impact_none")
    total = REASON_FACTS - budget + hidden
    return text + (t(lang, "more", total=_num(total), rest=_num(hidden)) if hidden else "")


def _reason_items(signal: Signal, lang: str) -> list[str]:
    if signal.key == "mechanical":
        return [t(lang, f"mech_{k}") for k in signal.items]
    if signal.changes:
        # Short names; different changes that read the same (`write` added in four modules, a class and
        # its re-export) are said once with how many modules. The same change found twice is said once.
        changes = {(c.kind, c.name, c.old, c.new): c for c in signal.changes}.values()
        texts = Counter(brief(c, lang) for c in changes)
        return [text + (t(lang, "in_modules", n=_num(n)) if n > 1 else "") for text, n in texts.items()]
    return [_code(i) for i in signal.items]


def _risk_clauses(facts: Facts, judgment: Judgment, lang: str, history: HistoryFacts | None) -> str:
    """Size and where it places the commit, then the adjustments that moved the risk tier and what the
    history shows, REASON_FACTS facts in all, and how many more."""
    ranked_by_history = history is not None and history.percentile is not None
    size = t(
        lang,
        "size_only" if ranked_by_history else "size",
        lines=_num(facts.counted_lines),
        files=_num(facts.commit.file_count),
        prior=importance_word(lang, judgment.prior),
    )
    if facts.ignored_lines:
        size += t(lang, "ignored", n=_num(facts.ignored_lines))
    parts = [size]
    if ranked_by_history:
        parts[0] += t(lang, "clause_sep") + t(
            lang, "hist_prior", pct=_num(round(100 * history.percentile)), days=_num(history.window_days)
        )
    extra: list[str] = []
    for signal in judgment.signals:
        if signal.risk:
            step = "nudge" if ranked_by_history and signal.risk > 0 else "up" if signal.risk > 0 else "down"
            extra.append(_risk_signal_text(signal, lang) + t(lang, step))
        elif signal.key == "isolated":
            extra.append(_risk_signal_text(signal, lang) + t(lang, "capped"))
        elif signal.key in ("dependency", "build"):
            extra.append(_risk_signal_text(signal, lang) + t(lang, "floor"))
    if history is not None:
        extra.extend(_history_text(history, lang))
    shown = extra[: REASON_FACTS - 1]
    text = t(lang, "clause_sep").join(parts + shown)
    hidden = len(extra) - len(shown)
    return text + (t(lang, "more", total=_num(1 + len(extra)), rest=_num(hidden)) if hidden else "")


def _risk_signal_text(signal: Signal, lang: str) -> str:
    items = _reason_items(signal, lang)
    text = t(lang, "list_sep").join(items[:RISK_ITEMS])
    if len(items) > RISK_ITEMS:
        text += t(lang, "more", total=_num(len(items)), rest=_num(len(items) - RISK_ITEMS))
    return t(lang, signal.key, items=text)


# What history must show before the reason names it: a path at least this many times the branch's
# follow-up rate, recent churn on the same files, several areas.
_PATH_LIFT_SHOWN = 2.0
_FOLLOWED_SHOWN = 2
_CHURN_SHOWN = 10
_AREAS_SHOWN = 3


def _history_risks(history: HistoryFacts, lang: str) -> list[str]:
    """What the branch's past says might break: paths whose changes were often followed up, and
    a commit that is itself a fix (fixes get fixed again)."""
    found = []
    worst = history.risky_paths[0] if history.risky_paths else None
    if worst is not None and worst.followed >= _FOLLOWED_SHOWN and history.path_lift >= _PATH_LIFT_SHOWN:
        found.append(
            t(lang, "risk_hist_path", path=_code(worst.path), k=_num(worst.followed), n=_num(worst.touches))
        )
    if history.follows_up:
        shas = _items(lang, [link.original[:7] for link in history.follows_up])
        found.append(t(lang, "risk_hist_follow_up", items=shas))
    return found


def _history_text(history: HistoryFacts, lang: str) -> list[str]:
    """What history shows beside the percentile, as short clauses."""
    parts = []
    worst = history.risky_paths[0] if history.risky_paths else None
    if worst is not None and worst.followed >= _FOLLOWED_SHOWN and history.path_lift >= _PATH_LIFT_SHOWN:
        parts.append(
            t(lang, "hist_path", path=_code(worst.path), k=_num(worst.followed), n=_num(worst.touches))
        )
    for link in history.follows_up[:2]:
        parts.append(t(lang, f"hist_follows_{link.kind.value}", sha=_code(link.original[:7])))
    if history.churn >= _CHURN_SHOWN:
        parts.append(t(lang, "hist_churn", n=_num(history.churn)))
    if history.areas >= _AREAS_SHOWN:
        parts.append(t(lang, "hist_areas", n=_num(history.areas)))
    return parts


def _signal_text(signal: Signal, lang: str) -> str:
    if signal.key == "mechanical":
        names = [t(lang, f"mech_{k}") for k in signal.items]
        return t(lang, "mechanical", items=t(lang, "list_sep").join(names))
    if signal.changes:
        return t(lang, signal.key, items=_changes(signal.changes, lang))
    return t(lang, signal.key, items=_items(lang, signal.items))


def _changes(changes: Iterable[SurfaceChange], lang: str) -> str:
    """Up to three surface changes in words, then how many more (the same words said once: a dropped
    Python version is found in `requires-python` and in the classifiers alike)."""
    values = list(dict.fromkeys(describe(c, lang) for c in changes))
    shown = values[:_MAX_ITEMS]
    text = t(lang, "list_sep").join(shown)
    if len(values) > _MAX_ITEMS:
        text += t(lang, "more", total=_num(len(values)), rest=_num(len(values) - _MAX_ITEMS))
    return text


_RENAMES = frozenset(
    {SurfaceKind.RENAMED, SurfaceKind.FIELD_RENAMED, SurfaceKind.PARAM_RENAMED}
    | {SurfaceKind.OPTION_RENAMED, SurfaceKind.ENV_RENAMED}
)
# A lifted guard's condition longer than this is not quoted (the name says where to look).
_MAX_CHECK = 80
_SHORT_VALUE = re.compile(r"""-?[\w.+-]{1,16}|(["'])[^"'\n]{0,14}\1""")


def brief(change: SurfaceChange, lang: str) -> str:
    """One surface change as the reason line states it: the name as users type it (`Class.method(arg)`, not
    the module path), values only when they are short literals, never a code expression."""

    def shown(value: str) -> str:
        return user_name(value, change.path)

    name = _code(shown(change.name))
    kind = change.kind
    if kind == SurfaceKind.SWITCH_FLIPPED and change.new is None:
        return t(lang, "surface_guard_lifted", name=name)
    if kind in MODULE_KINDS:  # the import path is the change: said whole
        old, new = change.old or change.name, change.new or change.name
        text = t(lang, f"surface_{kind.value}", name=_code(change.name), old=_code(old), new=_code(new))
    elif kind in _RENAMES:
        old = shown(change.old or "") if kind == SurfaceKind.RENAMED else change.old or ""
        new = shown(change.new or "") if kind == SurfaceKind.RENAMED else change.new or ""
        text = t(lang, f"surface_{kind.value}", old=_code(old), new=_code(new))
    elif kind in (SurfaceKind.DEFAULT_CHANGED, SurfaceKind.SWITCH_FLIPPED, SurfaceKind.DEPENDENCY_CHANGED):
        old, new = _value(change.old, change), _value(change.new, change)
        if old is None or new is None:
            return t(lang, f"surface_{kind.value}_bare", name=name)
        text = t(lang, f"surface_{kind.value}", name=name, old=_code(old), new=_code(new))
        if kind == SurfaceKind.SWITCH_FLIPPED:
            text += f": {_code(old)} → {_code(new)}"
    else:
        text = t(lang, f"surface_{kind.value}", name=name, old=name, new=_code(change.new or "?"))
    if change.kind in BREAKING_KINDS and change.kind != SurfaceKind.SUPPORT_DROPPED:
        text += t(lang, "alias_kept" if change.aliased else "no_alias")
    return text


def _value(value: str | None, change: SurfaceChange) -> str | None:
    """A value short and plain enough to state: a literal, or a requirement's version range."""
    if value is None:
        return None
    if change.kind in DEPENDENCY_KINDS:
        spec = value[len(change.name) :] if value.lower().startswith(change.name.lower()) else value
        spec = spec.split(";", 1)[0].strip(" @")
        return spec if 0 < len(spec) <= 24 else None
    return value if _SHORT_VALUE.fullmatch(value) else None


_FIELD_KINDS = frozenset({SurfaceKind.FIELD_ADDED, SurfaceKind.FIELD_REMOVED, SurfaceKind.FIELD_RENAMED})


def describe(change: SurfaceChange, lang: str) -> str:
    """One surface change in words: "renames config field `a` → `b` (no alias)"."""
    # a guard lifted: say which check went
    if change.kind == SurfaceKind.SWITCH_FLIPPED and change.new is None:
        if change.old and len(one_line(change.old)) <= _MAX_CHECK:
            return t(lang, "surface_guard_lifted_check", name=_code(change.name), old=_code(change.old))
        return t(lang, "surface_guard_lifted", name=_code(change.name))
    key = f"surface_{change.kind.value}"
    if change.kind in _FIELD_KINDS and change.path and not change.path.endswith((".py", ".pyi")):
        # a struct's field or an enum's member of a C++, Rust, Go or TypeScript API: no configuration
        key = key.replace("_field_", "_member_")
    text = t(
        lang,
        key,
        name=_code(change.name),
        old=_code(change.old or change.name),
        new=_code(change.new or "?"),
    )
    if change.kind == SurfaceKind.SWITCH_FLIPPED and change.old is not None and change.new is not None:
        text += f": {_code(change.old)} → {_code(change.new)}"
    if change.kind in BREAKING_KINDS and change.kind != SurfaceKind.SUPPORT_DROPPED:
        text += t(lang, "alias_kept" if change.aliased else "no_alias")
    return text


# -- areas ------------------------------------------------------------------------------------


def _area_name(area: Area, lang: str) -> str:
    return _code(area.name) if area.name else t(lang, "root")


# -- summary ----------------------------------------------------------------------------------


def summary(facts: Facts, change: ChangeType, importance: Importance, lang: str) -> str:
    sentences = [_files_sentence(facts, lang)]
    if change == ChangeType.REVERT:
        sentences.append(_revert_sentence(facts, lang))
    if importance == Importance.HIGH:
        sentences.append(_added_deleted(facts, lang))
    if importance != Importance.LOW:
        body = _untrusted(facts.body, 240, lang)
        sentences.append(t(lang, "body", text=body) if body else "")
    return (" " if lang == "en" else "").join(s for s in sentences if s)


def _added_deleted(facts: Facts, lang: str) -> str:
    parts = [
        t(lang, key, n=_num(n))
        for key, n in (("adds", _count_status(facts, "added")), ("deletes", _count_status(facts, "removed")))
        if n
    ]
    if not parts:
        return ""
    text = t(lang, "and").join(parts)
    return text[0].upper() + text[1:] + t(lang, "end")


def _revert_sentence(facts: Facts, lang: str) -> str:
    """What the revert takes out, named from its title, never the commit's own title: `Revert "Revert
    "X""` restores X; a title cut by GitHub keeps its ellipsis."""
    sha = REVERTS_SHA.search(facts.commit.message)
    target = reverted_title(facts.commit.title)
    if target is None:
        return t(lang, "reverts_commit", sha=sha.group(1)[:10]) if sha else t(lang, "reverts_unnamed")
    what = _untrusted(target.text, 160, lang) + ("…" if target.cut else "")
    sha_text = t(lang, "reverts_sha", sha=sha.group(1)[:10]) if sha else ""
    return t(lang, "restores" if target.restores else "reverts", what=what, sha=sha_text)


def _files_sentence(facts: Facts, lang: str) -> str:
    subject = _untrusted(facts.subject, 200, lang) or t(lang, "empty_subject")
    if not facts.commit.file_count:
        return t(lang, "summary_no_files", subject=subject)
    areas = facts.areas
    if not areas:
        where = ""
    elif len(areas) == 1:
        where = t(lang, "where_one", area=_code(areas[0].name)) if areas[0].name else t(lang, "where_root")
    else:
        names = t(lang, "list_sep").join(_area_name(a, lang) for a in areas[:2])
        where = t(lang, "where_many", areas=names)
    return t(
        lang,
        "summary",
        subject=subject,
        files=_num(facts.commit.file_count),
        add=_num(facts.commit.total_additions),
        dele=_num(facts.commit.total_deletions),
        where=where,
    )


def _count_status(facts: Facts, status: str) -> int:
    return sum(1 for f in facts.files if f.status == status)


# -- scope, risks, recommendations --------------------------------------------------------------


def scope(facts: Facts, lang: str) -> list[str]:
    areas = facts.areas
    lines = [
        t(
            lang,
            "scope_line",
            area=_area_name(a, lang),
            n=_num(a.files),
            kinds=t(lang, "list_sep").join(KIND_NAMES[lang][k] for k in a.kinds)
            + (t(lang, "not_shipped") if a.unshipped else ""),
        )
        for a in areas[:_MAX_AREAS]
    ]
    rest = areas[_MAX_AREAS:]
    if rest:
        lines.append(t(lang, "scope_more", areas=_num(len(rest)), n=_num(sum(a.files for a in rest))))
    if facts.commit.files_truncated:
        lines.append(t(lang, "truncated", shown=_num(len(facts.files)), total=_num(facts.commit.file_count)))
    return lines or [t(lang, "scope_none")]


def _by_key(signals: list[Signal]) -> dict[str, Signal]:
    return {s.key: s for s in signals}


def _signal_phrases(sig: dict[str, Signal], lang: str, phrases: dict[str, str]) -> list[str]:
    """{signal key: phrase key}: for each signal found, in that order, its phrase naming its facts."""
    return [t(lang, phrase, items=_facts_of(sig[key], lang)) for key, phrase in phrases.items() if key in sig]


def _facts_of(signal: Signal, lang: str) -> str:
    return _changes(signal.changes, lang) if signal.changes else _items(lang, signal.items)


def _status_phrases(facts: Facts, lang: str, phrases: dict[str, str]) -> list[str]:
    """{file status: phrase key}: for each status some files have, its phrase with their number."""
    counts = {status: _count_status(facts, status) for status in phrases}
    return [t(lang, phrase, n=_num(counts[status])) for status, phrase in phrases.items() if counts[status]]


def risks(facts: Facts, signals: list[Signal], lang: str, history: HistoryFacts | None = None) -> list[str]:
    sig = _by_key(signals)
    found: list[str] = []
    source_lines = facts.lines_of(PathKind.SOURCE)
    if source_lines >= 20 and not facts.files_of(PathKind.TESTS):
        found.append(t(lang, "risk_no_tests", lines=_num(source_lines)))
    found += _signal_phrases(
        sig,
        lang,
        {
            "breaking": "risk_breaking",
            "breaking_deep": "risk_breaking",
            "declared_breaking": "risk_declared",
            "supported_dropped": "risk_breaking",
            "behaviour": "risk_behaviour",
            "behaviour_deep": "risk_behaviour",
            "switch": "risk_behaviour",
            "host_patch": "risk_behaviour",
            "setting_default": "risk_defaults",
            "public_api": "risk_api",
            "config_default": "risk_defaults",
            "dependency": "risk_deps",
            "build": "risk_build",
            "security": "risk_security",
            "new_model": "risk_new_model",
        },
    )
    if "revert" in sig:
        found.append(t(lang, "risk_revert"))
    if history is not None:
        found.extend(_history_risks(history, lang))
    found.extend(_file_risks(facts, sig, lang))
    if not found:
        found.append(t(lang, "risk_none", lines=_num(facts.counted_lines)))
    return found


def _file_risks(facts: Facts, sig: dict[str, Signal], lang: str) -> list[str]:
    found: list[str] = []
    if "kernel" in sig:
        found.append(t(lang, "risk_kernel", items=_items(lang, sig["kernel"].items)))
    found += _status_phrases(facts, lang, {"removed": "risk_deleted", "renamed": "risk_renamed"})
    areas = facts.areas
    if facts.counted_lines > SIZE_MEDIUM_MAX and len(areas) >= 3:
        found.append(t(lang, "risk_large", lines=_num(facts.counted_lines), areas=_num(len(areas))))
    binary = len(facts.files_of(PathKind.BINARY))
    if binary:
        found.append(t(lang, "risk_binary", n=_num(binary)))
    no_patch = sum(1 for f, k in facts.meaningful() if f.patch is None and f.changes > 0)
    if no_patch:
        found.append(t(lang, "risk_no_patch", n=_num(no_patch)))
    return found


def recommendations(facts: Facts, signals: list[Signal], lang: str) -> list[str]:
    sig = _by_key(signals)
    recs: list[str] = []
    review = _review_areas(facts)
    if review:
        recs.append(t(lang, "rec_review_first", areas=_items(lang, review)))
    test_dirs = list(
        dict.fromkeys(f.path.rsplit("/", 1)[0] if "/" in f.path else f.path for f in _tests(facts))
    )
    removed_tests = [f for f in facts.files_of(PathKind.TESTS) if f.status == "removed"]
    if test_dirs:
        recs.append(t(lang, "rec_run_tests", items=_items(lang, test_dirs)))
    elif removed_tests:
        # Deleted tests are tests changed: say so, never "no tests changed".
        recs.append(
            t(lang, "rec_tests_removed", n=_num(len(removed_tests)), areas=_items(lang, review or ["."]))
        )
    elif facts.lines_of(PathKind.SOURCE):
        recs.append(t(lang, "rec_add_tests", areas=_items(lang, review or ["."])))
    recs += _signal_phrases(
        sig,
        lang,
        {
            "breaking": "rec_breaking",
            "breaking_deep": "rec_breaking",
            "declared_breaking": "rec_declared",
            "behaviour": "rec_behaviour",
            "behaviour_deep": "rec_behaviour",
            "switch": "rec_behaviour",
            "public_api": "rec_api",
            "config_default": "rec_defaults",
            "dependency": "rec_deps",
            "build": "rec_build",
            "new_model": "rec_new_model",
        },
    )
    if "security" in sig:
        # Review files, not CVE ids: the flagged paths, else the folders with runtime changes.
        paths = [i for i in sig["security"].items if i in facts.by_path] or review or ["."]
        recs.append(t(lang, "rec_security", items=_items(lang, paths)))
    if "revert" in sig:
        recs.append(t(lang, "rec_revert"))
    if "kernel" in sig:
        recs.append(t(lang, "rec_kernel"))
    if not recs and facts.files:
        largest = max(facts.files, key=lambda f: f.changes)
        recs.append(t(lang, "rec_largest", path=_code(largest.path)))
    return recs or [t(lang, "rec_none")]


def _tests(facts: Facts) -> list[FileChange]:
    return [f for f in facts.files_of(PathKind.TESTS) if f.status != "removed"]


def _review_areas(facts: Facts) -> list[str]:
    """Folders with source or config changes, most changed lines first: where a reviewer starts."""
    runtime = {PathKind.SOURCE, PathKind.CONFIG, PathKind.DEPENDENCY_MANIFEST, PathKind.BUILD}
    lines: Counter[str] = Counter()
    for f, k in facts.meaningful():
        if k in runtime:
            lines[folder(f.path, AREA_DEPTH) or f.path] += f.changes + 1
    return [name for name, _ in lines.most_common(_MAX_ITEMS)]


# -- insights (high tier) ---------------------------------------------------------------------


def insights(facts: Facts, signals: list[Signal], lang: str) -> dict[str, str]:
    sig = _by_key(signals)
    builders = {
        "architecture": _ins_architecture,
        "performance": _ins_performance,
        "security": _ins_security,
        "maintainability": _ins_maintainability,
        "compatibility": _ins_compatibility,
        "resources": _ins_resources,
    }
    return {dim: builders[dim](facts, sig, lang) for dim in INSIGHT_DIMENSIONS if dim in builders}


def _ins_architecture(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    areas = facts.areas
    names = [a.name or "." for a in areas]
    text = t(lang, "ins_arch_areas", areas=_num(len(areas)), list=_items(lang, names))
    changed_set = _added_deleted(facts, lang).rstrip("。.")
    if changed_set:
        text += t(lang, "ins_arch_files", text=changed_set[0].lower() + changed_set[1:])
    elif facts.files:
        text += t(lang, "ins_arch_modify")
    if "new_model" in sig:
        text += t(lang, "ins_arch_new_model", items=_items(lang, sig["new_model"].items))
    return text


def _ins_performance(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    claim = _perf_claim(facts, lang)
    parts = []
    if claim:
        parts.append(t(lang, "ins_perf_claim", text=claim))
    if "kernel" in sig:
        parts.append(t(lang, "ins_perf_kernel", items=_items(lang, sig["kernel"].items)))
    return _join_clauses(parts, lang) if parts else t(lang, "ins_perf_none")


def _perf_claim(facts: Facts, lang: str) -> str:
    """The first title or body sentence that talks about performance, quoted as the author's claim."""
    for sentence in re.split(r"(?<=[.!?。])\s+|\n+", facts.subject + "\n" + facts.body):
        if _PERF_CLAIM.search(sentence):
            return _untrusted(sentence, 160, lang)
    return ""


def _ins_security(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    if "security" in sig:
        return t(lang, "ins_sec", items=_items(lang, sig["security"].items))
    return t(lang, "ins_sec_none")


def _ins_maintainability(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    tests = facts.files_of(PathKind.TESTS)
    source_lines = facts.lines_of(PathKind.SOURCE)
    if tests:
        text = t(
            lang,
            "ins_maint_tests" if source_lines else "ins_maint_tests_only",
            tests=_num(len(tests)),
            tlines=_num(sum(f.changes for f in tests)),
            slines=_num(source_lines),
        )
    elif source_lines:
        text = t(lang, "ins_maint_no_tests", slines=_num(source_lines))
    else:
        kinds = common_kinds(facts.kinds)
        text = t(
            lang, "ins_maint_no_source", kinds=t(lang, "list_sep").join(KIND_NAMES[lang][k] for k in kinds)
        )
    text += t(
        lang, "ins_maint_net", add=_num(facts.commit.total_additions), dele=_num(facts.commit.total_deletions)
    )
    if "mechanical" in sig:
        text += t(lang, "sep") + _signal_text(sig["mechanical"], lang)
    return text


def _ins_compatibility(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    items = _signal_phrases(
        sig,
        lang,
        {
            "breaking": "compat_breaking",
            "breaking_deep": "compat_breaking",
            "declared_breaking": "compat_declared",
            "supported_dropped": "compat_breaking",
            "behaviour": "compat_behaviour",
            "behaviour_deep": "compat_behaviour",
            "switch": "compat_behaviour",
            "host_patch": "compat_behaviour",
            "setting_default": "compat_defaults",
            "public_api": "compat_api",
            "config_default": "compat_defaults",
            "dependency": "compat_deps",
        },
    )
    items += _status_phrases(facts, lang, {"removed": "compat_removed", "renamed": "compat_renamed"})
    if not items:
        return t(lang, "ins_compat_none")
    return t(lang, "ins_compat", items=t(lang, "sep").join(items))


def _ins_resources(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    items = []
    if "dependency" in sig:
        items.append(t(lang, "res_deps", items=_items(lang, sig["dependency"].items)))
    binary = len(facts.files_of(PathKind.BINARY))
    if binary:
        items.append(t(lang, "res_binary", n=_num(binary)))
    if "kernel" in sig:
        items.append(t(lang, "res_kernel", items=_items(lang, sig["kernel"].items)))
    if not items:
        return t(lang, "ins_res_none")
    return t(lang, "ins_res", items=t(lang, "sep").join(items))


# -- notes ------------------------------------------------------------------------------------


def notes(facts: Facts, lang: str) -> list[str]:
    # That the analysis is heuristic is said once per report or card by the renderers, not per commit.
    found = []
    if facts.commit.files_truncated:
        found.append(
            t(lang, "note_truncated", shown=_num(len(facts.files)), total=_num(facts.commit.file_count))
        )
    return found
