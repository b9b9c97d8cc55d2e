"""Answers to questions asked in a digest thread, grounded in what we stored.

With an LLM (an `answerer`), the model answers from the analysis, the commit's diff and the thread;
without one, or when it fails, the answer is assembled from the stored analysis alone and says so.
Either way we never invent: when the data has nothing on the question, we say we don't know.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from analysis.labels import change_type_label, importance_label
from analysis.models import Importance
from bot.chat import ThreadContext, question_lang

log = logging.getLogger(__name__)


class Answerer(Protocol):
    async def answer(self, ctx: ThreadContext, question: str, lang: str) -> str: ...


async def answer_question(ctx: ThreadContext, question: str, answerer: Answerer | None, settings: Any) -> str:
    lang = question_lang(question)
    if answerer is not None:
        try:
            return await answerer.answer(ctx, question, lang)
        except Exception as exc:  # the chat must still get an answer
            log.warning(
                "LLM answer failed (%s: %s); answering from the stored analysis", type(exc).__name__, exc
            )
    return stored_answer(ctx, lang)


def stored_answer(ctx: ThreadContext, lang: str) -> str:
    """The answer the stored analysis supports, without a model."""
    zh = lang == "zh"
    prefix = (
        "（未配置或无法使用 LLM，以下内容来自已存储的分析）\n"
        if zh
        else "(From the stored analysis; no LLM answer available.)\n"
    )
    if ctx.commit is not None and ctx.analysis is not None:
        a = ctx.analysis
        head = f"{ctx.commit.title} ({ctx.commit.short_sha}) — {importance_label(lang, a.importance)}, " + (
            change_type_label(lang, a.change_type)
        )
        lines = [prefix + head]
        if a.notes:  # reverted / fixed forward later, coverage, fallbacks: facts a reader must not miss
            lines.append(("说明：" if zh else "Notes: ") + " ".join(a.notes))
        if a.risks:
            lines.append(("潜在风险：" if zh else "Risks:") + "".join(f"\n• {r}" for r in a.risks))
        if a.recommendations:
            lines.append(
                ("关注建议：" if zh else "Recommendations:") + "".join(f"\n• {r}" for r in a.recommendations)
            )
        if not a.risks and not a.recommendations:
            lines.append(
                (
                    "我不知道：该提交的分析没有列出风险。摘要："
                    if zh
                    else "I don't know: its analysis lists no risks. Summary: "
                )
                + a.summary
            )
        return "\n".join(lines)
    if ctx.digest is not None:
        d = ctx.digest
        ranked = sorted(
            d.commits, key=lambda c: (d.analyses[c.sha].importance.rank, -len(d.analyses[c.sha].risks))
        )
        risky = [
            c for c in ranked if d.analyses[c.sha].importance != Importance.LOW and d.analyses[c.sha].risks
        ][:5]
        if not risky:
            return prefix + (
                "我不知道：当天的分析中没有记录风险。"
                if zh
                else "I don't know: no risks were recorded for this day."
            )
        title = "风险最高的提交：" if zh else "Commits carrying the most risk:"
        body = "".join(
            f"\n• {c.title} ({c.short_sha}, {importance_label(lang, d.analyses[c.sha].importance)}): "
            f"{d.analyses[c.sha].risks[0]}"
            for c in risky
        )
        return prefix + title + body
    return "我不知道这个讨论串对应哪个摘要。" if zh else "I don't know which digest this thread belongs to."
