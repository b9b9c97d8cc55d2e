"""A fake OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benchmarks.

POST /v1/chat/completions answers, by default, VALID content for whatever is asked: the JSON schema
sent as `response_format` (or, when none was sent, the schema the prompt asks for, recognised from its
key names), filled from the request itself: importance chosen deterministically from the commit text
(and a 0-100 score in that tier's band),
change type from the title tag, summaries naming a file the prompt shows. A request without any schema
gets a plain-text answer.

Faults are scripted per call (`script(...)`, matched by a substring of the prompt and/or the purpose),
or set for the whole server (`ignore_schema`, `reject_schema`, `usage`, `latency`). Counters: calls by
purpose, max in flight, prompt tokens received (and how many of them a prefix cache would have served,
reported as usage.prompt_tokens_details.cached_tokens), and a log of every request with its times.
`rate_limit_per_window` makes it a provider with a fixed requests-per-window limit (429 + Retry-After,
and x-ratelimit-remaining-requests headers when `ratelimit_headers`); `slots` makes it a server that
runs that many requests at once and queues the rest (llama.cpp with --parallel 1: latency rises, no
errors).

Usable as a pytest fixture (tests/bot/digest/test_llm_analyzer.py) or standalone (bench/bench_llm.py):

    with FakeLLM(latency=0.2) as fake:
        client = LLMClient(model=fake.model, base_url=fake.base_url)
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from werkzeug import Request, Response

from analysis.llm.tokens import estimate_messages, estimate_tokens
from tests.fakes.server import FakeServer, trickle

_ANSWERING = ("delay", "length", "trickle")  # fault actions that still build a (possibly cut) valid answer
PURPOSES = ("analysis", "triage", "analysis-high", "analysis-medium", "repair", "qa")
CACHE_BLOCK = 16  # tokens per prefix-cache block (vLLM's default block size)
# A path in prose: folders and a file with an extension, or a bare file name with a common extension.
_PATH = re.compile(
    r"(?<![\w/.@:-])((?:[\w.-]+/)+[\w.-]*\w\.[A-Za-z0-9]{1,8}"
    r"|[\w-]+\.(?:py|md|txt|toml|yaml|yml|json|cu|cuh|cpp|h|rs|go|sh|cfg))\b"
)
_DIFF_PATH = re.compile(r"^(?:\+\+\+ b/|--- a/|diff --git a/)(\S+)", re.MULTILINE)
_TAG = re.compile(r"\[([A-Za-z/ _-]{2,20})\]")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_SHA_LINE = re.compile(r"^(?:commit|提交)[:：]\s*([0-9a-f]{7,40})\s*$", re.MULTILINE)
TAG_TYPES = {
    "bugfix": "bugfix",
    "bug": "bugfix",
    "fix": "bugfix",
    "hotfix": "bugfix",
    "feature": "feature",
    "feat": "feature",
    "perf": "performance",
    "performance": "performance",
    "refactor": "refactor",
    "doc": "docs",
    "docs": "docs",
    "test": "tests",
    "tests": "tests",
    "ci": "ci/build",
    "build": "ci/build",
    "ci/build": "ci/build",
    "misc": "other",
    "chore": "other",
    "security": "security",
    "revert": "revert",
    "deps": "dependency",
    "dependency": "dependency",
    "config": "config",
}


@dataclass
class Rule:
    """One scripted behaviour. Matches a request when `match` occurs in the prompt (any message) and
    `purpose` equals the request's purpose (each when set); used `times` times (None: forever)."""

    # "invalid" | "length" | "status" | "delay" | "trickle" | "content" | "answer" | "body" | "refusal"
    action: str
    match: str | None = None
    purpose: str | None = None
    times: int | None = 1
    below: int | None = None  # "length" only when the request's max_tokens is below this
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    seconds: float = 0.0
    content: str = ""
    overrides: dict[str, Any] = field(default_factory=dict)  # "answer": fields forced in the JSON

    def matches(self, req: _Req) -> bool:
        if self.times is not None and self.times <= 0:
            return False
        if self.purpose is not None and self.purpose != req.purpose:
            return False
        if self.match is not None and self.match not in req.text:
            return False
        return not (self.below is not None and (req.max_tokens or 0) >= self.below)


