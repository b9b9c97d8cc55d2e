"""What a commit title states by convention: leading tags ("[CI/Build][Bugfix]"), a conventional-commit
prefix ("fix(api)!:"), a revert and what it reverts. The heuristic's change type and summary, grounding's
check of the model's change type and the follow-up links all read titles through these, so they agree
on what a title says."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

TRAILER = re.compile(
    r"^\s*(Signed-off-by|Co-authored-by|Co-Authored-By|Reviewed-by|Acked-by|Tested-by|Reported-by|"
    r"Suggested-by|Helped-by|Cc|Change-Id|Reviewed-on|Approved-by)\s*:.*$",
    re.IGNORECASE | re.MULTILINE,
)  # sign-off style lines at a message's end (analysis.text strips them from what reports show)
TAG_MAX = 60  # characters in one tag: longer bracketed text is prose, not a tag

# A pull or merge request number: at most nine digits. A longer run of digits in a message ("#" and a pasted
# hash or 5,000 nines) names no request, and int() refuses more than 4,300 digits.
PR_DIGITS = r"\d{1,9}"
PR_SUFFIX = re.compile(rf"\s*\(#{PR_DIGITS}\)\s*$")
REVERT_TITLE = re.compile(r"^\s*(?:partial(?:ly)?\s+)?revert(?:s|ed|ing)?\b", re.IGNORECASE)
REVERTS_SHA = re.compile(r"This reverts commit ([0-9a-f]{7,40})", re.IGNORECASE)
REVERTS_SHA_LINE = re.compile(r"^\s*This reverts commit [0-9a-f]{7,40}\.?\s*$", re.IGNORECASE | re.MULTILINE)
# The words a title starts with when it takes an earlier change out: "Revert", "Partial revert of",
# "Rollback", "Roll back", "Back out".
REVERT_LEAD = re.compile(
    # "Automated rollback of commit <sha>" is how a mirrored monorepo's tooling titles a revert
    r"^\s*(?:automated\s+)?(?:partial(?:ly)?\s+)?"
    r"(?:revert(?:s|ed|ing)?|roll(?:s|ed|ing)?[\s-]?back|back(?:s|ed|ing)?[\s-]out)\b"
    r"(?:\s+of\b)?\s*:?\s*",
    re.IGNORECASE,
)
ELLIPSIS = ("…", "...")
# The first line of a pull request's merge commit in a merge-commit workflow, which names the pull request
# and its branch; the pull request's own title is the next line: GitHub's "Merge pull request #N from
# owner/branch", bors' "Auto merge of #N - owner:branch, r=reviewer".
_MERGE_LINE = re.compile(
    rf"^(?:Merge (?:pull request|PR) #({PR_DIGITS}) from \S+|Auto merge of #({PR_DIGITS}) - .*)$"
)
_CONVENTIONAL = re.compile(r"^(?P<type>[A-Za-z]+)(?:\((?P<scope>[^)\n]*)\))?!?:\s*\S")


@functools.cache
def _tags_pattern(longest: int) -> re.Pattern[str]:
    # a bracket directly followed by "(" is a Markdown link's text (`[Docs](https://…) …`), not a tag
    return re.compile(rf"^\s*((?:\[[^\[\]\n]{{1,{longest}}}\](?!\()\s*:?\s*)+)")


def leading_tags(title: str, longest: int = TAG_MAX) -> tuple[tuple[str, ...], str]:
    """The tags a title starts with, normalised ("[CI/Build] [Bug_Fix]:" → ("ci/build", "bugfix")),
    and the title after them; no tags and the whole title when it starts with none."""
    m = _tags_pattern(longest).match(title)
    if not m:
        return (), title
    return tuple(norm_tag(t) for t in re.findall(r"\[([^\[\]\n]+)\]", m.group(1))), title[m.end() :]


def norm_tag(tag: str) -> str:
    return re.sub(r"[\s_-]+", "", tag.lower())


def without_revert_tag(title: str, longest: int = TAG_MAX) -> str | None:
    """The title without the leading tag that says it reverts (`[Revert] [Core] X` → `[Core] X`; `[Roll back]`,
    `[Backed out]`), its other tags kept; None when no leading tag says so."""
    m = _tags_pattern(longest).match(title)
    for tag in re.finditer(r"\[([^\[\]\n]+)\]\s*:?\s*", m.group(1)) if m else ():
        if REVERT_LEAD.fullmatch(norm_tag(tag.group(1))):
            return title[: m.start(1) + tag.start()] + title[m.start(1) + tag.end() :]  # type: ignore[union-attr]
    return None


# What "Back out", "Roll back" or "Automated rollback of" take out when they name it: a quoted title, a pull
# request or a commit. Without one ("Rollback support for migrations") the words may name a feature.
_NAMED_TARGET = re.compile(
    r'^(?:"|#\d|(?:prs?|pull\s+requests?|commits?|changesets?)\b|[0-9a-f]{7,40}\b)', re.I
)


def is_revert_title(title: str) -> bool:
    """A title that says it reverts something, after any leading tags and gitmoji: `[Core] Revert "…"`,
    `⏪️ Revert "…"`, `[Revert] …`; `Back out "…"`, `Rollback PR-12`, `Backed out changeset <sha>`, `Automated
    rollback of commit <sha>`."""
    text = title_text(title)
    if REVERT_TITLE.match(text):
        return True
    lead = REVERT_LEAD.match(text)
    if lead and _NAMED_TARGET.match(text[lead.end() :]):
        return True
    return without_revert_tag(without_gitmoji(title)) is not None


_SHORTCODE = re.compile(r":[a-z0-9_+-]+:\s*")


def without_gitmoji(text: str) -> str:
    """`text` without the emoji (or :shortcode:) it starts with: "⏪️ Revert x" → "Revert x"."""
    text = text.lstrip()
    if m := _SHORTCODE.match(text):
        return text[m.end() :]
    end = 0
    while end < len(text) and (unicodedata.category(text[end]) == "So" or text[end] in "\ufe0f\u200d"):
        end += 1
    return text[end:].lstrip() if end else text


# A message that declares its change breaking, by a convention that means nothing else: a conventional
# commit's `type!:` or `BREAKING CHANGE:` footer, the 💥 (:boom:) gitmoji leading the title, a leading
# `[Breaking]` / `[Breaking Change]` tag or "Breaking:" prefix. Words in prose ("avoid breaking x", "not a
# breaking change") are no declaration.
_DECLARED_BREAKING_TITLE = re.compile(
    r"^\s*(?:(?P<bang>[A-Za-z]+(?:\([^)\n]*\))?!):|(?P<boom>💥|:boom:)|(?P<tag>\[\s*breaking(?:[ -]changes?)?\s*\])"
    r"|(?P<prefix>breaking(?:[ -]changes?)?\s*:))",
    re.IGNORECASE,
)
_DECLARED_BREAKING_FOOTER = re.compile(r"^BREAKING[ -]CHANGES?:\s*\S", re.MULTILINE)


def declared_breaking(message: str) -> str | None:
    """The marker by which a commit message declares its change breaking (`feat!:`, `💥`, `[breaking]`,
    `BREAKING CHANGE:`), else None."""
    title, _, rest = message.partition("\n")
    found = _DECLARED_BREAKING_TITLE.match(title)
    if found is not None:
        return " ".join(found.group(0).split()).rstrip(":") + (":" if found.group("bang") else "")
    if _DECLARED_BREAKING_FOOTER.search(rest):
        return "BREAKING CHANGE"
    return None


# A title that declares its change makes no functional change, by the convention of compiler projects (LLVM,
# MLIR and the projects built on them): an `[NFC]` / `[NFCI]` tag among the leading ones, an `NFC:` prefix,
# `(NFC)` / `[NFC]` ending the title or `NFC` ending its last sentence (". NFC", "; NFC"), before any pull
# request number; or the words "no functional change". Not the acronym elsewhere: "Use NFC normalization for
# identifiers" or "Normalize names to NFC" declare nothing.
_NFC = r"NFCI?"
_NO_FUNCTIONAL_CHANGE = re.compile(
    rf"(?:^\s*(?:\[[^\[\]\n]{{1,{TAG_MAX}}}\]\s*)*(?:\[\s*{_NFC}\s*\]|{_NFC}\s*:)"
    rf"|(?:\s(?:\(\s*{_NFC}\s*\)|\[\s*{_NFC}\s*\])|[.,;:-]\s*{_NFC})[\s.]*(?:\(#{PR_DIGITS}\)\s*)?$"
    r"|\bno\s+functional(?:ity)?\s+changes?\b(?!\s+(?:to|for|in|except)\b)"
    r"|\bno\s+(?:behaviou?r(?:al)?)\s+changes?\b(?!\s+(?:to|for|in|except)\b))",
    re.IGNORECASE,
)


def declares_no_functional_change(title: str) -> bool:
    """Whether the title declares that the change makes no functional change (`[NFC]`, `NFC:`, `… (NFC)`,
    `… NFC`, "no functional change"): the author's word that users see nothing new."""
    return _NO_FUNCTIONAL_CHANGE.search(title) is not None


