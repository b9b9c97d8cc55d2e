"""A thread answer whose model call fails says so in words: no Python class name, no traceback, no
exception text (it may quote a server's reply) reaches the thread; the log keeps them."""

from __future__ import annotations

import logging

from bot.ports.protocols import LLMError
from tests.bot.chat.test_qa import ask, make_service, posted, settings  # noqa: F401


class Broken:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    async def answer(self, ctx, question, lang):
        raise self.exc


async def test_a_failed_model_call_is_said_in_words_not_as_a_class(settings, store, caplog):  # noqa: F811
    for exc in (RuntimeError("boom at 0x7f3a"), LLMError("LLM m: HTTP 502 <html>bad gateway</html>")):
        service = make_service(settings, store, answerer=Broken(exc))
        await posted(service)
        with caplog.at_level(logging.WARNING):
            answer = await ask(service, "what would you watch today?")
        text = answer.plain()
        assert answer.source == "fallback" and text.startswith("(No model answer (the model call failed).")
        assert type(exc).__name__ not in text and str(exc) not in text and "Traceback" not in text
        assert f"{type(exc).__name__}: {exc}" in caplog.text  # the operator still sees what failed


async def test_in_chinese_too(settings, store):  # noqa: F811
    service = make_service(settings, store, answerer=Broken(ValueError("x")))
    await posted(service)
    text = (await ask(service, "你怎么看？")).plain()
    assert "模型调用失败" in text and "ValueError" not in text
