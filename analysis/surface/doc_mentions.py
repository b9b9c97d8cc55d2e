"""Whether a repository's documentation mentions a name a commit removes or renames: the test that tells a
user-facing name from a public-looking one only the package's own code calls.

A large application names everything without an underscore; its users meet only what its docs show them
(`LLM`, `SamplingParams`), not the helpers its modules pass around. So a removal or rename of a code name
(a function, class, method or constant, its parameters, a module) is checked against the words of the
docs as they were before the commit: the docs folders' text files and the READMEs, release notes left out
(they list internal refactors by name). A name counts as documented when the docs mention it, the class
it belongs to, or its module's dotted path (an API page generated from `::: pkg.mod` or
`.. automodule:: pkg.mod`). A name of a package's top-level module is what `import pkg` gives: always
documented. Only where the docs say enough to be a reference (MIN_DOC_CHARS) is a name missing from them
taken as internal; elsewhere nothing is marked (None: not known).

Configuration fields, command-line options, environment variables, routes and supported versions are
what users type: they are never checked.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from analysis.models import CODE_BREAKING_KINDS, SurfaceChange, SurfaceKind, module_depth
from analysis.paths import PathKind, classify_path
from analysis.surface.release_entries import FRAGMENT_DIRS, is_release_notes_file

# Docs that read as a reference: below this many characters (a README alone), a name's absence says little.
MIN_DOC_CHARS = 50_000
_DOC_SUFFIXES = (".md", ".mdx", ".rst", ".txt", ".adoc")
# Translated docs (`docs/zh/…`, `docs/pt-br/…`, `locale/`) name the same code as the original, many times over: a
# web framework's docs in fifteen languages would be read fifteen times for nothing.
_TRANSLATIONS = frozenset(
    {"i18n", "l10n", "locale", "locales", "translations"}
    | {"zh", "zh-cn", "zh-tw", "zh-hans", "zh-hant", "ja", "ko", "es", "fr", "de", "pt", "pt-br", "ru", "it"}
    | {"tr", "uk", "pl", "fa", "vi", "id", "ar", "he", "hi", "nl", "sv", "cs", "hu", "el", "th", "bn", "az"}
    | {"em", "yo", "es-es", "ja-jp", "ko-kr", "ru-ru", "fr-fr", "de-de"}
)
CHECKED_KINDS = CODE_BREAKING_KINDS
_MODULE_KINDS = frozenset({SurfaceKind.MODULE_REMOVED, SurfaceKind.MODULE_RENAMED})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def is_doc_text(path: str) -> bool:
    """A documentation text file: docs folders' Markdown, reST and text files and READMEs, not release notes
    (`CHANGELOG.md`, `docs/ReleaseNotes.rst`, `docs/releases/5.1.txt`: they name internal refactors as often as
    what users call), nor the fragments a release-notes tool collects (`changes/123.feature.md`, `newsfragments/`),
    not a translation."""
    lowered = path.lower()
    if not lowered.endswith(_DOC_SUFFIXES):  # most paths of a tree: decided before anything else is built
        return False
    folders = lowered.split("/")[:-1]
    if is_release_notes_file(lowered):
        return False
    if not FRAGMENT_DIRS.isdisjoint(f.removeprefix("_") for f in folders) or any(
        f.replace("_", "-") in _TRANSLATIONS for f in folders
    ):
        return False
    return classify_path(path) == PathKind.DOCS


def mentions(text: str) -> frozenset[str]:
    """The identifiers and dotted names a documentation text mentions (`pkg.mod.Class` gives the dotted
    name and each of its words)."""
    found: set[str] = set()
    for dotted in set(_WORD.findall(text)):
        found.add(dotted)
        if "." in dotted:
            found.update(dotted.split("."))
    return frozenset(found)


@dataclasses.dataclass(frozen=True, slots=True)
class DocWords:
    """What the docs of one revision mention, and how much they say."""

    words: frozenset[str]
    chars: int

    @property
    def is_reference(self) -> bool:
        return self.chars >= MIN_DOC_CHARS


def doc_words(parts: Iterable[tuple[frozenset[str], int]]) -> DocWords:
    """The docs of a revision from each file's mentions and length."""
    words: set[str] = set()
    chars = 0
    for mentioned, length in parts:
        words |= mentioned
        chars += length
    return DocWords(frozenset(words), chars)


def needs_docs(changes: Sequence[SurfaceChange]) -> bool:
    """Whether any change is one the docs decide: a code name removed or renamed without an alias."""
    return any(c.kind in CHECKED_KINDS and not c.aliased for c in changes)


def marked(changes: Sequence[SurfaceChange], docs: DocWords) -> tuple[SurfaceChange, ...]:
    """The changes with `documented` said for each code name removed or renamed without an alias (the docs
    a reference: else as they were)."""
    if not docs.is_reference:
        return tuple(changes)
    return tuple(
        dataclasses.replace(c, documented=is_documented(c, docs.words))
        if c.kind in CHECKED_KINDS and not c.aliased
        else c
        for c in changes
    )


def is_documented(change: SurfaceChange, words: frozenset[str]) -> bool:
    """Whether the docs' words name the change's name (or, for a rename, its old one), its class, or its
    module's dotted path."""
    names = [change.name] + ([change.old] if change.old and change.kind in _RENAMES else [])
    return any(_named(name, change, words) for name in names)


_RENAMES = frozenset({SurfaceKind.RENAMED, SurfaceKind.MODULE_RENAMED})


def _named(name: str, change: SurfaceChange, words: frozenset[str]) -> bool:
    head = name.split("(", 1)[0]
    segments = [s for s in head.split(".") if s]
    if not segments:
        return True  # nothing to look for: not ours to call internal
    if change.kind in _MODULE_KINDS:
        return head in words  # a module's last word ("utils") is everywhere: its dotted path only
    depth = module_depth(name, change.path)
    if depth == 1:
        return True  # the top-level module's names: what `import pkg` gives
    if depth and depth >= 2 and ".".join(segments[:depth]) in words:
        return True  # an API page of its module
    # Without a module path (`ns::Type::method`, a name of another language): the name and what holds it,
    # not the namespace, whose word the docs use everywhere.
    own = segments[depth:] if depth else _IDENTIFIER.findall(head)[-2:]
    # A dunder (`__init__` of `Class.__init__(x)`) is every class's: its class decides.
    return any(s in words for s in own if not (s.startswith("__") and s.endswith("__")))
