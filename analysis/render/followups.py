"""What readers are told about follow-ups: a day's "Follow-ups" entries, the banner added to an original's
card, and the notes on the follow-up's and the original's analyses (issue: the radar).

Pure: the entries are built by bot/digest/radar.py from the store; every renderer takes its words from here, so
Markdown, JSON, Slack and Discord say the same thing in the same two languages.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo

from analysis.history.followups import FollowUpLink
from analysis.labels import check_lang, importance_word
from analysis.models import DayFollowUp, FollowUpKind, Importance

_WORDS = {
    "zh": {
        "section": "🔁 后续修正",
        "banner_revert": "⚠️ 已于 {day} 被 {ref} 回滚",
        "banner_fix": "🔧 已于 {day} 由 {ref} 修复跟进",
        "verb_revert": "回滚了",
        "verb_fix": "修复跟进了",
        "rank": "，当时评为{rank}",
        "unranked": "，当时未评级",
        "note_follow_up_revert": "本提交回滚了 {original}（{ref}，{day}{rank}）",
        "note_follow_up_fix": "本提交修复跟进了 {original}（{ref}，{day}{rank}）",
        "note_original_revert": "该提交已于 {day} 被 {ref}「{title}」回滚",
        "note_original_fix": "该提交已于 {day} 由 {ref}「{title}」修复跟进",
        "reply": "{banner}：{title}",
        "report": "报告",
    },
    "en": {
        "section": "🔁 Follow-ups",
        "banner_revert": "⚠️ Reverted by {ref} on {day}",
        "banner_fix": "🔧 Fixed forward by {ref} on {day}",
        "verb_revert": "reverts",
        "verb_fix": "fixes forward",
        "rank": "; we ranked it {rank}",
        "unranked": "; not ranked by us",
        "note_follow_up_revert": "This commit reverts {original} ({ref}, {day}{rank})",
        "note_follow_up_fix": "This commit fixes forward {original} ({ref}, {day}{rank})",
        "note_original_revert": "Reverted on {day} by {ref} “{title}”",
        "note_original_fix": "Fixed forward on {day} by {ref} “{title}”",
        "reply": "{banner}: {title}",
        "report": "report",
    },
}


def word(lang: str, key: str, **fmt: object) -> str:
    text = _WORDS[check_lang(lang)][key]
    return text.format(**fmt) if fmt else text


def banner(lang: str, kind: FollowUpKind, ref: str, landed: datetime, tz: tzinfo | None = None) -> str:
    """The one line put on top of an original's card: "⚠️ Reverted by #N on 2026-01-07"."""
    key = "banner_revert" if kind == FollowUpKind.REVERT else "banner_fix"
    return word(lang, key, ref=ref, day=_day(landed, tz))


def rank_text(lang: str, rank: Importance | None) -> str:
    return word(lang, "rank", rank=importance_word(lang, rank)) if rank else word(lang, "unranked")


def follow_up_note(lang: str, entry: DayFollowUp, tz: tzinfo | None = None) -> str:
    """The note on the follow-up's own analysis: what it follows up, when that landed, how we ranked it."""
    key = "note_follow_up_revert" if entry.kind == FollowUpKind.REVERT else "note_follow_up_fix"
    return word(
        lang,
        key,
        original=_quoted(lang, entry.original_title),
        ref=entry.original_ref,
        day=_day(entry.original_at, tz),
        rank=rank_text(lang, entry.original_rank),
    )


def original_note(lang: str, link: FollowUpLink, follow_up_ref: str, follow_up_title: str, tz=None) -> str:
    """The note on an original's analysis once a later commit reverted or fixed it."""
    key = "note_original_revert" if link.kind == FollowUpKind.REVERT else "note_original_fix"
    return word(lang, key, day=_day(link.follow_up_at, tz), ref=follow_up_ref, title=follow_up_title)


@dataclass(frozen=True, slots=True)
class EntryParts:
    """A Follow-ups line in pieces (raw text: each renderer escapes and links them its own way):
    "{icon} {follow_up_ref} {verb} {original_title} ({original_ref}, {detail})"."""

    icon: str
    follow_up_ref: str
    follow_up_title: str
    verb: str
    original_title: str
    original_ref: str
    detail: str  # "committed 2026-01-06; we ranked it high"

    @property
    def aside(self) -> str:
        """What goes in brackets after the original's title: its ref (unless the title already shows
        it, as "(#N)" titles do) and the detail."""
        shown = self.original_ref and self.original_ref not in self.original_title
        return f"{self.original_ref}, {self.detail}" if shown else self.detail

    def plain(self, lang: str) -> str:
        lp, rp = ("（", "）") if lang == "zh" else (" (", ")")
        return (
            f"{self.icon} {self.follow_up_ref} {self.verb} {_quoted(lang, self.original_title)}"
            f"{lp}{self.aside}{rp}"
        )


def entry_parts(lang: str, entry: DayFollowUp, tz: tzinfo | None = None) -> EntryParts:
    revert = entry.kind == FollowUpKind.REVERT
    rank = rank_text(lang, entry.original_rank)
    committed = "提交于 " if lang == "zh" else "committed "
    return EntryParts(
        icon="⚠️" if revert else "🔧",
        follow_up_ref=entry.follow_up_ref,
        follow_up_title=entry.follow_up.title,
        verb=word(lang, "verb_revert" if revert else "verb_fix"),
        original_title=entry.original_title,
        original_ref=entry.original_ref,
        detail=f"{committed}{_day(entry.original_at, tz)}{rank}",
    )


def _quoted(lang: str, title: str) -> str:
    return f"「{title}」" if lang == "zh" else f"“{title}”"


def _day(moment: datetime, tz: tzinfo | None) -> str:
    return (moment.astimezone(tz) if tz is not None else moment).date().isoformat()
