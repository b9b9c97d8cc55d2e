"""Impact and risk: the two scores behind a commit's tier, and which of them decided it (DESIGN.md §3c).

- Impact: what the change does to the people who use the code, the highest weight among the findings
  on the files they run (`signals.BREAKING` 3, `BEHAVIOUR` 2, `NOTICE` 1; 0 for none). A revert keeps
  the weight of what it undoes but is never "breaking" by its own removals.
- Risk: how likely the change needs a revert or a fix, the history score (analysis/history/index.py: size,
  spread, the paths' follow-up record, churn, being a follow-up) placed among the branch's recent
  commits: the top HIGH_SHARE high, down to FLAGGED_SHARE medium, the rest low; kernel code nudges it
  up, a mechanical change (formatting, annotations, renames) takes a tier off, and a change that sits
  mostly in new files, or is large only outside the code users run (tests, docs, tooling beside a small
  change to that code), stays at medium at most (size alone does not make it risky), and one its title
  declares docs or tests, where nothing users get changed, stays low. Without enough
  history, the size prior on counted lines stands in for the percentile.
- The tier: low when nothing users run changed or the change only bumps the release version (unless
  it breaks users); high when it breaks users; otherwise the risk tier, and at least medium for any
  finding of weight (BEHAVIOUR or NOTICE); a new capability at medium risk that the commit writes up in
  its docs is high, "impact and risk together". The bands are the reference shares (about 10 % high, 45 %
  flagged): impact findings add to them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analysis.heuristic.change_type import declared_type
from analysis.heuristic.facts import Facts
from analysis.heuristic.reorganised import without_internal, without_moved
from analysis.heuristic.signals import (
    BEHAVIOUR,
    BREAKING,
    NOTICE,
    SIZE_LOW_MAX,
    SIZE_MEDIUM_MAX,
    Signal,
    find_signals,
)
from analysis.heuristic.title_claims import RESTRUCTURING, TAKES_AWAY
from analysis.history.index import risk_score
from analysis.models import BREAKING_KINDS, ChangeType, Importance, SurfaceKind
from analysis.surface.doc_mentions import is_doc_text
from analysis.surface.registrations import registered_key
from analysis.titles import without_gitmoji

if TYPE_CHECKING:
    from analysis.history.facts import HistoryFacts

# Shares of the branch's recent commits whose risk score puts them at high, or at medium and above.
HIGH_SHARE = 0.10
FLAGGED_SHARE = 0.45
# With a history percentile, a risk step (kernel code) nudges the percentile instead of a whole tier.
NUDGE = 0.05

_ADDED_IN_CODE = frozenset({SurfaceKind.ADDED, SurfaceKind.PARAM_ADDED, SurfaceKind.FIELD_ADDED})
# Kinds a title declares that say the commit is not a feature, whatever names it adds.
_NOT_FEATURES = frozenset({ChangeType.BUGFIX, ChangeType.DOCS, ChangeType.TESTS, ChangeType.CI_BUILD})
# Types a title declares (a tag, conventional type or gitmoji) whose docs written beside the code are no
# write-up of something users get (signals._sig_written_up).
_NOT_WRITTEN_UP = _NOT_FEATURES | {ChangeType.REFACTOR}
# Lines a commit adds to its docs that write up what it brings, where they do not name it (`_documents`).
WRITE_UP_LINES = 20

TIERS = (Importance.LOW, Importance.MEDIUM, Importance.HIGH)
# Findings that cap the risk tier, and the tier each caps it at: the commit's size is not in existing code users
# run (medium at most), or its author calls it a docs or tests change and no fact says otherwise (low).
CAP_LEVELS = {"isolated": 1, "outside_runtime": 1, "restructuring": 1, "declared_aside": 0}
# Findings whose risk the diff does not show, each a floor of medium: a dependency's version, the build of what
# ships, a path by a dependency's installed version (signals.py).
FLOOR_KEYS = frozenset({"dependency", "build", "version_gate"})
# What a title may declare that says users run nothing new: documentation, tests.
_ASIDE_TYPES = frozenset({ChangeType.DOCS, ChangeType.TESTS})


@dataclass(frozen=True, slots=True)
class Judgment:
    importance: Importance
    impact: float  # impact points: 3 breaks users, 2 changes behaviour, 1 something new or noted, 0 none
    risk: float  # the risk score (history's formula; without history, its size and spread terms alone)
    impact_tier: Importance  # what impact alone says
    risk_tier: Importance  # what risk alone says, after its own adjustments
    prior: Importance  # the risk tier before adjustments: the percentile band, or the size prior
    decided_by: str  # "impact", "risk", "both", or "together" (a new capability with its docs: _documents)
    signals: tuple[Signal, ...]
    # Low whatever its risk, because nothing users run changed (docs, tests, CI, a version bump): the highest
    # tier a model may move it to (bands.within_one_tier). None: one tier either way.
    ceiling: Importance | None = None
    # Decided "together": the docs file that writes up what the commit adds (`_documents`).
    documented_in: str | None = None
    # High whatever a model says, because it breaks users (issue 16: a breaking change is high): the lowest
    # tier a model may move it to (bands.within_one_tier). None: one tier either way.
    floor: Importance | None = None


def size_prior(lines: int) -> Importance:
    """The reference generator's rule: the risk tier when there is too little history."""
    if lines <= SIZE_LOW_MAX:
        return Importance.LOW
    return Importance.MEDIUM if lines <= SIZE_MEDIUM_MAX else Importance.HIGH


def percentile_tier(percentile: float) -> Importance:
    if percentile >= 1 - HIGH_SHARE:
        return Importance.HIGH
    return Importance.MEDIUM if percentile >= 1 - FLAGGED_SHARE else Importance.LOW


def judge(facts: Facts, history: HistoryFacts | None = None) -> Judgment:
    signals = tuple(find_signals(facts))
    if declared_type(facts) in _NOT_WRITTEN_UP:  # docs beside it are the fix's, the docs', a refactor's
        signals = tuple(s for s in signals if s.key != "written_up")
    restructuring = _restructuring(facts)
    if restructuring is not None:  # the names it "adds" that are old code moved bring nothing new
        signals = without_internal(facts, without_moved(facts, signals, restructuring))
    keys = {s.key for s in signals}
    impact = max((s.impact for s in signals), default=0)
    if "revert" in keys:
        impact = min(impact, BEHAVIOUR)
    # a restructuring, or docs or tests by the title, that changes what users get is judged by what it changes
    restructured = (restructuring or _declared_aside(facts, keys)) if impact < NOTICE else None
    if restructured is not None:
        signals += (restructured,)
        keys.add(restructured.key)
    prior, risk_tier, capped = _risk_tiers(facts, signals, history)
    if not capped:  # a cap on size is a decisive fact only where it lowered the risk tier
        signals = tuple(s for s in signals if s.key not in CAP_LEVELS)
    impact_tier = _tier(2 if impact >= BREAKING else 1 if impact >= NOTICE else 0)
    ceiling = None
    if ("non_runtime" in keys or ("version_bump" in keys and impact < NOTICE)) and impact < BREAKING:
        importance = ceiling = Importance.LOW
    elif impact >= BREAKING:
        importance = Importance.HIGH
    else:
        importance = _tier(max(TIERS.index(risk_tier), 1 if impact >= NOTICE else 0))
    decided = ("both" if importance == impact_tier else "risk") if importance == risk_tier else "impact"
    # not a size mostly in new files (a new model and its registry line: an isolated addition is not a headline)
    documented = importance == risk_tier == Importance.MEDIUM and "isolated" not in keys
    documented_in = _documents(facts, signals) if documented else None
    if documented_in is not None:
        importance, decided = Importance.HIGH, "together"
    score = history.score if history is not None else _plain_risk(facts)
    return Judgment(
        importance,
        float(impact),
        score,
        impact_tier,
        risk_tier,
        prior,
        decided,
        signals,
        ceiling,
        documented_in,
        floor=Importance.HIGH if impact >= BREAKING else None,
    )


def _restructuring(facts: Facts) -> Signal | None:
    """A change its author calls a restructuring: a refactor by its tag, conventional type or gitmoji, a declared
    "no functional change", or a title without a stated type that begins "Refactor", "Simplify", "Clean up",
    "Move", "Rename" and the like. Where no fact says users get something changed, `judge` keeps its risk tier
    at medium at most: size alone does not make a restructuring a headline. On vllm's history the commits
    titled as refactors and ranked high by size alone were followed up 0 times in 13 (this moves 9 of them, the
    rest remove something), the other size-decided highs 9 times in 93; pydantic's release notes listed none of
    the 5 it moves as a feature. Not a revert, and not a title that removes, drops, deprecates or disables
    something (users may lose it where no parser looks)."""
    if facts.reverts:
        return None
    if facts.no_functional_change:
        return Signal("restructuring", items=("NFC",))
    subject = without_gitmoji(facts.subject)
    stated = declared_type(facts)
    if stated == ChangeType.REFACTOR and not TAKES_AWAY.match(subject):
        return Signal("restructuring", items=("refactor",))
    found = RESTRUCTURING.match(subject) if stated is None else None
    return Signal("restructuring", items=(found["word"].lower(),)) if found else None


def _declared_aside(facts: Facts, keys: set[str]) -> Signal | None:
    """A change its title declares docs or tests (a tag such as `[Doc]`, `[Typo]`, `[Test]`, a conventional
    `docs:` or `test:`, a gitmoji), in code users run where no fact says users get anything: `judge` keeps its
    risk tier low. Such commits touch code for the docs' sake (docstrings a docs build warns about, the hooks
    that generate a CLI reference) or for a test's; on vllm's history 0 of 381 were followed up (the branch's
    rate: 1.4 %), 18 of them ranked medium or high by size and their paths' record alone. Not a revert, and
    not where what users install or how it is built changes (a dependency, a build file): the title speaks
    for the docs, not for those. A title with a stronger type beside (`[Doc][Bugfix]`) declares that type."""
    if facts.reverts or not facts.runtime or keys & (FLOOR_KEYS | {"non_runtime"}):
        return None
    stated = declared_type(facts)
    return Signal("declared_aside", items=(stated.value,)) if stated in _ASIDE_TYPES else None


