"""What importing the LLM client costs: the SDK's optional aiohttp transport is not loaded behind it (issue 21),
and a client built then still calls the server. Each case runs in a fresh interpreter, where imports start empty."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.fakes.openai_server import FakeLLM

ROOT = Path(__file__).resolve().parents[2]

_CALL = """
import asyncio, json, sys
{before}
from adapters.llm import LLMClient

async def main():
    client = LLMClient(model=sys.argv[2], base_url=sys.argv[1], api_key="test-key-123456", timeout=10,
                       max_retries=0)
    built = set(sys.modules)
    try:
        reply = await client.complete([{{"role": "user", "content": "hello"}}], max_tokens=50, purpose="qa")
    finally:
        await client.aclose()
    return reply.content, sorted(set(sys.modules) - built)

text, by_call = asyncio.run(main())
transport = sys.modules.get("openai._vendor.httpx_aiohttp") is not None
print(json.dumps({{"aiohttp": "aiohttp" in sys.modules, "transport": transport, "text": text, "by_call": by_call}}))
"""


def _run(fake: FakeLLM, before: str = "") -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _CALL.format(before=before), fake.base_url, fake.model],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_client_calls_without_loading_aiohttp() -> None:
    with FakeLLM() as fake:
        seen = _run(fake)
        assert fake.calls == 1
    assert seen["aiohttp"] is False
    assert seen["transport"] is False
    assert seen["text"]


def test_an_aiohttp_already_loaded_is_left_to_the_sdk() -> None:
    # the chat service imports discord.py first (which loads aiohttp): the SDK then finds its transport
    with FakeLLM() as fake:
        seen = _run(fake, before="import aiohttp")
        assert fake.calls == 1
    assert seen["aiohttp"] is True
    assert seen["transport"] is True
    assert seen["text"]


def test_what_the_first_call_needs_is_loaded_where_the_client_is_built() -> None:
    # the client is built in a worker thread while the day is prepared (bot/app.py): a module the SDK or its
    # transport imports at the first call is paid on the way to that call instead
    with FakeLLM() as fake:
        seen = _run(fake)
        assert fake.calls == 1
    sdk = ("openai", "httpx", "httpcore", "anyio", "h11", "sniffio")
    assert [m for m in seen["by_call"] if m.split(".")[0] in sdk] == []
