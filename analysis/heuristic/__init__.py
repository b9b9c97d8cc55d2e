"""The heuristic analyser: change type, importance and a full tier-shaped analysis without an LLM.

Everything here is derived from facts in the commit (paths, statuses, line counts, the title, the
message body without trailers, patch lines) by fixed, documented rules, so a reader can check every
statement. It is the embedded default and the fallback when an LLM call fails.

Importance rubric (RUBRIC_VERSION is part of the analysis cache key: bump it when a rule changes). Two
scores, both stated in the reason with their decisive facts, and which of them decided (`scores.py`):

- Impact, what the change does to the people who use the code, from the files they run (`facts.py`:
  what the packaging ships, else path kinds; prose-only files never count). Weights, few and fixed:
  3 breaks users (a public name, parameter, config field, option, environment variable, route or entry
  point removed or renamed without an alias; a supported Python version dropped; a value taken out of a
  list of supported ones; a key of a settings mapping renamed where it is read with the old key read nowhere in
  the commit, or no longer read by a configuration module; a security advisory id with code changed; a message
  that declares the change breaking — `type!:`, a leading 💥 or `[Breaking]`, a `BREAKING CHANGE:` footer — with
  code changed; a release-notes entry the commit adds for itself under a breaking or removal heading or as a
  breaking fragment, with code changed: analysis/surface/release_entries.py); 2
  changes what existing users get (a default that really changed, a setting's default read from a
  configuration mapping or given under its `is None` guard, a switch flipped, another object's attribute
  replaced at import, another library's settings changed at run time (its settings object patched or set by
  name, a named logger's level), security words / paths / risky calls with code changed, a fix that adds a check refusing hostile input (a
  path held inside its root, a carriage return refused), a fix whose title
  names a crash, hang, corruption, wrong results, an out-of-bounds access or a slowdown); 1 something new or to
  note (a public capability added, or declared by the title — ✨, `feat:`, `[Feature]`, "add support for" —
  with code changed; a title that says the change now raises or warns — "Raise error if …", "Warn when …",
  "Deprecate …" — with code changed; a setting newly read from a configuration mapping, a value added to a supported list, a
  Python version newly supported, a deprecation, an exception newly raised, a rename that keeps an alias;
  a release-notes entry the commit adds for itself as a feature, change, deprecation or performance item,
  with code changed, where the code says nothing of weight — a fix, docs or internal entry adds nothing;
  docs pages or a README written beside a change of code users run, where the code says nothing of weight and
  neither the title nor the commit's own entry calls it a fix, docs, tests, CI or a restructuring);
  0 none.
  A name in a module more than REACH_DEPTH (3) deep in its package reaches mostly the package's own
  callers and weighs one step less, and the reason says "deep in the package" (what users type, options,
  environment variables, routes, the fields of an HTTP API's request and response models, Python versions,
  reaches everyone); so does a code name removed or renamed
  that the repository's reference docs never mention (analysis/surface/doc_mentions.py), said "breaks
  callers of names its docs never mention". The surface facts (analysis/surface/) come from parsing
  the files before and after; without them, defaults, switches and dropped Python versions are read
  from the patch lines. A revert carries the weight of what it undoes, never "breaks users" by its own
  removals.
- Risk, how likely it needs a revert or a fix: the history score (analysis/history/index.py: size, spread,
  the touched paths' follow-up record, churn, being a follow-up) placed among the branch's recent
  commits, bot commits left out: the top HIGH_SHARE high, down to FLAGGED_SHARE medium. Without enough
  history the size prior on counted lines (not lockfile / generated / vendored / minified / binary):
  <= SIZE_LOW_MAX low, <= SIZE_MEDIUM_MAX medium, else high. GPU kernel code nudges risk up; a change
  proven mechanical from the patches (formatting, annotations, renames) takes a tier off; a change that
  sits in new files, existing runtime files changed by at most SIZE_LOW_MAX lines, stays medium at most;
  a change whose existing and new code users run moved by at most SIZE_LOW_MAX lines beside more than twice that
  in tests, docs, tooling or prose stays medium at most (its size is not in what users run; not a revert);
  a restructuring by its title where nothing users get changed stays medium at most (the public names it adds
  that are old code moved, and code names it moves keeping the old path, are nothing new: `reorganised.py`),
  and docs or tests by its
  title (a tag, conventional type or gitmoji) where nothing users get changed is low (not a revert, nor where a
  dependency or how what ships is built changes);
  a runtime dependency's version changed (a submodule's pointer moved included) is at least medium (what
  users install changes in ways the diff does not show: a risk, not an impact finding), and so is a path added
  that runs by a dependency's installed version (`if not is_lib_equal_or_newer("2.8.0"):`; CI pins one version,
  the other path first runs on users' machines; not Python's own version, which CI runs every one of).
- The reason line names at most REASON_FACTS (3) facts per score, heaviest first, and counts the rest;
  names as users type them (`Class.method`, not the module path), values only when short literals, never
  a code expression. The report's Compatibility, Risks and the JSON keep every fact.
- The tier: low when nothing users run changed (docs, tests, CI, examples, dev tooling — a Makefile or task
  runner where the packaging says what ships: its build backend never runs it —, files the
  packaging does not ship, comments and docstrings, packaging files whose parsed facts state nothing
  for users: tool sections, dev groups, descriptive metadata) or when only the release version moved, unless the
  change breaks users; high when it breaks users (weight 3); else the risk tier, at least medium for
  weight 1 or 2, and high for a new capability (a public name, option or supported version added that the
  commit does not take away elsewhere, or one the title declares) at medium risk that the commit writes up
  in its docs (added docs lines that name it, or WRITE_UP_LINES (20) of them; not a size mostly in new
  files, no mechanical step, no title tag or prefix calling it a fix or a docs, tests or CI change): "impact
  and risk together". HIGH_SHARE and FLAGGED_SHARE are the reference shares (10 % / 45 %): the risk bands take
  them, impact findings add to them.

Change type: a revert first, then a CVE / GHSA id in the message, title tags (the most meaningful
of several wins), a conventional-commit prefix, security words, the paths when they are all of one kind, the
title's first word and keywords, weak tags ([Chore], [Model]), new source files; else `other`.

Patches are read within a budget (whole patches, most reviewable files first) so that a 3000-file
commit stays fast; what is not read is counted but not inspected. Text is built only from the
commit's facts, in Chinese or English; untrusted commit text is cut, stripped of trailers, e-mails,
mentions and Markdown constructs before use.

One way through, one commit at a time: `facts` reads the commit once (what the rules look at, with
`text_only` and `code_lines` telling prose from code); `change_type` and `signals` (the findings and
their weights) are pure functions of those facts; `scores` turns the signals and the branch's history
into impact, risk and the tier; `phrases` and `prose` write the zh / en text from all of it. `assess`
does the reading and judging once, and callers that need the analysis's text too (the LLM analyser's
prompt, then the fields a model left empty) pass that Assessment on. `bands` keeps an LLM's tiers
within the rubric's. What a title states by convention is analysis/titles.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from analysis.heuristic import prose
from analysis.heuristic.change_type import classify, classify_change
from analysis.heuristic.facts import Facts, commit_facts
from analysis.heuristic.scores import Judgment, judge, size_prior
from analysis.heuristic.signals import BREAKING_KEYS, SIZE_LOW_MAX, SIZE_MEDIUM_MAX
from analysis.labels import LANGS
from analysis.models import Analysis, ChangeType, Commit, Importance

if TYPE_CHECKING:
    from analysis.history.facts import HistoryFacts
# h3: a revert of a revert is summarised as restoring the change; h4: impact and risk scores (issue 16);
# h5: dependency changes a risk floor, not impact; shorter reason lines; surface facts of records and guards narrowed;
# h6: requirements files for CI jobs, translation or release scripts are not what users install
# h7: risk weights; developers' tool configuration is tooling; test switches; defaults named in titles
# h8: a vendored-looking tree the branch's history shows people editing as their own is its code
# h9: a Python file whose syntax trees before and after differ only in docstrings and message text is prose
# h10: module, knob and build-output facts (parser surface-6) and C/C++ under tools/ as programs users run
# h11: a message that declares its change breaking, a title that declares a new capability; a CLI command's
# parameters are its options; deprecations name the parameter whose passing they warn about; docs in types are prose
# h12: fixes naming wrong results / out-of-bounds access; module-level patches of another object; supported-value
# lists; submodule pointers as dependency versions; entry points (parser surface-9)
# h13: a change to how what ships is built (CMake, Meson, build.rs, setup.py, a Dockerfile) is medium at least
# h14: a deprecation a doc comment states (Go `Deprecated:`, JSDoc) is one though only prose changed; "make X the
# default" titles; Cargo features, npm exports subpaths and commands, CMake/Meson options, enum members (surface-10)
# h15: a class moved to another module and imported back (re-exported) takes its members along (surface-11)
# h16: a package __init__'s imports from another distribution are not its API unless __all__ lists them (surface-12)
# h17: nor are those from a sibling or parent package; those from its own modules are (surface-13)
# h19: Python in syntax newer than ours (3.12 type parameters, aliases and f-strings, 3.14 `except A, B:` and
# template strings) has its surface facts (surface-15)
# h20: a commit large only outside the code users run keeps its risk tier at medium at most; a task runner
# beside packaging that says what ships is dev tooling
# h21: a title that says the change now raises or warns is to note; a comparison of secrets made constant-time
# is security-relevant
# h22: a new capability at medium risk that the commit writes up in its docs is high ("impact and risk together"); a code
# name removed that the reference docs never mention weighs one step less (surface-16)
# h23: a runtime dependency's floor raised past a major version breaks users: "drops support for `pydantic 1`";
# so does a C/C++, Rust, Go or TypeScript parameter added that calls must pass (surface-17); "Back out", "Roll back"
# and "Automated rollback of" titles that name their target are reverts
# h24: a dotfile or a shell script the packaging does not ship is not runtime code (a tool's settings, a chore)
# h25: a runtime dependency moved to an optional extra breaks users of the default install (surface-18)
# h26: a title that declares no functional change (`[NFC]`, `… (NFC)`) is a refactor whose words claim nothing new
# h27: a restructuring by its title (a refactor, a move or rename, NFC) with no change users get is medium at most
# h28: a flag's default retyped from its number (`1` → `True`) is no changed default (surface-19); what breaks
# users is the floor of a model's tier (Judgment.floor)
# h29: "Update X to 1.2" moving the manifests is a dependency change; a name moved to another module is said
# whole on both sides; a parameter removed before others is not also a reorder (surface-20); a string literal of
# identifiers (a schema spelling out a signature) is code, not a message
# h30: a title declaring docs or tests (`[Doc]`, `[Typo]`, `[Test]`, `docs:`, `test:`) where no fact says users get
# anything and nothing users install or build changes is low by risk; an assert's message is message text (surface-21)
# h31: a field of an HTTP API's request or response model reaches every API client, however deep its module
# (surface-22)
# h32: another library's settings changed at run time (a settings object patched or set by name, a named logger's
# level) changes what users get; a path taken by a dependency's installed version is medium at least
# h33: what a change does to users, read closer (surface-24): a settings key renamed or no longer read breaks
# users; a restructuring's moved names and an NFC commit's names are no new capability; a risky call moved or
# re-indented is not added; dev-only requirements are no users' dependency; a squash list is not the message;
# a registration users select (a registry key, a register* call) removed breaks users and added is new; a public
# alias removed, a class-body literal changed and an exception base dropped reach users; a hostile-input check
# added by a fix is a behaviour change (medium), not an advisory's weight; requirements files for building
# from source are dependencies (medium), not developers' tools
# h34: a release-notes entry the commit adds for itself is its author's word (analysis/surface/release_entries.py):
# breaking → high, feature/change/deprecation/performance → at least medium, with code changed and not in a
# release, a revert, a notes-only commit, a bot's commit or one of more than 3 entries; release-notes pages and
# fragments are not docs that write a feature up; a vendored-looking tree the branch maintains gets its surface
# facts (surface-25); an entry's category comes from the headings of the notes file's text when the surface step
# read it, else from the patch, and from a fragment's own text where its tool keeps the type there
# h35: a title calling a restructuring internal, with the docs silent on the names it moves, weighs no code names;
# a speed-up declared by convention ([Perf], perf:, ⚡) is a notice claim where code users run changed; a new
# abstract method in an existing public class is breaking (abstract_added); a CMake build's options are its users'
# flags where it exports a package config (surface-26); a title led by a capability verb (Add, Support, Allow …;
# untagged or under a feature/model tag) is a feature claim where code users run changed; C/C++ `#` lines are code
# h36: "Pull out", "Factor out", "Break out", "Extract" lead a restructuring's title; what surface-27 reads
# (dev requirements files, merged stubs, a removal fragment that deprecates) ranks as those facts say; docs
# written for users beside a change of code they run are a note (at least medium: written_up.py) unless the
# title or the commit's own notes entry calls it a fix, docs, tests, CI or a restructuring; a runtime requirement
# removed outright is breaking (dependency_dropped), unless re-added by another packaging file or installed only
# for Pythons below the floor; "Enable X" leads a capability claim (not of tests, CI or linters; "… by default"
# is a change), "Add … guide/tutorial" is docs
RUBRIC_VERSION = "h36"


def counted_lines(commit: Commit) -> int:
    """Changed lines for the size prior: commit totals minus lines in low-value files."""
    return commit_facts(commit).counted_lines


def rank(commit: Commit, lang: str = "zh", history: HistoryFacts | None = None) -> tuple[Importance, str]:
    """Importance and the reason for it, naming the facts used, in the report language."""
    judgment, reason = rubric(commit, lang, history)
    return judgment.importance, reason


@dataclass(frozen=True, slots=True)
class Assessment:
    """What the rules make of one commit, computed once for its whole trip (the LLM analyser's prompt,
    then the fields the model left empty, or its fallback): the facts, read once from the commit; the
    change type; and the judgment — signals, scores and tier — a pure function of the facts and the
    branch's history. The text is written from these, never by reading the commit again."""

    facts: Facts
    change: ChangeType
    judgment: Judgment


