"""`digestbot run` reads its subscriptions file once: an edit meanwhile is named in the log, once per change,
with what applies it (a restart)."""

from __future__ import annotations

import asyncio
import logging
import os

from bot.service.config_watch import watch_config


def _said(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "bot.service.config_watch"]


async def _until(caplog, n: int) -> list[str]:
    for _ in range(500):  # bounded: the watcher looks every 10 ms
        if len(_said(caplog)) >= n:
            break
        await asyncio.sleep(0.01)
    return _said(caplog)


async def test_an_edit_and_a_removal_of_the_file_are_each_said_once(tmp_path, caplog) -> None:
    caplog.set_level(logging.WARNING)
    path = tmp_path / "digest.toml"
    path.write_text('[[subscription]]\nrepo = "acme/widget"\n', encoding="utf-8")
    stop = asyncio.Event()
    watcher = asyncio.create_task(watch_config(path, stop, every=0.01))
    await asyncio.sleep(0.05)
    assert _said(caplog) == []  # unchanged: nothing said (five looks)

    path.write_text('[[subscription]]\nrepo = "acme/widget"\nlang = "en"\n', encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a different stamp even on a coarse clock
    said = await _until(caplog, 1)
    assert len(said) == 1
    assert "digest.toml changed since `digestbot run` read it: restart the service" in said[0]
    await asyncio.sleep(0.05)
    assert len(_said(caplog)) == 1  # once per change, not once per look

    path.unlink()
    said = await _until(caplog, 2)
    assert "digest.toml was removed since" in said[1]
    stop.set()
    await asyncio.wait_for(watcher, 5)
