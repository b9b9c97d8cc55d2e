"""Which removed or renamed code names the docs mention (analysis/surface/doc_mentions.py)."""

from __future__ import annotations

import pytest

from analysis.models import SurfaceChange, SurfaceKind
from analysis.surface.doc_mentions import (
    MIN_DOC_CHARS,
    DocWords,
    doc_words,
    is_doc_text,
    is_documented,
    marked,
    mentions,
    needs_docs,
)

K = SurfaceKind


@pytest.mark.parametrize(
    ("path", "docs"),
    [
        ("docs/api/engine.md", True),
        ("docs/source/usage.rst", True),
        ("README.md", True),
        ("kit/README.md", True),
        ("docs/index.mdx", True),
        ("CHANGELOG.md", False),  # release notes name internal refactors too
        ("docs/release-notes.md", False),
        ("changes/1234.feature.md", False),  # a release-notes fragment
        ("docs/changelog.d/1234.bugfix.rst", False),
        ("docs/en/docs/tutorial/first-steps.md", True),
        ("docs/zh/docs/tutorial/first-steps.md", False),  # a translation names the same code again
        ("docs/pt_BR/index.rst", False),
        ("docs/locale/ja/LC_MESSAGES/index.po", False),
        ("HISTORY.rst", False),
        ("docs/conf.py", False),
        ("tests/README.md", False),
        ("examples/README.md", False),
        ("kit/engine.py", False),
    ],
)
def test_which_files_are_the_docs(path, docs):
    assert is_doc_text(path) is docs


def test_mentions_are_identifiers_and_dotted_names():
    found = mentions("Call `kit.engine.load_model(path)` or\n::: kit.sampling\n.. autoclass:: kit.Sampler")
    assert {"kit.engine.load_model", "load_model", "engine", "kit.sampling", "Sampler", "path"} <= found


WORDS = frozenset(mentions("`LLM` and `kit.sampling` and `load_model`, see `Engine` and __init__ in `kit`"))


@pytest.mark.parametrize(
    ("change", "documented"),
    [
        (SurfaceChange(K.REMOVED, "kit.engine.core.load_model", "kit/engine/core.py"), True),
        (SurfaceChange(K.REMOVED, "kit.engine.core.pad_batch", "kit/engine/core.py"), False),
        # a member of a class the docs show
        (SurfaceChange(K.REMOVED, "kit.entry.LLM.set_tokenizer", "kit/entry.py"), True),
        (SurfaceChange(K.PARAM_REMOVED, "kit.entry.LLM.__init__(seed)", "kit/entry.py"), True),
        # a dunder is every class's: only its class decides
        (SurfaceChange(K.PARAM_REMOVED, "kit.worker.Runner.__init__(seed)", "kit/worker.py"), False),
        # a module whose API page the docs generate
        (SurfaceChange(K.REMOVED, "kit.sampling.top_k", "kit/sampling.py"), True),
        # the top-level module's names are what `import kit` gives
        (SurfaceChange(K.REMOVED, "kit.helper", "kit/__init__.py"), True),
        # a rename is documented by either name
        (SurfaceChange(K.RENAMED, "kit.engine.load", "kit/engine.py", old="kit.engine.load_model"), True),
        # a module by its dotted path only ("engine" alone is everywhere)
        (SurfaceChange(K.MODULE_REMOVED, "kit.engine", "kit/engine.py"), False),
        (SurfaceChange(K.MODULE_REMOVED, "kit.sampling", "kit/sampling.py"), True),
        # a name that is no module path (another language's)
        (SurfaceChange(K.REMOVED, "Engine::run", "src/engine.rs"), True),
        (SurfaceChange(K.REMOVED, "Worker::run", "src/worker.rs"), False),
        # a namespace the docs name everywhere documents nothing by itself
        (SurfaceChange(K.REMOVED, "kit::detail::Worker::run", "src/worker.cpp"), False),
        (SurfaceChange(K.REMOVED, "kit::Engine::start", "src/engine.cpp"), True),
    ],
)
def test_a_name_is_documented_by_itself_its_class_or_its_modules_page(change, documented):
    assert is_documented(change, WORDS) is documented


def test_only_code_names_removed_without_an_alias_are_marked_and_only_by_reference_docs():
    removed = SurfaceChange(K.REMOVED, "kit.engine.core.pad_batch", "kit/engine/core.py")
    aliased = SurfaceChange(K.RENAMED, "kit.engine.core.pad", "kit/engine/core.py", old="x", aliased=True)
    option = SurfaceChange(K.OPTION_REMOVED, "--pad", "kit/cli.py")
    field = SurfaceChange(K.FIELD_REMOVED, "kit.config.Config.pad", "kit/config.py")
    added = SurfaceChange(K.ADDED, "kit.engine.core.run", "kit/engine/core.py")
    changes = (removed, aliased, option, field, added)
    assert needs_docs(changes) and not needs_docs((aliased, option, field, added))
    reference = doc_words([(WORDS, MIN_DOC_CHARS)])
    assert [c.documented for c in marked(changes, reference)] == [False, None, None, None, None]
    # a README alone says too little for a name's absence to mean anything
    assert marked(changes, DocWords(WORDS, MIN_DOC_CHARS - 1)) == changes