def assess(commit: Commit, history: HistoryFacts | None = None) -> Assessment:
    facts = commit_facts(commit, _own(history))
    return Assessment(facts, classify(facts), judge(facts, history))


def rubric(
    commit: Commit,
    lang: str = "zh",
    history: HistoryFacts | None = None,
    *,
    assessment: Assessment | None = None,
) -> tuple[Judgment, str]:
    """The impact and risk scores, the tier and what decided it, and the reason naming the facts of
    each: what the LLM prompt states as the rubric's judgment."""
    found = assessment or assess(commit, history)
    return found.judgment, prose.reason(found.facts, found.judgment, _lang(lang), history)


def judge_commit(commit: Commit, history: HistoryFacts | None = None) -> Judgment:
    """The impact and risk scores, the tier and what decided it, without the text."""
    return judge(commit_facts(commit, _own(history)), history)


def _own(history: HistoryFacts | None) -> frozenset[str]:
    return frozenset(history.own_trees) if history is not None else frozenset()


def analyze(
    commit: Commit,
    lang: str = "zh",
    tier: Importance | None = None,
    history: HistoryFacts | None = None,
    *,
    assessment: Assessment | None = None,
) -> Analysis:
    """A complete analysis for the commit's tier (DESIGN.md §3), built only from its facts. `tier`
    overrides the rubric's rank (an LLM ranked the commit but could not analyse it): the fields of
    that tier are filled all the same. `assessment`: the commit's, when the caller already has it."""
    lang = _lang(lang)
    found = assessment or assess(commit, history)
    facts, change, judgment = found.facts, found.change, found.judgment
    signals = list(judgment.signals)
    reason = prose.reason(facts, judgment, lang, history)
    importance = tier or judgment.importance
    analysis = Analysis(
        sha=commit.sha,
        importance=importance,
        importance_reason=reason,
        change_type=change,
        summary=prose.summary(facts, change, importance, lang),
        analyzer="heuristic",
        model="heuristic",
        prompt_version=RUBRIC_VERSION,
        lang=lang,
        notes=prose.notes(facts, lang),
        impact_score=judgment.impact,
        risk_score=round(judgment.risk, 3),
    )
    if importance != Importance.LOW:
        analysis.scope = prose.scope(facts, lang)
        analysis.risks = prose.risks(facts, signals, lang, history)
        analysis.recommendations = prose.recommendations(facts, signals, lang)
    if importance == Importance.HIGH:
        analysis.insights = prose.insights(facts, signals, lang)
    return analysis


