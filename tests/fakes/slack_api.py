"""A fake Slack Web API on 127.0.0.1 for tests and benchmarks, reached through SLACK_API_URL.

It implements the methods digestbot calls — auth.test, chat.postMessage, chat.postEphemeral,
conversations.replies / .history, the three steps of files_upload_v2, apps.connections.open — plus
response_url endpoints for slash commands. chat.postMessage validates Block Kit the way Slack does
and answers `invalid_blocks`, `msg_too_long` or `msg_blocks_too_long`, so a renderer that breaks a
limit fails here as it would in production. Faults can be queued per method (429 with Retry-After,
`ok: false` errors, 5xx), every call is counted per method, and a wrong token gets `invalid_auth`.
Faults after acceptance (`fail_after_accept`, `drop_after_accept`) carry the call out and then answer
500 or close the connection unanswered; `on_accept(message)` runs after each stored message and
`on_call(method, arguments)` as each call arrives.
conversations.history pages newest first and honours `oldest` / `latest`, as Slack does.

    with FakeSlack() as slack:
        settings = Settings(slack_bot_token=slack.token, slack_api_url=slack.api_url, ...)
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from werkzeug import Request, Response

from tests.fakes.server import FakeServer, drop_connection

BOT_USER = "UDIGESTBOT"
BOT_ID = "BDIGESTBOT"
TEAM = "T0TEAM"
_JSON_ARGS = ("blocks", "metadata", "files", "attachments")

# Block Kit limits as Slack enforces them (UTF-16 code units).
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_FIELD_TEXT = 2000
MAX_FIELDS = 10
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_TEXT = 40_000
MAX_BLOCKS_TOTAL_TEXT = 12_000  # the undocumented cumulative limit behind msg_blocks_too_long


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


# -- Block Kit validation ---------------------------------------------------------------------------
def block_errors(blocks: Any) -> list[str]:
    """What Slack would list in `errors` for these blocks ([] when valid)."""
    if not isinstance(blocks, list):
        return ["blocks must be an array [json-pointer:/blocks]"]
    errors = (
        [] if len(blocks) <= MAX_BLOCKS else [f"must be at most {MAX_BLOCKS} items [json-pointer:/blocks]"]
    )
    for i, block in enumerate(blocks):
        errors += _block(block, f"/blocks/{i}")
    return errors


def _block(block: Any, at: str) -> list[str]:
    if not isinstance(block, dict):
        return [f"must be an object [json-pointer:{at}]"]
    kind = block.get("type")
    if len(str(block.get("block_id", ""))) > 255:
        return [f"block_id too long [json-pointer:{at}/block_id]"]
    if kind == "section":
        return _section(block, at)
    if kind == "header":
        return _text(block.get("text"), f"{at}/text", MAX_HEADER_TEXT, plain_only=True)
    if kind == "context":
        elements = block.get("elements")
        if not isinstance(elements, list) or not 1 <= len(elements) <= MAX_CONTEXT_ELEMENTS:
            return [f"must have 1 to {MAX_CONTEXT_ELEMENTS} elements [json-pointer:{at}/elements]"]
        return [e for i, el in enumerate(elements) for e in _text(el, f"{at}/elements/{i}", MAX_SECTION_TEXT)]
    if kind == "divider":
        return []
    return [f"unsupported block type {kind!r} [json-pointer:{at}/type]"]


def _section(block: dict[str, Any], at: str) -> list[str]:
    if "text" not in block and "fields" not in block:
        return [f"must provide text or fields [json-pointer:{at}]"]
    errors = _text(block["text"], f"{at}/text", MAX_SECTION_TEXT) if "text" in block else []
    if "fields" in block:
        fields = block["fields"]
        if not isinstance(fields, list) or not 1 <= len(fields) <= MAX_FIELDS:
            return [*errors, f"must have 1 to {MAX_FIELDS} fields [json-pointer:{at}/fields]"]
        for i, f in enumerate(fields):
            errors += _text(f, f"{at}/fields/{i}", MAX_FIELD_TEXT)
    return errors


def _text(obj: Any, at: str, limit: int, plain_only: bool = False) -> list[str]:
    if not isinstance(obj, dict) or obj.get("type") not in ("plain_text", "mrkdwn"):
        return [f"must be a text object [json-pointer:{at}]"]
    if plain_only and obj["type"] != "plain_text":
        return [f"must be plain_text [json-pointer:{at}/type]"]
    if "verbatim" in obj and obj["type"] != "mrkdwn":
        return [f"verbatim is only for mrkdwn [json-pointer:{at}/verbatim]"]
    text = obj.get("text")
    if not isinstance(text, str) or not text:
        return [f"must be more than 0 characters [json-pointer:{at}/text]"]
    if units(text) > limit:
        return [f"must be less than {limit + 1} characters [json-pointer:{at}/text]"]
    return []


def blocks_text(value: Any) -> int:
    if isinstance(value, dict):
        return sum(
            units(v) if k == "text" and isinstance(v, str) else blocks_text(v) for k, v in value.items()
        )
    if isinstance(value, list):
        return sum(blocks_text(v) for v in value)
    return 0


def message_error(args: dict[str, Any]) -> tuple[str | None, list[str]]:
    """(error, errors) Slack answers for a message's text/blocks/metadata, (None, []) when valid."""
    text, blocks = args.get("text"), args.get("blocks")
    if not text and not blocks:
        return "no_text", []
    if blocks is not None:
        if errors := block_errors(blocks):
            return "invalid_blocks", errors
        if blocks_text(blocks) > MAX_BLOCKS_TOTAL_TEXT:
            return "msg_blocks_too_long", []
    if text and units(str(text)) > MAX_TEXT:
        return "msg_too_long", []
    meta = args.get("metadata")
    if meta is not None and not (
        isinstance(meta, dict)
        and isinstance(meta.get("event_type"), str)
        and isinstance(meta.get("event_payload"), dict)
    ):
        return "invalid_metadata_format", []
    return None, []


