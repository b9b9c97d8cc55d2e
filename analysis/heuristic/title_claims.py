"""What a commit title claims, by the conventions for saying it: a fix of a failure users see, a default
changed, a new capability. Claims only: the signals (signals.py) weigh them against the code that changed.
"""

from __future__ import annotations

import re

from analysis.release_headings import Category
from analysis.release_verbs import verb_category
from analysis.titles import norm_tag, without_gitmoji

# A fix whose title names a failure users see: a crash, a hang, lost or wrong results, a slowdown.
FIXES = re.compile(r"\b(?:fix(?:es|ed|ing)?|bug\s*fix|hot\s*fix|resolve[sd]?)\b", re.IGNORECASE)
USER_IMPACT = re.compile(
    r"\b(?:crash(?:es|ed|ing)?|hangs?|hanging|deadlocks?|data\s+(?:loss|corruption)|corrupt(?:s|ed|ion)?"
    r"|memory\s+leaks?|leaks?\s+memory|oom|out\s+of\s+memory|segfaults?|segmentation\s+fault"
    r"|degrad(?:es|ed|ing|ation)|(?:throughput|latency|performance)\s+(?:drop|regression|loss)"
    r"|race\s+condition|(?:wrong|incorrect|garbled|corrupted)(?:\s+[\w-]+){0,3}?\s+"
    r"(?:results?|outputs?|answers?|values?|logits|tokens|code\s*gen)|garbled|gibberish|miscompil\w*"
    r"|out[\s-]+of[\s-]+bounds?|illegal\s+(?:memory\s+)?(?:access|address)|use[\s-]+after[\s-]+free"
    r"|NaNs?|accuracy\s+(?:drop|regression|loss|issues?|problems?)|RuntimeError|panics?)\b",
    re.IGNORECASE,
)

# A title that says what users get by default changes ("Disable X by default", "Set default backend to
# Y", "Prefer A as default over B"): a default chosen in code (a backend's priority, a platform check) is
# often no literal the patch rules can read. A claim, so it counts only where code users run changed.
TITLE_DEFAULT = re.compile(
    r"\b(?:by[ -]default|as\s+(?:the\s+)?default|defaults?\s+to|new\s+defaults?"
    r"|(?:change[sd]?|switch(?:es|ed)?|makes?|sets?|flip(?:s|ped)?|update[sd]?|enable[sd]?|disable[sd]?)"
    r"\s+(?:the\s+)?defaults?|default\s+(?:value|backend|behaviou?r|mode|setting)s?"
    # "Make strict matching the default (#1)", "make X the default for Y" (not "make sure the default ...")
    r"|\bmake[s]?\s+(?!the\b|sure\b|it\b)[\w`.:-]+(?:\s+[\w`.:-]+){0,4}?\s+the\s+default(?:\s+\w+)?"
    r"(?=\s*(?:$|[(\[,;:.]|(?:for|in|on|when|everywhere)\b)))\b",
    re.IGNORECASE,
)

# A title that declares a new capability by a convention for it: the ✨ (:sparkles:) gitmoji, a conventional
# `feat:` / `feat(x):`, a leading `[Feature]` / `[Feat]` / `[New Feature]` tag, or "add(s) support for".
TITLE_FEATURE = re.compile(
    r"^\s*(?:✨|:sparkles:|feat(?:\([^)\n]*\))?:|\[\s*(?:feat|feature|new feature)\s*\])"
    r"|\badd(?:s|ed)?\s+support\s+(?:for|of)\b",
    re.IGNORECASE,
)

# A title that declares a speed-up by a convention for it: the ⚡ (:zap:) gitmoji, a conventional `perf:` /
# `perf(x):`, a leading `[Perf]` / `[Performance]` tag. Release notes give speed-ups a section of their own: what
# users get changes (a commit's own notes entry under it weighs the same, signals._NOTED_ENTRIES).
TITLE_PERF = re.compile(
    r"^\s*(?:⚡|:zap:|perf(?:\([^)\n]*\))?:|\[\s*(?:perf|performance)\s*\])", re.IGNORECASE
)

# A title that says the change now refuses or warns: "Raise error if …", "raise a ValueError for …", "Warn when …",
# "Emit a deprecation warning …", "Deprecate …". Users should know, whether or not the raise sits in a public
# function the surface facts compare (a version check at import, a private helper). "Raise the limit" is no
# error: an error or exception must be named within two words. Read on the title without its tags, gitmoji and
# conventional-commit type. A claim, so it counts only where code users run changed.
TITLE_NOTICE = re.compile(
    r"^\s*(?:\w+(?:\([^)\n]*\))?!?:\s*)?(?P<claim>"
    r"raise[sd]?\s+(?:an?\s+|the\s+)?(?:[\w`.-]+\s+){0,2}?`?\w*(?:error|exception)s?\b"
    r"|warn(?:s|ed)?\b"
    r"|(?:emit|log|show|print|issue)s?\s+(?:an?\s+)?(?:[\w-]+\s+)?warnings?\b"
    r"|deprecate[sd]?\b)",
    re.IGNORECASE,
)