def title_text(title: str) -> str:
    """A title after its leading tags and gitmoji: what it says it does."""
    return without_gitmoji(leading_tags(title)[1])


def conventional_prefix(text: str) -> tuple[str, str] | None:
    """The type and scope, lower-case, of a conventional-commit prefix: "fix(API)!: x" → ("fix", "api")."""
    m = _CONVENTIONAL.match(text)
    if not m:
        return None
    return m.group("type").lower(), (m.group("scope") or "").strip().lower()


# gitmoji (gitmoji.dev): the emoji a title starts with, or its :shortcode:, states the change's kind as a
# conventional-commit type does. Variation selectors are optional ("♻" and "♻️" alike). A revert is read from
# its words ("⏪️ Revert …", `title_text`), as every other revert is.
_GITMOJI_KINDS = {
    **dict.fromkeys(("✨", "🎉", ":sparkles:", ":tada:"), "feat"),
    **dict.fromkeys(("🐛", "🚑", "🩹", ":bug:", ":ambulance:", ":adhesive_bandage:"), "fix"),
    **dict.fromkeys(("⚡", ":zap:"), "perf"),
    **dict.fromkeys(
        ("📝", "🌐", "✏", "💡", ":memo:", ":globe_with_meridians:", ":pencil2:", ":bulb:"), "docs"
    ),
    **dict.fromkeys(("✅", "🧪", ":white_check_mark:", ":test_tube:"), "test"),
    **dict.fromkeys(("👷", "💚", ":construction_worker:", ":green_heart:"), "ci"),
    **dict.fromkeys(("🔨", "📦", "🔖", ":hammer:", ":package:", ":bookmark:"), "build"),
    **dict.fromkeys(("♻", "🎨", "🔥", "🚚", ":recycle:", ":art:", ":fire:", ":truck:"), "refactor"),
    **dict.fromkeys(("🔒", ":lock:"), "security"),
    **dict.fromkeys(("⬆", "⬇", "📌", "➕", "➖", ":arrow_up:", ":arrow_down:", ":pushpin:"), "deps"),
    **dict.fromkeys((":heavy_plus_sign:", ":heavy_minus_sign:"), "deps"),
    **dict.fromkeys(("🔧", ":wrench:"), "config"),
}