@dataclass(frozen=True, slots=True)
class BreakingStatement:
    """What breaks users, as the rules state it: the report's Compatibility and Risks must say it whoever
    writes them (an LLM's analysis: analysis/llm/stated.py). `names`: the user-facing names it rests on."""

    risks: tuple[str, ...]
    compatibility: str
    names: tuple[str, ...]


def breaking_statement(assessment: Assessment, lang: str = "zh") -> BreakingStatement | None:
    """None when nothing breaks users: no floor (a revert that takes a break back included: its impact is capped)."""
    judgment = assessment.judgment
    found = [s for s in judgment.signals if s.key in BREAKING_KEYS]
    if judgment.floor is None or not found:
        return None
    lang = _lang(lang)
    compatibility = prose.breaking_compatibility(found, lang)
    assert compatibility is not None  # a breaking finding has its phrase
    names = [n for s in found for c in s.changes for n in (c.name, c.old) if n]
    return BreakingStatement(
        tuple(prose.breaking_risks(found, lang)), compatibility, tuple(dict.fromkeys(names))
    )


def _lang(lang: str) -> str:
    return lang if lang in LANGS else "en"


__all__ = [
    "RUBRIC_VERSION",
    "SIZE_LOW_MAX",
    "SIZE_MEDIUM_MAX",
    "Assessment",
    "BreakingStatement",
    "Judgment",
    "analyze",
    "assess",
    "breaking_statement",
    "classify_change",
    "counted_lines",
    "judge_commit",
    "rank",
    "rubric",
    "size_prior",
]