@dataclass
class _Req:
    body: dict[str, Any]
    messages: list[dict[str, Any]]
    text: str  # every message's content, joined
    schema: dict[str, Any] | None  # the JSON schema asked for (response_format, or recognised)
    schema_sent: bool
    purpose: str
    max_tokens: int | None
    prompt_tokens: int


@dataclass
class Logged:
    purpose: str
    max_tokens: int | None
    schema_sent: bool
    prompt_tokens: int
    started: float
    ended: float = 0.0
    status: int = 200
    finish_reason: str | None = None
    text: str = ""


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(data), status=status, headers=headers or {}, content_type="application/json")


def _error(status: int, message: str, headers: dict[str, str] | None = None, body: Any = None) -> Response:
    return _json(
        body if body is not None else {"error": {"message": message, "type": "fake_error"}}, status, headers
    )


class FakeLLM(FakeServer):
    name = "LLM"
    poll_interval = 0.05

    def __init__(
        self,
        *,
        model: str = "fake-model",
        latency: float = 0.0,
        ignore_schema: bool = False,
        reject_schema: bool = False,
        usage: bool = True,
        enforce_max_tokens: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        quiet: bool = True,
    ):
        super().__init__(host, port, quiet)
        self.model = model
        self.latency = latency  # seconds every request takes (benchmarks)
        self.ignore_schema = ignore_schema  # accept response_format but answer JSON in prose and fences
        self.reject_schema = reject_schema  # 400 for any request carrying response_format
        self.usage = usage  # False: omit `usage`, as some servers do
        self.enforce_max_tokens = enforce_max_tokens  # a reply longer than max_tokens is cut: "length"
        self.files: dict[str, dict[str, Any]] = {}  # the Batch API's uploads and outputs
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_delay = 0.0  # seconds before a submitted batch completes
        self.batch_never_finishes = False
        self.batch_trickle = 0.0  # seconds each batch poll's answer trickles in (server.trickle)
        self.file_trickle = 0.0  # seconds a batch's output file trickles in when downloaded
        self.prefix_cache = True  # report cached_tokens like vLLM's automatic prefix caching
        self.rate_limit_per_window: int | None = None  # requests allowed per `rate_window` seconds
        self.rate_window = 60.0
        self.ratelimit_headers = False
        self.slots: int | None = None  # requests processed at once; the rest wait (a queueing server)
        self._slot_sem: threading.Semaphore | None = None
        self._starts: list[float] = []  # accepted request times, for the rate limit
        self.rejected = 0  # 429s from the rate limit
        self._prefixes: list[str] = []  # prompts seen, for the prefix-cache figure
        self.rules: list[Rule] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self.reset_counters()

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> FakeLLM:
        if not self.server.is_running():
            self._stopping.clear()
        return super().start()

    def stop(self) -> None:
        self._stopping.set()  # wakes delayed handlers so shutdown does not wait for them
        super().stop()

    def _handler_error(self, exc: Exception) -> Response:
        return _error(500, f"fake {self.name} error: {exc!r}")

    @property
    def base_url(self) -> str:
        """What OPENAI_BASE_URL is set to."""
        return self.server.url_for("/v1")

    # -- scripting --------------------------------------------------------------------------------
    def script(
        self,
        action: str,
        *,
        match: str | None = None,
        purpose: str | None = None,
        times: int | None = 1,
        **kw: Any,
    ) -> Rule:
        rule = Rule(action, match=match, purpose=purpose, times=times, **kw)
        with self._lock:
            self.rules.append(rule)
        return rule

    def invalid_json(self, **kw: Any) -> Rule:
        return self.script("invalid", **kw)

    def truncate(self, *, below: int | None = None, **kw: Any) -> Rule:
        """finish_reason "length" (optionally only while max_tokens < below)."""
        return self.script("length", below=below, **kw)

    def rate_limit(
        self, *, retry_after: float | None = 1, retry_after_ms: float | None = None, **kw: Any
    ) -> Rule:
        headers = {}
        if retry_after is not None:
            headers["Retry-After"] = f"{retry_after:g}"
        if retry_after_ms is not None:
            headers["retry-after-ms"] = f"{retry_after_ms:g}"
        return self.script("status", status=429, headers=headers, **kw)

    def fail(self, status: int = 500, **kw: Any) -> Rule:
        return self.script("status", status=status, **kw)

    def delay(self, seconds: float, **kw: Any) -> Rule:
        """Answer normally, but only after `seconds` (longer than a client timeout: a timeout)."""
        return self.script("delay", seconds=seconds, **kw)

    def trickle(self, seconds: float, **kw: Any) -> Rule:
        """Answer normally, but send the body a byte at a time for up to `seconds` (server.trickle): no
        read waits long, the whole answer does."""
        return self.script("trickle", seconds=seconds, **kw)

    def reply(self, content: str, **kw: Any) -> Rule:
        """Answer exactly `content` (e.g. hostile model output)."""
        return self.script("content", content=content, **kw)

    def body(self, text: str, content_type: str = "application/json", **kw: Any) -> Rule:
        """A 200 whose body is `text` as it is: a gateway's error page or error object, a cut JSON."""
        return self.script("body", body=text, headers={"content-type": content_type}, **kw)

    def refuse(self, refusal: str, **kw: Any) -> Rule:
        """A completion whose message is a refusal (no content), as OpenAI sends for a declined request."""
        return self.script("refusal", content=refusal, **kw)

    def force(
        self, *, match: str | None = None, purpose: str | None = None, times: int | None = None, **fields: Any
    ) -> Rule:
        """Valid answers with these fields forced (e.g. importance="high" for one commit)."""
        return self.script("answer", match=match, purpose=purpose, times=times, overrides=fields)

    # -- counters ---------------------------------------------------------------------------------
    def reset_counters(self) -> None:
        with self._lock:
            self.calls = 0
            self.by_purpose: Counter[str] = Counter()
            self.in_flight = 0
            self.max_in_flight = 0
            self.prompt_tokens = 0
            self.cached_tokens = 0
            self.batched = 0  # chat requests served inside a batch
            self.batch_polls = 0
            self.log: list[Logged] = []
            self._prefixes = []
            self._starts = []
            self.rejected = 0
            self._slot_sem = threading.Semaphore(self.slots) if self.slots else None

    def calls_for(self, match: str) -> list[Logged]:
        """Logged requests whose prompt contains `match`."""
        with self._lock:
            return [entry for entry in self.log if match in entry.text]

    # -- request handling -------------------------------------------------------------------------
    def _handle(self, request: Request) -> Response:
        path = request.path.rstrip("/")
        if "/files" in path or "/batches" in path:
            return self._batch_api(request, path)
        if request.method != "POST" or path != "/v1/chat/completions":  # as a real server: under /v1
            return _error(404, f"no route {request.method} {request.path}")
        body = request.get_json(force=True, silent=True)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "body must be a JSON object with messages")
        return self._chat(body)

    # -- the Batch API: /v1/files (JSONL upload), /v1/batches, poll, /v1/files/{id}/content -----------
    def _batch_api(self, request: Request, path: str) -> Response:
        parts = path.split("/v1/", 1)[-1].split("/")
        now = int(time.time())
        if parts == ["files"] and request.method == "POST":
            upload = request.files.get("file")
            if upload is None or request.form.get("purpose") != "batch":
                return _error(400, "multipart with purpose=batch and a file expected")
            return _json(self._store_file(upload.read().decode("utf-8"), upload.filename or "batch.jsonl"))
        if parts[0] == "files" and len(parts) == 3 and parts[2] == "content":
            with self._lock:
                data = self.files.get(parts[1])
            if not data:
                return _error(404, "no file")
            content = Response(data["content"], content_type="application/jsonl")
            return trickle(content, self.file_trickle) if self.file_trickle else content
        if parts == ["batches"] and request.method == "POST":
            body = request.get_json(force=True, silent=True) or {}
            with self._lock:
                if body.get("input_file_id") not in self.files:
                    return _error(400, "unknown input_file_id")
                batch_id = f"batch_{next(self._ids)}"
                self.batches[batch_id] = {
                    "id": batch_id, "object": "batch", "endpoint": body.get("endpoint"),
                    "input_file_id": body["input_file_id"], "completion_window": body.get("completion_window"),
                    "created_at": now, "status": "validating", "_ready_at": time.monotonic() + self.batch_delay,
                }  # fmt: skip
            return _json(self._batch_view(batch_id))
        if parts[0] == "batches" and len(parts) >= 2:
            with self._lock:
                known = parts[1] in self.batches
            if not known:
                return _error(404, "no such batch")
            if len(parts) == 3 and parts[2] == "cancel" and request.method == "POST":
                with self._lock:
                    self.batches[parts[1]]["status"] = "cancelled"
                return _json(self._batch_view(parts[1]))
            self.batch_polls += 1
            view = _json(self._batch_view(parts[1]))
            return trickle(view, self.batch_trickle) if self.batch_trickle else view
        return _error(404, f"no route {request.method} {request.path}")

    def _store_file(self, content: str, filename: str, purpose: str = "batch") -> dict[str, Any]:
        with self._lock:
            file_id = f"file-{next(self._ids)}"
            meta = {"id": file_id, "object": "file", "bytes": len(content.encode("utf-8")), "created_at": int(time.time()),
                    "filename": filename, "purpose": purpose, "status": "processed"}  # fmt: skip
            self.files[file_id] = {**meta, "content": content}
        return meta

    def _batch_view(self, batch_id: str) -> dict[str, Any]:
        """The batch as the API shows it; it runs every line through the chat handler once ready."""
        with self._lock:
            batch = self.batches[batch_id]
            due = batch["status"] in ("validating", "in_progress") and time.monotonic() >= batch["_ready_at"]
            if batch["status"] == "validating":
                batch["status"] = "in_progress"
        if due and not self.batch_never_finishes:
            lines = [
                json.loads(x) for x in self.files[batch["input_file_id"]]["content"].splitlines() if x.strip()
            ]
            out = []
            for line in lines:
                response = self._chat(line["body"], batch=True)
                out.append({"id": f"resp_{next(self._ids)}", "custom_id": line["custom_id"],
                            "response": {"status_code": response.status_code, "body": json.loads(response.get_data())},
                            "error": None})  # fmt: skip
            meta = self._store_file(
                "\n".join(json.dumps(x) for x in out) + "\n", "output.jsonl", "batch_output"
            )
            with self._lock:
                batch.update(status="completed", output_file_id=meta["id"],
                             request_counts={"total": len(out), "completed": len(out), "failed": 0})  # fmt: skip
        with self._lock:
            return {k: v for k, v in batch.items() if not k.startswith("_")}

    def _chat(self, body: dict[str, Any], *, batch: bool = False) -> Response:
        req = self._parse(body)
        if batch:
            with self._lock:
                self.batched += 1
        limited = None if batch else self._rate_limited()
        if limited is not None:
            return limited
        entry = Logged(
            req.purpose,
            req.max_tokens,
            req.schema_sent,
            req.prompt_tokens,
            time.monotonic(),
            text=req.text,
        )
        with self._lock:
            self.calls += 1
            self.by_purpose[req.purpose] += 1
            self.prompt_tokens += entry.prompt_tokens
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.log.append(entry)
            fault = self._take_rule(req, answer=False)
            override = (
                self._take_rule(req, answer=True) if fault is None or fault.action in _ANSWERING else None
            )
        response = _error(500, "fake LLM failed")
        slot = None if batch else self._slot_sem
        try:
            if slot is not None:
                slot.acquire()
            if self.latency and not batch:
                self._stopping.wait(self.latency)
            response = self._respond(req, fault, override.overrides if override else {})
        finally:
            if slot is not None:
                slot.release()
            with self._lock:
                self.in_flight -= 1
                entry.ended = time.monotonic()
                entry.status = response.status_code
        if response.status_code == 200 and not (fault is not None and fault.action == "body"):
            entry.finish_reason = json.loads(response.get_data())["choices"][0]["finish_reason"]
        if fault is not None and fault.action == "trickle":
            return trickle(response, fault.seconds)
        return response

    def _rate_limited(self) -> Response | None:
        """429 with Retry-After when the window's requests are used up (a hosted provider's RPM)."""
        if self.rate_limit_per_window is None:
            return None
        now = time.monotonic()
        with self._lock:
            self._starts = [t for t in self._starts if t > now - self.rate_window]
            if len(self._starts) < self.rate_limit_per_window:
                self._starts.append(now)
                return None
            self.rejected += 1
            wait = self._starts[0] + self.rate_window - now
        return _error(429, "Rate limit reached for requests", {"Retry-After": f"{max(wait, 0.01):.2f}"})

    def _rate_headers(self) -> dict[str, str]:
        if not (self.ratelimit_headers and self.rate_limit_per_window):
            return {}
        with self._lock:
            remaining = self.rate_limit_per_window - len(self._starts)
            # OpenAI's meaning: the time until the budget is back to its initial state.
            reset = (self._starts[-1] + self.rate_window - time.monotonic()) if self._starts else 0.0
        return {
            "x-ratelimit-remaining-requests": str(max(0, remaining)),
            "x-ratelimit-reset-requests": f"{max(0.0, reset):.2f}s",
        }

    def _cached(self, prompt: str) -> int:
        """Tokens of the longest prefix this prompt shares with an earlier one, in whole cache blocks:
        what a server with prefix caching (vLLM, OpenAI's prompt caching) would not compute again."""
        with self._lock:
            seen = list(self._prefixes)
            self._prefixes.append(prompt)
        best = max((_common_prefix(prompt, other) for other in seen), default=0)
        tokens = estimate_tokens(prompt[:best]) if best else 0
        return tokens - tokens % CACHE_BLOCK

    def _take_rule(self, req: _Req, *, answer: bool) -> Rule | None:
        """The first matching fault rule (answer=False) or field override (answer=True): an override
        and a fault scripted for the same call both apply (e.g. forced importance after a 429)."""
        for rule in self.rules:
            if (rule.action == "answer") == answer and rule.matches(req):
                if rule.times is not None:
                    rule.times -= 1
                return rule
        return None

    def _parse(self, body: dict[str, Any]) -> _Req:
        messages = body["messages"]
        text = "\n".join(str(m.get("content") or "") for m in messages)
        sent = _schema_of(body.get("response_format"))
        system = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
        schema = sent or _recognised_schema(system)
        has_reply = any(m.get("role") == "assistant" for m in messages)
        purpose = _purpose(schema, repair=has_reply and schema is not None)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        tokens = estimate_messages(messages)
        return _Req(body, messages, text, schema, sent is not None, purpose, max_tokens, tokens)

    def _respond(self, req: _Req, rule: Rule | None, overrides: dict[str, Any]) -> Response:
        if self.reject_schema and req.schema_sent:
            return _error(400, "response_format of type json_schema is not supported by this server")
        action = rule.action if rule else "answer"
        if action == "status":
            assert rule is not None
            return _error(rule.status, f"scripted {rule.status}", rule.headers, rule.body)
        if action == "body":
            assert rule is not None
            return Response(rule.body, status=200, content_type=rule.headers["content-type"])
        if action == "refusal":
            assert rule is not None
            response = self._completion(req, "", "stop")
            data = json.loads(response.get_data())
            data["choices"][0]["message"] = {"role": "assistant", "content": None, "refusal": rule.content}
            return _json(data)
        if action == "delay":
            assert rule is not None
            self._stopping.wait(rule.seconds)
        if action == "invalid":
            return self._completion(
                req, "Sure! Here is the analysis: {importance: high, summary: 'oops'", "stop"
            )
        if action == "content":
            assert rule is not None
            return self._completion(req, rule.content, "stop")
        content = self._content(req, overrides)
        if action == "length":
            return self._completion(req, content[: max(1, len(content) // 2)], "length")
        if self.enforce_max_tokens and req.max_tokens and estimate_tokens(content) > req.max_tokens:
            return self._completion(req, _cut(content, req.max_tokens), "length")
        return self._completion(req, content, "stop")

    def _content(self, req: _Req, overrides: dict[str, Any]) -> str:
        if req.schema is None:
            return _plain_answer(req)
        value = _instance(req.schema, req.schema, _Filler(req), "")
        if isinstance(value, dict):
            value.update({k: v for k, v in overrides.items() if k in value})
            if "importance" in overrides and "score" in value and "score" not in overrides:
                value["score"] = _Filler.score_for(value["importance"], 0)  # a forced tier's own score
            _shape_for_tier(value)
        text = json.dumps(value, ensure_ascii=False)
        if self.ignore_schema or not req.schema_sent:
            # What chatty models do without enforced structure: prose around a fenced block.
            return f"Here is the analysis you asked for.\n\n```json\n{json.dumps(value, ensure_ascii=False, indent=2)}\n```\nHope this helps!"
        return text

    def _completion(self, req: _Req, content: str, finish: str) -> Response:
        data: dict[str, Any] = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.body.get("model") or self.model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
            ],
        }
        if self.usage:
            tokens_in, tokens_out = req.prompt_tokens, estimate_tokens(content)
            data["usage"] = {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            }
            if self.prefix_cache:
                cached = min(tokens_in, self._cached(_prompt_text(req.messages)))
                data["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
                with self._lock:
                    self.cached_tokens += cached
        return _json(data, headers=self._rate_headers())


# -- understanding the request --------------------------------------------------------------------
def _schema_of(response_format: Any) -> dict[str, Any] | None:
    if not isinstance(response_format, dict) or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema") or {}
    schema = spec.get("schema")
    return schema if isinstance(schema, dict) else None


def _recognised_schema(system: str) -> dict[str, Any] | None:
    """The schema a request without response_format asks for, from the JSON shape its system prompt
    describes (key names in quotes followed by a colon). None: a plain-text question."""
    if '"insights":' in system and '"importance":' in system:
        name = "CommitOut"
    elif '"insights":' in system:
        name = "HighOut"
    elif '"recommendations":' in system:
        name = "MediumOut"
    elif '"change_type":' in system:
        name = "TriageOut"
    else:
        return None
    from analysis.llm import schemas

    return getattr(schemas, name).model_json_schema()


def _purpose(schema: dict[str, Any] | None, *, repair: bool) -> str:
    if schema is None:
        return "qa"
    if repair:
        return "repair"
    props = schema.get("properties") or {}
    if "importance" in props and "recommendations" in props:
        return "analysis"  # one call per commit: ranking and the tier's fields
    if "insights" in props:
        return "analysis-high"
    if "recommendations" in props:
        return "analysis-medium"
    return "triage"


class _Filler:
    """Field contents built from the request: deterministic, grounded in what the prompt shows."""

    def __init__(self, req: _Req):
        self.req = req
        user = "\n".join(str(m.get("content") or "") for m in req.messages if m.get("role") == "user")
        self.user = user
        self.zh = bool(_CJK.search("\n".join(str(m.get("content") or "") for m in req.messages[:1])))
        paths = _DIFF_PATH.findall(user) or _PATH.findall(user)
        self.paths = list(dict.fromkeys(p for p in paths if "://" not in p))
        # Keyed by the commit's sha when the prompt shows one: a commit gets the same tier whatever
        # the prompt design around it (so designs can be compared on the fake).
        sha = _SHA_LINE.search(user)
        key = sha.group(1) if sha else user
        self.digest = int(hashlib.sha1(key.encode("utf-8")).hexdigest(), 16)

    @property
    def path(self) -> str:
        return self.paths[0] if self.paths else ""

    def importance(self, options: list[str]) -> str:
        # Roughly the reference share (10 % high, 45 % medium, 45 % low), fixed per commit text.
        bucket = self.digest % 20
        wanted = "high" if bucket < 2 else "medium" if bucket < 11 else "low"
        return wanted if wanted in options else options[self.digest % len(options)]

    def score(self) -> int:
        """A 0-100 score in the band of the tier `importance` picks (high 88+, medium 45-87, low below)."""
        return self.score_for(self.importance(["high", "medium", "low"]), self.digest)

    @staticmethod
    def score_for(tier: str, digest: int) -> int:
        low, width = {"high": (88, 12), "medium": (45, 43), "low": (0, 45)}.get(tier, (45, 43))
        return low + digest % width

    def change_type(self, options: list[str]) -> str:
        for tag in _TAG.findall(self.user):
            kind = TAG_TYPES.get(tag.strip().lower())
            if kind in options:
                return kind
        return "feature" if "feature" in options else options[0]

    def text(self, name: str) -> str:
        where = f"`{self.path}`" if self.path else ("该提交" if self.zh else "the change")
        if self.zh:
            return {
                "reason": f"修改了 {where} 中的运行时代码。",
                "summary": f"更新 {where} 的实现。",
                "scope": f"{where} 及其调用方",
                "risks": f"{where} 的行为变化可能影响调用方。",
                "recommendations": f"审查 {where} 的改动并补充测试。",
            }.get(name, f"{where} 的改动对 {name} 的影响在差异中没有说明，未知。")
        return {
            "reason": f"Changes runtime code in {where}.",
            "summary": f"Updates the implementation in {where}.",
            "scope": f"{where} and its callers",
            "risks": f"Behaviour changes in {where} may affect callers.",
            "recommendations": f"Review the change to {where} and add tests.",
        }.get(name, f"The diff of {where} does not state its {name} impact: unknown.")


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not ref:
        return schema
    node: Any = root
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return _resolve(node, root)


def _instance(schema: dict[str, Any], root: dict[str, Any], fill: _Filler, name: str) -> Any:
    """A value valid for the (JSON Schema subset used by pydantic / strict mode) schema."""
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if _resolve(s, root).get("type") != "null"] or schema[key]
            return _instance(options[0], root, fill, name)
    if "enum" in schema or "const" in schema:
        options = [str(v) for v in schema.get("enum", [schema.get("const")])]
        if name == "importance":
            return fill.importance(options)
        if name == "change_type":
            return fill.change_type(options)
        return options[0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: _instance(sub, root, fill, key) for key, sub in props.items()}
    if kind == "array":
        items = schema.get("items") or {"type": "string"}
        count = max(1, min(2, int(schema.get("minItems", 1))))
        return [_instance(items, root, fill, name) for _ in range(count)]
    if kind in ("integer", "number"):
        return fill.score() if name == "score" else int(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    return fill.text(name)


def _plain_answer(req: _Req) -> str:
    fill = _Filler(req)
    where = f"`{fill.path}`" if fill.path else ("这个提交" if fill.zh else "this commit")
    if _CJK.search(req.messages[-1].get("content") or ""):
        return f"根据已存储的分析，主要风险在 {where}：行为变化可能影响调用方。"
    return f"From the stored analysis, the main risk is in {where}: behaviour changes may affect callers."


def _cut(content: str, max_tokens: int) -> str:
    """Roughly the first max_tokens tokens of content (a server stopping at its output cap)."""
    keep = max(1, int(len(content) * max_tokens / max(1, estimate_tokens(content))))
    return content[:keep]


def _shape_for_tier(value: dict[str, Any]) -> None:
    """What a model following the one-call prompt writes: nothing deeper for low, no insights for medium."""
    if "importance" not in value or "insights" not in value:
        return
    if value["importance"] == "low":
        value.update(scope=[], risks=[], recommendations=[], insights=None)
    elif value["importance"] == "medium":
        value["insights"] = None


def _prompt_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(f"{m.get('role')}\x00{m.get('content') or ''}" for m in messages)


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix (binary search on slices: C-speed comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo
