"""The change type of a commit, from its facts by fixed rules: a revert first, then a CVE / GHSA id
in the message, title tags (the most meaningful of several wins), a conventional-commit prefix or gitmoji,
security words, the paths when they are all of one kind, the release-notes entry the commit adds for itself,
the title's first word and keywords, weak tags ([Chore], [Model]), new source files; else `other`. The tag vocabularies and their precedence
are shared with grounding, which lets a stated type overrule the model's."""

from __future__ import annotations

import re
from collections.abc import Iterable

from analysis.heuristic.facts import ADVISORY, NON_RUNTIME, SECURITY_WORDS, Facts, commit_facts
from analysis.models import ChangeType, Commit
from analysis.paths import PathKind
from analysis.release_headings import Category
from analysis.titles import conventional_prefix, gitmoji_kind, leading_tags

# Most meaningful first: with several tags ("[ROCm][Bugfix]", "[CI/Build][BugFix]") the earliest wins.
PRECEDENCE = (
    ChangeType.REVERT,
    ChangeType.SECURITY,
    ChangeType.BUGFIX,
    ChangeType.PERFORMANCE,
    ChangeType.FEATURE,
    ChangeType.REFACTOR,
    ChangeType.CONFIG,
    ChangeType.DEPENDENCY,
    ChangeType.TESTS,
    ChangeType.DOCS,
    ChangeType.CI_BUILD,
    ChangeType.OTHER,  # stated by no tag: listed so that every type has a rank
)


def _words(table: dict[ChangeType, str]) -> dict[str, ChangeType]:
    """{type: "word word ..."} → {word: type}: keeps the vocabularies readable."""
    return {word: change for change, words in table.items() for word in words.split()}


STRONG_TAGS = _words(
    {
        ChangeType.REVERT: "revert reverts rollback",
        ChangeType.SECURITY: "security sec cve vuln vulnerability securityfix",
        ChangeType.BUGFIX: "bugfix bugfixes fix fixes bug hotfix bugfixing fixbug regression",
        ChangeType.PERFORMANCE: "perf performance optim optimization optimisation optimize speedup",
        ChangeType.FEATURE: "feature feat features newmodel newfeature",
        ChangeType.REFACTOR: "refactor refactoring cleanup codestyle style lint nfc nfci",
        ChangeType.CONFIG: "config configuration settings",
        ChangeType.DEPENDENCY: "dependency dependencies deps dep bump dependabot renovate",
        ChangeType.TESTS: "test tests testing unittest e2e",
        ChangeType.DOCS: "doc docs documentation readme typo typos",
        ChangeType.CI_BUILD: "ci build ci/build cicd release docker packaging",
    }
)
# Area-like tags that only hint at a type: used when nothing more specific is known.
_WEAK_TAGS: dict[str, ChangeType] = {
    "chore": ChangeType.REFACTOR,
    "model": ChangeType.FEATURE,
    "models": ChangeType.FEATURE,
}

CONVENTIONAL_TYPES = _words(
    {
        ChangeType.FEATURE: "feat feature",
        ChangeType.BUGFIX: "fix bugfix hotfix bug",
        ChangeType.PERFORMANCE: "perf",
        ChangeType.DOCS: "docs doc",
        ChangeType.TESTS: "test tests",
        ChangeType.CI_BUILD: "ci build",
        ChangeType.REFACTOR: "refactor style",
        ChangeType.REVERT: "revert",
        ChangeType.SECURITY: "security sec",
        ChangeType.DEPENDENCY: "deps dep",
        ChangeType.CONFIG: "config",
    }
)
_DEP_SCOPES = frozenset({"deps", "dep", "deps-dev", "dependencies", "dependency"})

_FIRST_WORD_TYPES = _words(
    {
        ChangeType.BUGFIX: "fix fixes fixed fixing bugfix hotfix resolve resolves correct corrects respect respects "
        "honor honors honour honours",
        ChangeType.PERFORMANCE: "optimize optimise optimized optimizes speed speedup accelerate tune tuning",
        ChangeType.FEATURE: "add adds added adding support supports introduce introduces implement implements "
        "enable enables allow allows initial new create",
        ChangeType.REFACTOR: "refactor rename renames cleanup clean simplify simplifies remove removes delete "
        "deletes drop drops move moves reorganize restructure replace replaces consolidate deduplicate dedupe "
        "refine tidy extract unify migrate",
        ChangeType.DOCS: "document documents docs doc typo typos",
    }
)
_DEP_WORDS = frozenset(["bump", "bumps", "upgrade", "upgrades", "pin", "pins", "unpin", "downgrade"])
_DOCS_WORDS = re.compile(r"\b(?:documentation|docs?|docstrings?|readme)\b", re.IGNORECASE)
# "Update X to 2.9.0" is a bump when it names a version ("Update the docs" is not)
_UPDATE_WORDS = frozenset(["update", "updates", "updated"])
_VERSION = re.compile(r"\bv?\d+\.\d+")
_KEYWORD_TYPES: tuple[tuple[re.Pattern[str], ChangeType], ...] = (
    (
        re.compile(r"\b(bug|crash\w*|regression|broken|race condition|incorrect|wrong)\b", re.I),
        ChangeType.BUGFIX,
    ),
    (
        re.compile(
            r"\b(performance|throughput|latency|faster|speed ?up|optimi[sz]\w*|memory access)\b", re.I
        ),
        ChangeType.PERFORMANCE,
    ),
    (re.compile(r"\b(refactor\w*|simplif\w*|clean ?ups?|dedup\w*|renam\w*)\b", re.I), ChangeType.REFACTOR),
)


def classify_change(commit: Commit) -> ChangeType:
    """The change type: revert, then a CVE / advisory id, title tags, a conventional-commit prefix,
    security words, what the paths say when they are all of one kind, words in the title, weak
    tags ([Chore], [Model]), new source files; `other` when nothing applies."""
    return classify(commit_facts(commit))


def classify(facts: Facts) -> ChangeType:
    steps = (
        type_from_revert,
        _type_from_advisory,  # a CVE fix is a security fix even when tagged [Bugfix]
        _type_from_tags,
        _type_from_no_functional_change,
        _type_from_prefix,
        _type_from_security_words,
        _type_from_paths,
        _type_from_entries,
        _type_from_words,
        _type_from_weak_tags,
        _type_from_new_files,
    )
    for step in steps:
        found = step(facts)
        if found is not None:
            return found
    return ChangeType.OTHER


def firm_type(facts: Facts) -> ChangeType | None:
    """The type the facts settle whatever a model reads into the diff: a revert; what the paths say when they are
    all of one kind (docs, tests, CI, dependencies, configuration, or no runtime code at all); a title whose
    first word is a fix, or a bump of the manifests it changes. None when the change is open to reading."""
    found = type_from_revert(facts) or _type_from_paths(facts)
    if found is not None:
        return found
    first = re.match(r"[a-z]+", facts.subject.lower())
    if first and _FIRST_WORD_TYPES.get(first.group()) == ChangeType.BUGFIX:
        return ChangeType.BUGFIX
    found = _type_from_words(facts)
    return found if found == ChangeType.DEPENDENCY else None


def declared_type(facts: Facts) -> ChangeType | None:
    """The kind the author declares in the title (a tag such as [Bugfix], a conventional prefix, a gitmoji);
    None when the title declares none."""
    return _type_from_tags(facts) or _type_from_no_functional_change(facts) or _type_from_prefix(facts)


def type_from_revert(facts: Facts) -> ChangeType | None:
    return ChangeType.REVERT if facts.reverts else None


def tag_types(tags: Iterable[str], table: dict[str, ChangeType]) -> list[ChangeType]:
    """The types normalised tags name in `table`, in tag order."""
    found: list[ChangeType] = []
    for tag in tags:
        if tag in table:
            found.append(table[tag])
            continue
        # "[CI/Build]" is in the table; "[Doc/Test]" or "[Perf+Fix]" are read part by part.
        found.extend(table[p] for p in re.split(r"[/+,&|]", tag) if p in table)
    return found


def most_meaningful(types: list[ChangeType]) -> ChangeType | None:
    """The first of `types` in PRECEDENCE; None for none."""
    ranked = [t for t in PRECEDENCE if t in types]
    return ranked[0] if ranked else None


def _type_from_tags(facts: Facts) -> ChangeType | None:
    return most_meaningful(tag_types(facts.tags, STRONG_TAGS))


def _type_from_no_functional_change(facts: Facts) -> ChangeType | None:
    # "[X86] Fix a warning (NFC)": whatever its first word, a change its author says changes nothing users see
    return ChangeType.REFACTOR if facts.no_functional_change else None


def _type_from_advisory(facts: Facts) -> ChangeType | None:
    return ChangeType.SECURITY if ADVISORY.search(facts.commit.message) else None


def _type_from_prefix(facts: Facts) -> ChangeType | None:
    # "✨ Add x", ":bug: y": the same statement as a conventional prefix, in another convention
    kind = gitmoji_kind(leading_tags(facts.commit.title)[1])
    if kind is not None:
        return CONVENTIONAL_TYPES.get(kind)
    prefix = conventional_prefix(facts.subject)
    if prefix is None:
        return None
    kind, scope = prefix
    if scope in _DEP_SCOPES:
        return ChangeType.DEPENDENCY
    if kind == "chore":
        return None  # chore alone says little: let the paths and words decide
    return CONVENTIONAL_TYPES.get(kind)


def _type_from_security_words(facts: Facts) -> ChangeType | None:
    return ChangeType.SECURITY if SECURITY_WORDS.search(facts.subject) else None


def _type_from_paths(facts: Facts) -> ChangeType | None:
    kinds = {k for _, k in facts.meaningful()} | (
        facts.kinds_present() & {PathKind.LOCKFILE, PathKind.VENDORED}
    )
    if not kinds:
        return None
    groups = (
        ({PathKind.DOCS, PathKind.EXAMPLE}, ChangeType.DOCS),
        ({PathKind.TESTS, PathKind.BENCHMARK}, ChangeType.TESTS),
        ({PathKind.CI, PathKind.BUILD, PathKind.TOOLING}, ChangeType.CI_BUILD),
        ({PathKind.DEPENDENCY_MANIFEST, PathKind.LOCKFILE, PathKind.VENDORED}, ChangeType.DEPENDENCY),
        ({PathKind.CONFIG}, ChangeType.CONFIG),
    )
    for group, change in groups:
        if kinds <= group:
            return change
    if kinds <= NON_RUNTIME:
        # Mixed docs / tests / CI: the kind with the most changed lines names it.
        weights = {
            ChangeType.TESTS: facts.lines_of(PathKind.TESTS, PathKind.BENCHMARK),
            ChangeType.DOCS: facts.lines_of(PathKind.DOCS, PathKind.EXAMPLE),
            ChangeType.CI_BUILD: facts.lines_of(PathKind.CI, PathKind.TOOLING),
        }
        return max(weights, key=lambda t: weights[t])
    return None


# The entry categories that name one change type; a breaking, changed or deprecated entry may be a feature, a fix
# or a refactor, and docs or internal entries beside code say little of the code: those leave the type to the words.
_ENTRY_TYPES = {
    Category.FEATURE: ChangeType.FEATURE,
    Category.FIX: ChangeType.BUGFIX,
    Category.PERFORMANCE: ChangeType.PERFORMANCE,
    Category.DEPENDENCIES: ChangeType.DEPENDENCY,
}


def _type_from_entries(facts: Facts) -> ChangeType | None:
    """The type the commit's own release-notes entry files it under (an "Added" item, a `1234.bugfix.md`
    fragment): its author's word, stronger than the title's first word ("Update x" that fixes a crash). With
    entries of several types, the most meaningful."""
    return most_meaningful([t for e in facts.entries if (t := _ENTRY_TYPES.get(e.category)) is not None])


def _type_from_words(facts: Facts) -> ChangeType | None:
    words = re.findall(r"[a-z]+", facts.subject.lower())
    if not words:
        return None
    bumps = words[0] in _DEP_WORDS or (words[0] in _UPDATE_WORDS and _VERSION.search(facts.subject))
    if bumps and facts.files_of(PathKind.DEPENDENCY_MANIFEST, PathKind.LOCKFILE):
        return ChangeType.DEPENDENCY
    if words[0] in _FIRST_WORD_TYPES:
        return _FIRST_WORD_TYPES[words[0]]
    for pattern, change in _KEYWORD_TYPES:
        if pattern.search(facts.subject):
            return change
    code = [f for f, k in facts.meaningful() if k == PathKind.SOURCE]
    if _DOCS_WORDS.search(facts.subject) and all(f.path in facts.prose for f in code):
        return ChangeType.DOCS  # "Rewrite the fields documentation": its code files change docstrings only
    return None


def _type_from_weak_tags(facts: Facts) -> ChangeType | None:
    return most_meaningful(tag_types(facts.tags, _WEAK_TAGS))


def _type_from_new_files(facts: Facts) -> ChangeType | None:
    added_source = any(f.status == "added" and k == PathKind.SOURCE for f, k in facts.meaningful())
    return ChangeType.FEATURE if added_source else None
