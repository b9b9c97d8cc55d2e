"""The weekly chart: commits per day stacked by tier, follow-ups marked on the days they landed, as one
PNG (matplotlib, Agg backend: no display needed).

Readable in a dark and a light chat client: an opaque light card with dark text, tier colours that keep
their contrast on it. Labels are in the roll-up's language; Chinese needs a CJK font, and most servers
and CI machines have none. The chart's Chinese words are our own closed set, so the package ships just
their glyphs, cut from Noto Sans SC (OFL-1.1; adapters/fonts/, made by tools/cjk_subset.py): some
20 KB instead of a font package. System CJK fonts (fontconfig's, when present) are fallbacks.
"""

from __future__ import annotations

import io
import logging
from functools import cache
from pathlib import Path

import matplotlib
from matplotlib import font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from analysis.history.followups import FollowUpKind
from analysis.labels import importance_word
from analysis.weekly import TIERS, Week

log = logging.getLogger(__name__)

WIDTH_PX, HEIGHT_PX, DPI = 1200, 600, 100
BACKGROUND, TEXT, GRID = "#ffffff", "#1f2328", "#d0d7de"
TIER_COLORS = {"high": "#d1242f", "medium": "#d4a72c", "low": "#2da44e"}
REVERT_COLOR, FIX_COLOR = "#8250df", "#0969da"
_LATIN = ["DejaVu Sans"]
# Families known to carry simplified Chinese, tried in this order after the shipped one.
_CJK_FAMILIES = ("Noto Sans SC", "Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Zen Hei", "SimHei")

_WORDS = {
    "zh": {
        "title": "{repo} · {week} 每日提交",
        "ylabel": "提交数",
        "revert": "回滚（落地日）",
        "fix": "修复跟进（落地日）",
        "days": ["周一", "周二", "周三", "周四", "周五", "周六", "周日"],
    },
    "en": {
        "title": "{repo} · {week} commits per day",
        "ylabel": "Commits",
        "revert": "Reverts (day landed)",
        "fix": "Fix-forwards (day landed)",
        "days": ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
    },
}


SUBSET_FONT = Path(__file__).with_name("fonts") / "NotoSansSC-chart.otf"


def chart_characters() -> set[str]:
    """Every character beyond ASCII the chart can draw in Chinese: what the shipped font must hold."""
    words = _WORDS["zh"]
    texts = [v for v in words.values() if isinstance(v, str)] + list(words["days"])
    texts += [importance_word("zh", tier).capitalize() for tier in TIERS]
    texts += ["0123456789()·-W"]  # numbers, counts and the week label inside the Chinese strings
    return {ch for text in texts for ch in text if not ch.isspace()}


def shipped_cjk_font() -> Path | None:
    """The chart's own subset of Noto Sans SC, shipped in the package."""
    return SUBSET_FONT if SUBSET_FONT.is_file() else None


@cache
def cjk_family() -> str | None:
    """The family name of a CJK font matplotlib can use, registering the shipped one; None if none."""
    shipped = shipped_cjk_font()
    if shipped is not None:
        font_manager.fontManager.addfont(str(shipped))
        return font_manager.FontProperties(fname=str(shipped)).get_name()
    available = {f.name for f in font_manager.fontManager.ttflist}
    found = next((name for name in _CJK_FAMILIES if name in available), None)
    if found is None:
        log.warning(
            "no CJK font found: Chinese chart labels will show as boxes (reinstall digestbot: its font is missing)"
        )
    return found


def font_families(lang: str) -> list[str]:
    """Latin first (digits and ASCII look as usual), then the CJK font for what Latin lacks."""
    cjk = cjk_family() if lang == "zh" else None
    return [*_LATIN, cjk] if cjk else list(_LATIN)


def render_week_chart(week: Week) -> bytes:
    """The PNG of the week, WIDTH_PX × HEIGHT_PX."""
    words = _WORDS[week.lang]
    # A bare Figure on the Agg canvas: no pyplot, no global figure state, no display.
    with matplotlib.rc_context({"font.family": font_families(week.lang), "axes.unicode_minus": False}):
        fig = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI, facecolor=BACKGROUND)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        _draw(ax, week, words)
        fig.tight_layout()
        out = io.BytesIO()
        fig.savefig(out, format="png", dpi=DPI, facecolor=BACKGROUND)
    return out.getvalue()


def _draw(ax, week: Week, words: dict) -> None:
    ax.set_facecolor(BACKGROUND)
    days = [d for d, _ in week.days]
    xs = list(range(len(days)))
    bottom = [0] * len(days)
    for tier in TIERS:
        heights = [counts[tier.value] for _, counts in week.days]
        ax.bar(xs, heights, bottom=bottom, color=TIER_COLORS[tier.value], width=0.6,
               label=importance_word(week.lang, tier).capitalize(), zorder=2)  # fmt: skip
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    top = max([*bottom, 1])
    for kind, color, marker, key in (
        (FollowUpKind.REVERT, REVERT_COLOR, "v", "revert"),
        (FollowUpKind.FIX, FIX_COLOR, "D", "fix"),
    ):
        counts = [sum(1 for f in week.landed_on(d) if f.link.kind == kind) for d in days]
        offset = 0.1 if kind == FollowUpKind.REVERT else 0.18
        marked = [(x, n) for x, n in zip(xs, counts, strict=True) if n]
        if not marked:
            continue
        ys = [bottom[x] + top * offset for x, _ in marked]
        ax.scatter([x for x, _ in marked], ys, marker=marker, s=90, color=color, zorder=3,
                   label=f"{words[key]} ({sum(counts)})")  # fmt: skip
        for (x, n), y in zip(marked, ys, strict=True):
            ax.annotate(str(n), (x, y), xytext=(9, -4), textcoords="offset points", color=color, fontsize=11)
    for x, total in zip(xs, bottom, strict=True):
        ax.annotate(str(total), (x, total), xytext=(0, 3), textcoords="offset points", ha="center",
                    va="bottom", color=TEXT, fontsize=10)  # fmt: skip
    ax.set_ylim(0, top * 1.3)
    ax.set_xticks(xs, [f"{words['days'][d.weekday()]}\n{d:%m-%d}" for d in days])
    ax.set_ylabel(words["ylabel"], color=TEXT)
    ax.set_title(words["title"].format(repo=week.repo, week=week.label), color=TEXT, fontsize=14)
    ax.tick_params(colors=TEXT)
    for spine in ax.spines.values():
        spine.set_color(GRID)
    ax.grid(axis="y", color=GRID, zorder=0)
    handles, labels = ax.get_legend_handles_labels()
    tiers = len(TIERS)  # bars were drawn first, but matplotlib lists markers first: tiers lead
    order = [*range(len(handles) - tiers, len(handles)), *range(len(handles) - tiers)]
    legend = ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper left",
                       frameon=False, ncols=5)  # fmt: skip
    for text in legend.get_texts():
        text.set_color(TEXT)
