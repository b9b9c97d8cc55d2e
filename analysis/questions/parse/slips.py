"""Questions typed in a hurry: a word one slip away from a keyword (two letters swapped, one left out, one
doubled) is read as that keyword."""

from __future__ import annotations

import re
from collections.abc import Iterable

from analysis.questions.parse.keywords import wordset

# Typed in a hurry: "whcih comits are riskeist?". A word that is one slip (two letters swapped, one left
# out, one doubled) from a keyword of the patterns above is read as that keyword. A different letter is
# not a slip ("rises" stays "rises"), and words of the vocabulary are never changed.
_VOCAB = wordset(
    "which what commits commit riskiest risky risks risk reverted revert reverts breaking changes change "
    "changed defaults default options option today today's many authors author wrote files tests test "
    "highest important medium deprecated parameters environment variables landed summary summarize "
    "explain recommend should anything yesterday the file"
)


def _slips_of(vocab: Iterable[str]) -> dict[str, str]:
    """Each slip of a question word (one letter left out of a long word, one doubled, two swapped) → the
    word; never a word of the vocabulary itself. In sorted order: a slip of two words is the same one's in
    every process (a set's order changes with the string hash seed)."""
    slips: dict[str, str] = {}
    for word in sorted(vocab):
        for i in range(len(word)):
            if len(word) >= 5:  # "comits", "reverte": one letter left out of a long word
                slips.setdefault(word[:i] + word[i + 1 :], word)
            slips.setdefault(word[:i] + word[i] + word[i:], word)  # "commmits": one doubled
            if i + 1 < len(word) and word[i] != word[i + 1]:  # "whcih", "teh": two swapped
                slips.setdefault(word[:i] + word[i + 1] + word[i] + word[i + 2 :], word)
    for word in vocab:
        slips.pop(word, None)
    return slips


_SLIPS = _slips_of(_VOCAB)


def fix_slips(low: str) -> str:
    return re.sub(r"(?<![\w./-])[a-z']{3,}(?![\w./-])", lambda m: _SLIPS.get(m.group(0), m.group(0)), low)