def _risk_tiers(
    facts: Facts, signals: tuple[Signal, ...], history: HistoryFacts | None
) -> tuple[Importance, Importance, bool]:
    """The prior, the risk tier, and whether a cap (`CAP_LEVELS`) lowered it."""
    up = sum(s.risk for s in signals if s.risk > 0)
    down = sum(s.risk for s in signals if s.risk < 0)
    if history is not None and history.percentile is not None:
        prior = percentile_tier(history.percentile)
        level = TIERS.index(percentile_tier(history.percentile + NUDGE * up)) + down
    else:
        prior = size_prior(facts.counted_lines)
        level = TIERS.index(prior) + up + down
    if any(s.key in FLOOR_KEYS for s in signals):
        # New versions of what users install, a new way of building it, a path for the versions CI does not
        # install: their risk is not in the diff.
        level = max(level, 1)
    cap = min((CAP_LEVELS[s.key] for s in signals if s.key in CAP_LEVELS), default=None)
    capped = cap is not None and level > cap
    return prior, _tier(cap if capped else level), capped


def _documents(facts: Facts, signals: tuple[Signal, ...]) -> str | None:
    """The docs file that writes up something new the commit brings (its risk medium, no mechanical step
    lowering it, its size not mostly in new files, its title not declaring a fix or a docs, tests or CI
    change): a docs text file whose added lines name a new name, or, where the docs use their own words,
    WRITE_UP_LINES added to them in all. A capability only the title declares has no name to look for: the
    lines alone decide. What is written up for users is a feature a maintainer headlines: pydantic's release
    notes list 28 features, 15 of them with docs changed beside them; of its 115 fixes, 4."""
    # mechanical, or its author calls it a fix, a docs change or no functional change: no headline
    if (
        any(s.risk < 0 for s in signals)
        or declared_type(facts) in _NOT_FEATURES
        or facts.no_functional_change
    ):
        return None
    names = _new_names(signals)
    if not names and not any(s.key == "title_feature" for s in signals):
        return None
    docs = [f for f in facts.files if is_doc_text(f.path) and f.additions]
    if names:
        named = re.compile("|".join(rf"(?<![\w-]){re.escape(n)}(?!\w)" for n in sorted(names)))
        for f in docs:
            diff = facts.diffs.get(f.path)
            if diff is not None and named.search(diff.added):
                return f.path
    if sum(f.additions for f in docs) >= WRITE_UP_LINES:
        return max(docs, key=lambda f: f.additions).path
    return None


def _new_names(signals: tuple[Signal, ...]) -> set[str]:
    """What users would type of each name the commit adds and does not take away elsewhere (a module split
    moves its names: removed here, added there, nothing new): `exclude_if` of `Model.dump(exclude_if)`,
    `--max-batch`, `APP_TIMEOUT`, `/v1/items`; a dunder (`Class.__init__`) brings nothing by itself."""
    gone = {_tail(c.old or c.name) for s in signals for c in s.changes if c.kind in BREAKING_KINDS}
    names = set()
    for c in (c for s in signals if s.key == "feature" for c in s.changes):
        if _tail(c.name) in gone:
            continue
        head, _, args = c.name.partition("(")
        if c.kind in _ADDED_IN_CODE:  # `pkg.mod.Class.f(x)`: the parameter, else the last name
            # a new C++ overload `ns::f(int, bool)` is named by its types: users type its name
            word = args.rstrip(")") if args and c.kind != SurfaceKind.ADDED else head.rsplit(".", 1)[-1]
        elif c.kind == SurfaceKind.REGISTRATION_ADDED:  # `register_model("Foo")`: users type `Foo`
            word = registered_key(c.name)
        else:  # what users type as it is: `--max-batch`, `APP_TIMEOUT`, the path of `GET /v1/items`, `3.13`
            word = c.name.split()[-1] if c.name.split() else ""
        if len(word) >= 3 and not (word.startswith("__") and word.endswith("__")):
            names.add(word)
    return names


def _tail(name: str) -> str:
    """A name without its module path: `pkg.mod.Class.f(x)` → `f(x)`."""
    head, paren, args = name.partition("(")
    return head.rsplit(".", 1)[-1] + paren + args


def _tier(level: int) -> Importance:
    return TIERS[max(0, min(len(TIERS) - 1, level))]


def _plain_risk(facts: Facts) -> float:
    """The history formula's size and spread terms, for a commit ranked without history."""
    return round(risk_score([(f.path, f.changes) for f in facts.files], 1.0, 0, False), 3)