# -- the fake ---------------------------------------------------------------------------------------
@dataclass
class Fault:
    status: int = 200
    error: str | None = None
    retry_after: int | None = None
    accepted: bool = False  # carry the call out, then answer with the fault (status 0: drop)
    when: Callable[[dict[str, Any]], bool] | None = None  # only calls whose arguments match


@dataclass
class Upload:
    file_id: str
    filename: str
    length: int
    content: bytes | None = None
    title: str | None = None
    channel: str | None = None
    thread_ts: str | None = None


@dataclass
class Message:
    ts: str
    channel: str
    text: str = ""
    blocks: list[dict[str, Any]] | None = None
    thread_ts: str | None = None
    metadata: dict[str, Any] | None = None
    user: str = BOT_USER
    bot_id: str | None = BOT_ID
    files: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_api(self, with_metadata: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "message", "ts": self.ts, "user": self.user, "text": self.text}
        if self.bot_id:
            out["bot_id"] = self.bot_id
        if self.blocks is not None:
            out["blocks"] = self.blocks
        if self.thread_ts:
            out["thread_ts"] = self.thread_ts
        if self.files:
            out["files"] = self.files
        if with_metadata and self.metadata:
            out["metadata"] = self.metadata
        return out


class FakeSlack(FakeServer):
    name = "Slack"

    def __init__(
        self,
        *,
        token: str = "xoxb-fake-bot-token",
        app_token: str = "xapp-fake-app-token",
        latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        quiet: bool = True,
    ):
        super().__init__(host, port, quiet)
        self.token = token  # requests must carry "Bearer <token>", else invalid_auth
        self.app_token = app_token
        self.latency = latency  # seconds each Web API call takes
        self.socket_url: str | None = None  # what apps.connections.open hands out
        self.not_in_channel: set[str] = set()  # channels the bot is not a member of
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self._faults: dict[str, deque[Fault]] = defaultdict(deque)
        self.on_accept: Callable[[Message], None] | None = None
        # on_call(method, arguments) runs as each call arrives, before it is carried out (the chaos
        # benchmark kills a process there: recorded on our side, not yet done on Slack's)
        self.on_call: Callable[[str, dict[str, Any]], None] | None = None
        self.reset()

    # -- addresses and state ------------------------------------------------------------------------
    @property
    def api_url(self) -> str:
        """SLACK_API_URL for this fake (with the trailing slash slack_sdk expects)."""
        return self.server.url_for("/api/")

    def response_url(self, name: str = "cmd") -> str:
        """A slash command's response_url: what is POSTed there lands in `responses`."""
        return self.server.url_for(f"/response/{name}")

    def check(self) -> None:
        """Re-raise the first error the fake itself hit while handling a request; it stays recorded."""
        if self.server.handler_errors:
            raise self.server.handler_errors[0]

    def reset(self) -> None:
        with self._lock:
            self.calls: Counter[str] = Counter()
            self.messages: list[Message] = []
            self.ephemerals: list[dict[str, Any]] = []
            self.responses: list[dict[str, Any]] = []
            self.uploads: dict[str, Upload] = {}
            self.edits: Counter[str] = Counter()  # chat.update calls per message ts
            self._faults.clear()

    def reset_counters(self) -> None:
        with self._lock:
            self.calls = Counter()

    # -- fault injection ------------------------------------------------------------------------------
    def rate_limit(self, method: str, times: int = 1, retry_after: int = 1) -> None:
        """The next `times` calls of `method` answer 429 with Retry-After."""
        self._queue(method, times, Fault(429, "ratelimited", retry_after))

    def fail(
        self,
        method: str,
        error: str = "internal_error",
        times: int = 1,
        status: int = 200,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        """The next `times` calls of `method` (whose arguments pass `when`, if given) answer
        {"ok": false, "error": error} (status 200 like Slack)."""
        self._queue(method, times, Fault(status, error, when=when))

    def fail_after_accept(self, method: str, times: int = 1, status: int = 500) -> None:
        """The next `times` calls of `method` are carried out, then answered HTTP `status`."""
        self._queue(method, times, Fault(status, "internal_error", accepted=True))

    def drop_after_accept(self, method: str, times: int = 1) -> None:
        """The next `times` calls of `method` are carried out, then the connection closes unanswered."""
        self._queue(method, times, Fault(0, accepted=True))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def _queue(self, method: str, times: int, fault: Fault) -> None:
        with self._lock:
            self._faults[method].extend([fault] * times)

    # -- what tests look at -------------------------------------------------------------------------
    def channel_messages(self, channel: str) -> list[Message]:
        """Top-level messages of a channel, oldest first."""
        with self._lock:
            return [m for m in self.messages if m.channel == channel and not m.thread_ts]

    def thread(self, channel: str, ts: str) -> list[Message]:
        """Replies in the thread of `ts` (not the parent), oldest first."""
        with self._lock:
            return [m for m in self.messages if m.channel == channel and m.thread_ts == ts]

    def find(self, ts: str) -> Message | None:
        with self._lock:
            return next((m for m in self.messages if m.ts == ts), None)

    def add_user_message(
        self,
        channel: str,
        text: str,
        *,
        user: str = "UHUMAN1",
        thread_ts: str | None = None,
        bot_id: str | None = None,
    ) -> Message:
        """A message someone else wrote (it shows in conversations.replies / .history)."""
        with self._lock:
            msg = Message(self._ts(), channel, text, thread_ts=thread_ts, user=user, bot_id=bot_id)
            self.messages.append(msg)
            return msg

    # -- dispatch -------------------------------------------------------------------------------------
    def _handle(self, request: Request) -> Response:
        path = request.path
        if path.startswith("/response/"):
            return self._response_url(request)
        if path.startswith("/upload/"):
            return self._upload(request, path.removeprefix("/upload/"))
        if not path.startswith("/api/"):
            return Response("not found", status=404)
        method = path.removeprefix("/api/")
        if self.latency:
            time.sleep(self.latency)
        params = _params(request)
        with self._lock:
            self.calls[method] += 1
            fault = self._take_fault(method, params)
        if self.on_call is not None:
            self.on_call(method, params)
        if fault is not None and not fault.accepted:
            return self._fault(fault)
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return _json({"ok": False, "error": "unknown_method"}, 404)
        expected = self.app_token if method == "apps.connections.open" else self.token
        if request.headers.get("Authorization") != f"Bearer {expected}":
            return _json(
                {
                    "ok": False,
                    "error": "invalid_auth" if request.headers.get("Authorization") else "not_authed",
                }
            )
        with self._lock:
            before = len(self.messages)
            body = handler(params)
            new = self.messages[before:]
        if self.on_accept is not None:
            for message in new:
                self.on_accept(message)
        if fault is not None:  # accepted: the work is done, the answer is lost
            return drop_connection(request) if fault.status == 0 else self._fault(fault)
        return _json(body)

    def _take_fault(self, method: str, params: dict[str, Any]) -> Fault | None:
        queued = self._faults.get(method)
        for fault in queued or ():
            if fault.when is None or fault.when(params):
                queued.remove(fault)  # type: ignore[union-attr]
                return fault
        return None

    def _fault(self, fault: Fault) -> Response:
        headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
        body = {"ok": False, "error": fault.error or "internal_error"}
        return _json(body, fault.status, headers)

    def _ts(self) -> str:
        # Slack's ts is the posting time: a fixed epoch would put every message before the day being
        # posted, and a lookup bounded by the day's start (reconciliation) would never find it.
        n = next(self._seq)
        return f"{int(time.time()) + n}.{n:06d}"

    # -- methods (called with the lock held) -------------------------------------------------------------
    def _m_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://fake.slack.test/",
            "team": "Fake Team",
            "user": "digestbot",
            "team_id": TEAM,
            "user_id": BOT_USER,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _m_apps_connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        if not self.socket_url:
            return {"ok": False, "error": "socket_mode_not_enabled"}
        return {"ok": True, "url": self.socket_url}

    def _m_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args.get("channel") or "")
        if problem := self._channel_problem(channel):
            return {"ok": False, "error": problem}
        error, errors = message_error(args)
        if error:
            return {"ok": False, "error": error, **({"errors": errors} if errors else {})}
        thread = args.get("thread_ts")
        if thread and not any(m.ts == thread and m.channel == channel for m in self.messages):
            return {"ok": False, "error": "thread_not_found"}
        extra = {k: args[k] for k in ("unfurl_links", "unfurl_media", "parse", "link_names") if k in args}
        msg = Message(
            self._ts(),
            channel,
            str(args.get("text") or ""),
            args.get("blocks"),
            thread or None,
            args.get("metadata"),
            extra=extra,
        )
        self.messages.append(msg)
        return {"ok": True, "channel": channel, "ts": msg.ts, "message": msg.as_api(True)}

    def _m_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        """Edits one of the bot's own messages (text and blocks); `edits` counts them per ts."""
        channel, ts = str(args.get("channel") or ""), str(args.get("ts") or "")
        if problem := self._channel_problem(channel):
            return {"ok": False, "error": problem}
        msg = next((m for m in self.messages if m.channel == channel and m.ts == ts), None)
        if msg is None:
            return {"ok": False, "error": "message_not_found"}
        if msg.bot_id != BOT_ID:
            return {"ok": False, "error": "cant_update_message"}
        error, errors = message_error(args)
        if error:
            return {"ok": False, "error": error, **({"errors": errors} if errors else {})}
        msg.text = str(args.get("text") or "")
        if "blocks" in args:
            msg.blocks = args.get("blocks")
        self.edits[ts] += 1
        return {"ok": True, "channel": channel, "ts": ts, "text": msg.text}

    def _m_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args.get("channel") or "")
        if problem := self._channel_problem(channel):
            return {"ok": False, "error": problem}
        if not args.get("user"):
            return {"ok": False, "error": "user_not_in_channel"}
        error, errors = message_error(args)
        if error:
            return {"ok": False, "error": error, **({"errors": errors} if errors else {})}
        ts = self._ts()
        self.ephemerals.append({**args, "message_ts": ts})
        return {"ok": True, "message_ts": ts}

    def _m_conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(args.get("channel") or ""), str(args.get("ts") or "")
        if channel in self.not_in_channel:
            return {"ok": False, "error": "not_in_channel"}
        parent = next((m for m in self.messages if m.channel == channel and m.ts == ts), None)
        if parent is None:
            return {"ok": False, "error": "thread_not_found"}
        thread_ts = parent.thread_ts or parent.ts
        found = [
            m
            for m in self.messages
            if m.channel == channel and (m.ts == thread_ts or m.thread_ts == thread_ts)
        ]
        return self._page(found, args)

    def _m_conversations_history(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args.get("channel") or "")
        if channel in self.not_in_channel:
            return {"ok": False, "error": "not_in_channel"}
        oldest, latest = float(args.get("oldest") or 0), float(args.get("latest") or "inf")
        found = [
            m
            for m in reversed(self.messages)
            if m.channel == channel and not m.thread_ts and oldest < float(m.ts) < latest
        ]
        return self._page(found, args)

    def _page(self, found: list[Message], args: dict[str, Any]) -> dict[str, Any]:
        start = int(args.get("cursor") or 0)
        limit = max(1, min(int(args.get("limit") or 100), 1000))
        page = found[start : start + limit]
        more = start + limit < len(found)
        with_meta = _truthy(args.get("include_all_metadata"))
        return {
            "ok": True,
            "messages": [m.as_api(with_meta) for m in page],
            "has_more": more,
            "response_metadata": {"next_cursor": str(start + limit) if more else ""},
        }

    def _m_chat_getPermalink(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "permalink": f"https://fake.slack.test/archives/{args.get('channel')}/p{args.get('message_ts')}",
        }

    def _m_files_getUploadURLExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("filename") or not str(args.get("length") or "").isdigit():
            return {"ok": False, "error": "invalid_arguments"}
        file_id = f"F{next(self._seq):08d}"
        self.uploads[file_id] = Upload(file_id, str(args["filename"]), int(args["length"]))
        return {"ok": True, "upload_url": self.server.url_for(f"/upload/{file_id}"), "file_id": file_id}

    def _m_files_completeUploadExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        files = args.get("files") or []
        channel, thread = args.get("channel_id"), args.get("thread_ts")
        if channel and (problem := self._channel_problem(str(channel))):
            return {"ok": False, "error": problem}
        done = []
        for entry in files:
            upload = self.uploads.get(entry.get("id"))
            if upload is None or upload.content is None:
                return {"ok": False, "error": "file_not_found"}
            upload.title, upload.channel, upload.thread_ts = entry.get("title"), channel, thread
            done.append({"id": upload.file_id, "name": upload.filename, "title": upload.title})
        if channel:  # sharing posts a message carrying the files, in the thread when one is given
            shared = Message(
                self._ts(), str(channel), str(args.get("initial_comment") or ""), None, thread, None
            )
            shared.files = done
            self.messages.append(shared)
        return {"ok": True, "files": done}

    # -- non-API endpoints -------------------------------------------------------------------------------
    def _upload(self, request: Request, file_id: str) -> Response:
        with self._lock:
            self.calls["(upload)"] += 1
            upload = self.uploads.get(file_id)
            data = request.get_data()
            if upload is None:
                return Response("unknown upload", status=404, content_type="text/plain")
            if len(data) != upload.length:
                return Response(
                    f"length {len(data)} != {upload.length}", status=400, content_type="text/plain"
                )
            upload.content = data
        return Response(f"OK - {len(data)}", content_type="text/plain")

    def _response_url(self, request: Request) -> Response:
        payload = json.loads(request.get_data() or b"{}")
        with self._lock:
            self.calls["(response_url)"] += 1
            error, _ = message_error(payload)
            if error:
                return Response(error, status=400, content_type="text/plain")
            self.responses.append({"url": request.path, **payload})
        return Response("ok", content_type="text/plain")

    def _channel_problem(self, channel: str) -> str | None:
        if not channel or channel[0] not in "CGD":
            return "channel_not_found"
        return "not_in_channel" if channel in self.not_in_channel else None


def _params(request: Request) -> dict[str, Any]:
    args: dict[str, Any] = dict(request.args.items())
    if request.mimetype == "application/json":
        args.update(json.loads(request.get_data() or b"{}"))
    else:
        args.update(request.form.items())
    for key in _JSON_ARGS:
        if isinstance(args.get(key), str):
            args[key] = json.loads(args[key])
    return args


def _truthy(value: Any) -> bool:
    return value in (True, 1, "1", "true", "True")


def _json(body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(body), status=status, headers=headers, content_type="application/json")


async def eventually(predicate: Callable[[], Any], timeout: float = 5.0, interval: float = 0.01) -> Any:
    """Wait (in an event loop) until predicate() is truthy; return its value or fail after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(interval)