def gitmoji_kind(title: str) -> str | None:
    """The conventional-commit type a gitmoji states after any leading tags: "✨ Add x" → "feat",
    "[UI] :bug: y" → "fix"."""
    text = leading_tags(title)[1].lstrip()
    return next((kind for mark, kind in _GITMOJI_KINDS.items() if text.startswith(mark)), None)


@dataclass(frozen=True, slots=True)
class RevertedTitle:
    """What a revert title names once every wrapped revert is peeled off: `Revert "Revert "X (#1)" (#2)"`
    → text "X (#1)", depth 2 (an even depth restores it); `Revert #12` → text "#12". `cut` when GitHub
    shortened a quoted title (an ellipsis, or a quote never closed)."""

    text: str
    cut: bool = False
    depth: int = 1

    @property
    def restores(self) -> bool:
        return self.depth % 2 == 0


def revert_quote(title: str) -> tuple[str, bool] | None:
    """The quoted title right after a title's revert words, as written (its own "(#N)" included), and
    whether it was cut; None when the title is no revert or does not start its target with a quote.
    Leading tags and the title's own "(#N)" are ignored."""
    text = title_text(PR_SUFFIX.sub("", title.strip()))
    lead = REVERT_LEAD.match(text)
    return split_quote(text[lead.end() :]) if lead else None


def split_quote(text: str) -> tuple[str, bool] | None:
    """What a text starting with a quote quotes, and whether GitHub cut it (an ellipsis, or a quote
    never closed). The first quote pairs with the last one, so `"Revert "X""` keeps its inner quotes."""
    if not text.startswith('"'):
        return None
    inner = text[1:].rstrip()
    cut = not inner.endswith('"')
    inner = inner if cut else inner[:-1]
    if inner.endswith(ELLIPSIS):
        cut, inner = True, inner.removesuffix("…").removesuffix("...")
    return inner.strip(), cut


def reverted_title(title: str) -> RevertedTitle | None:
    """What a revert title takes out, peeled down to the innermost change; None for a title that is
    no revert (after its tags) or names nothing after its revert words."""
    found: RevertedTitle | None = None
    text, cut = title, False
    while True:
        quote = revert_quote(text)
        if quote is not None:
            text, quote_cut = quote
            cut = cut or quote_cut
        else:
            bare = title_text(PR_SUFFIX.sub("", text.strip()))
            lead = REVERT_LEAD.match(bare)
            if lead is None:
                return found
            text = bare[lead.end() :].strip()
        found = RevertedTitle(text.strip(), cut, (found.depth + 1) if found else 1)
        if quote is None or not text:
            return found if found.text else None


@functools.lru_cache(maxsize=1 << 14)
def message_title(message: str) -> tuple[str, str]:
    """A commit message's title and body: its first line and the rest, but for a pull request's merge
    commit (`_MERGE_LINE`) the pull request's title, from the line after, with "(#N)" as a squash merge
    has it ("Merge pull request #7 from ada/fix" + "Fix overflow" → "Fix overflow (#7)"), and the rest
    after that line. Cached: every day of a digest or an eval reads the same months of messages."""
    first, _, rest = message.strip().partition("\n")
    first = first.strip()
    merge = _MERGE_LINE.match(first)
    if merge is None:
        return first, rest
    line, _, after = rest.strip().partition("\n")
    line = line.strip()
    if not line or TRAILER.match(line) or _MERGE_LINE.match(line):
        return first, rest
    number = merge.group(1) or merge.group(2)
    return (line if PR_SUFFIX.search(line) else f"{line} (#{number})"), after


def merge_pr(title: str) -> int | None:
    """The pull request a merge commit's first line names, when the title is one (`message_title` keeps it
    when the body has no pull request title)."""
    merge = _MERGE_LINE.match(title)
    return int(merge.group(1) or merge.group(2)) if merge else None