# A title whose first word (after its tags and gitmoji) says the change reorganises code: "Refactor …",
# "Simplify …", "Clean up …", "Tidy …", "Deduplicate …", "Restructure …", "Reorganize …", "Consolidate …",
# "Unify …", "Move …", "Rename …", "Split …", "Extract …", "Pull out …", "Factor out …", "Break out …". Not a
# removal, a drop or a migration: those may take something from users.
RESTRUCTURING = re.compile(
    r"^\s*(?P<word>refactor(?:s|ed|ing)?|simplif(?:y|ies|ied)|clean(?:s|ed)?(?:[ -]?up)|cleanup|tid(?:y|ies|ied)"
    r"|dedup\w*|restructur\w*|reorgani[sz]\w*|consolidat\w*|unif(?:y|ies|ied)|mov(?:e|es|ed)|renam(?:e|es|ed)"
    r"|split(?:s|ting)?|extract(?:s|ed|ing)?|(?:pull|factor|break)(?:s|ed|ing)?[ -]out)\b",
    re.IGNORECASE,
)
# What a title declared a refactor may still start with that takes something away ("[Refactor] Remove …").
TAKES_AWAY = re.compile(r"^\s*(?:remov|delet|drop|deprecat|disabl)\w*\b", re.IGNORECASE)
# A title that calls what it restructures internal ("Refactor internal `check()`", "Rename internal helper",
# "refactor internals in preparation for …", "Make X private"): the author's word that the code names it touches
# are not for users.
INTERNAL_CODE = re.compile(r"\b(?:internals?|private)\b", re.IGNORECASE)


# A title whose leading verb declares a capability ("Add X", "Support X", "Allow X", "Introduce X", "Implement X",
# "Expose X") is how release notes say a feature, and how their items read when titles are their words. Read by
# release_verbs' reading of a notes item (one reader for both), after the title's tags, gitmoji and conventional
# type; only where those state no other type. What is added may be no capability: tests, docs (release_verbs
# reads those), or what every project's commits add for their own sake or to fix (something missing, an import,
# logging, comments, type hints, CI).
_NOT_A_CAPABILITY = re.compile(
    r"^\w+\s+(?:(?:a|an|the|some|more|extra|additional|basic|better|proper|few|debug)\s+)*"
    r"(?:missing|imports?|logs?|logging|log\s+(?:lines?|messages?)|comments?|type\s+(?:hints?|annotations?)|annotations?"
    r"|typing|typehints?|ci|pre-commit|lint\w*|mypy|notes?|changelog|benchmarks?|codeowners|todos?|asserts?"
    r"|assertions?|debug\w*|print\w*)\b",
    re.IGNORECASE,
)
# A title with tags says its type by them ("[Misc] Add …", "[ROCm] Support …", "[Bugfix] Add a missing check"):
# its verb then says what the change does within that type or area. Only a feature's tag leaves the verb to
# declare one. On vllm's history the verb read under any tag flagged 44 more commits of Sep–Dec, none followed up.
_FEATURE_TAGS = frozenset({"feat", "feature", "features", "newfeature", "newmodel", "model", "models"})
_CONVENTIONAL_TYPE = re.compile(r"^\s*(?P<type>[A-Za-z]+)(?:\([^)\n]*\))?!?:\s*")


def declared_by_verb(subject: str, tags: tuple[str, ...], category: Category) -> str | None:
    """The leading verb by which a title's words (`subject`: after its tags) declare a change of `category`
    as a release-notes item would ("Support const-only smart pointers" → "support" for FEATURE), else None.
    None where a tag other than a feature's or a conventional type other than `feat` stands before it, or what
    the verb adds is no capability (`_NOT_A_CAPABILITY`)."""
    if any(norm_tag(tag) not in _FEATURE_TAGS for tag in tags):
        return None
    text = without_gitmoji(subject)
    if (found := _CONVENTIONAL_TYPE.match(text)) is not None:
        if found["type"].lower() not in ("feat", "feature"):
            return None
        text = text[found.end() :]
    text = text.strip().strip("`*_ ")
    if verb_category(text) != category or _NOT_A_CAPABILITY.match(text):
        return None
    return text.split(maxsplit=1)[0].lower()
