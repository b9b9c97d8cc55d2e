"""A fake Discord REST API on 127.0.0.1 for tests and benchmarks, reached by discord.py itself through
`discord.http.Route.BASE` (DISCORD_API_URL).

It serves what a bot posting digests uses: login (GET /users/@me, GET /oauth2/applications/@me),
channels, messages (JSON and multipart with attachments), threads started from messages, message
deletion, message history and application-command sync. Like Discord, a message sent with a `nonce` and
`enforce_nonce` is created once: the same nonce again within NONCE_WINDOW returns the first message. Messages are checked against Discord's limits
independently of our renderer and violations get Discord's 400 "Invalid Form Body" shape. Every
request is recorded (route template, payload, allowed_mentions, files) and counted.

Rate limits behave as discord.py expects: every response carries per-route bucket headers
(X-RateLimit-Bucket/Limit/Remaining/Reset/Reset-After, per route and major parameter), exceeding a
bucket answers 429, and `rate_limit()` queues 429s with `retry_after` in the JSON body and in the
Retry-After header. Every response has a `Via` header: discord.py treats a 429 without one as a
Cloudflare ban.

Slash commands: `interaction()` registers an application-command interaction and returns its
INTERACTION_CREATE payload (what the gateway delivers); its callback (POST /interactions/{id}/{token}/
callback, acknowledged once, 10062 when `late` or unknown, 40060 the second time) and follow-ups
through the interaction webhook (POST /webhooks/{application_id}/{token}, 10015 once `expire()`d, as
after 15 minutes) are recorded in `interactions`. `guild_payload()` and `message_payload()` are the
GUILD_CREATE and MESSAGE_CREATE payloads of the gateway, for feeding discord.py's parsers directly.

Faults after acceptance (`fail_after_accept`, `drop_after_accept`) store the message first and then
answer 500 or close the connection without an answer: the ambiguous failures a poster must survive
without posting twice. `on_accept(channel_id, message)` runs after each stored message (the chaos
benchmark kills the poster there), `on_call(route, payload)` as each request arrives.

    with FakeDiscord() as fake, fake.routed():          # Route.BASE points here, restored after
        client = discord.Client(intents=discord.Intents.none())
        await client.login(fake.token)
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from werkzeug import Request, Response

from tests.fakes.server import FakeServer, drop_connection

API_PREFIX = "/api/v10"
DISCORD_EPOCH_MS = 1_420_070_400_000

# Discord's documented limits, written out again here so the fake does not trust our renderer.
CONTENT_MAX = 2000
EMBEDS_MAX = 10
EMBED_TOTAL_MAX = 6000
FIELDS_MAX = 25
ATTACHMENTS_MAX = 10
THREAD_NAME_MAX = 100
NONCE_WINDOW = 300.0  # seconds Discord remembers an enforced nonce ("the past few minutes")
_EMBED_LIMITS = {"title": 256, "description": 4096}
_FIELD_LIMITS = {"name": 256, "value": 1024}


@dataclass
class Fault:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    count: int = 1
    route: str | None = None  # only requests whose route ends with this, e.g. "/messages"
    after: int = 0  # let this many matching requests through first
    accepted: bool = False  # act on the request first, then answer with the fault (status 0: drop)


@dataclass(frozen=True)
class Call:
    method: str
    path: str  # without the /api/v10 prefix
    route: str  # method + path template: "POST /channels/{channel_id}/messages"
    status: int
    payload: Any  # the JSON body, or the multipart payload_json
    files: tuple[tuple[str, bytes], ...] = ()  # (filename, content)


@dataclass
class Interaction:
    """A slash command as Discord sees it: acknowledged at most once, then followed up by its token."""

    id: str
    token: str
    late: bool = False  # delivered after Discord's 3 s: its callback is "Unknown interaction"
    expired: bool = False  # its token is older than 15 minutes: follow-ups are "Unknown Webhook"
    callbacks: list[dict[str, Any]] = field(default_factory=list)  # accepted callbacks (type, data)
    followups: list[dict[str, Any]] = field(default_factory=list)  # messages sent through the token
    deleted_original: bool = False

    @property
    def replies(self) -> list[dict[str, Any]]:
        """What the user saw: a type-4 callback's message and every follow-up, in order."""
        first = [c.get("data") or {} for c in self.callbacks if c.get("type") == 4]
        return first + self.followups


class _Bucket:
    """One rate-limit bucket: a fixed window of `limit` requests per `per` seconds."""

    def __init__(self, limit: int, per: float):
        self.limit, self.per = limit, per
        self.started = 0.0
        self.used = 0

    def take(self, now: float) -> tuple[bool, int, float]:
        """(allowed, remaining, reset_after)."""
        if now - self.started >= self.per:
            self.started, self.used = now, 0
        reset_after = max(0.001, self.started + self.per - now)
        if self.used >= self.limit:
            return False, 0, reset_after
        self.used += 1
        return True, self.limit - self.used, reset_after


def _id_template(path: str) -> tuple[str, str]:
    """("/channels/{channel_id}/messages/{message_id}", major parameter) for a concrete path."""
    names = {"channels": "channel_id", "messages": "message_id", "guilds": "guild_id"}
    names |= {"applications": "application_id", "webhooks": "webhook_id", "users": "user_id"}
    names |= {"interactions": "interaction_id"}
    parts = path.strip("/").split("/")
    out, major = [], ""
    for i, part in enumerate(parts):
        prev = parts[i - 1] if i else ""
        if i == 2 and parts[0] in ("webhooks", "interactions"):
            out.append("{token}")  # an interaction's token, never in a route name
            continue
        if part.isdigit() and prev in names:
            out.append("{" + names[prev] + "}")
            if prev in ("channels", "guilds", "webhooks") and not major:
                major = part
        else:
            out.append(part)
    return "/" + "/".join(out), major


def _error(errors: dict[str, Any]) -> dict[str, Any]:
    return {"code": 50035, "message": "Invalid Form Body", "errors": errors}


def _max_length(limit: int) -> dict[str, Any]:
    return {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH", "message": f"Must be {limit} or fewer in length."}]}


def _required() -> dict[str, Any]:
    return {"_errors": [{"code": "BASE_TYPE_REQUIRED", "message": "This field is required"}]}


def _nest(errors: dict[str, Any], path: list[str], leaf: dict[str, Any]) -> None:
    node = errors
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = leaf


class FakeDiscord(FakeServer):
    name = "Discord"

    def __init__(
        self,
        *,
        token: str = "fake.bot.token",
        guild_id: int = 900_000_000_000_000_001,
        channels: tuple[int, ...] = (900_000_000_000_000_100,),
        bucket_limit: int = 50,
        bucket_per: float = 1.0,
        max_file_bytes: int = 10 * 1024 * 1024,
        latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        quiet: bool = True,
    ):
        super().__init__(host, port, quiet)
        self.token = token
        self.guild_id = guild_id
        self.application_id = 800_000_000_000_000_001
        self.user = {
            "id": str(self.application_id),
            "username": "digestbot",
            "discriminator": "0",
            "global_name": None,
            "avatar": None,
            "bot": True,
        }
        self.bucket_limit, self.bucket_per = bucket_limit, bucket_per  # Discord: 5 messages / 5 s per channel
        self.max_file_bytes = max_file_bytes
        self.latency = latency
        self.channels: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, list[dict[str, Any]]] = {}  # channel or thread id → messages, oldest first
        self.commands: dict[str, list[dict[str, Any]]] = {}  # "global" or guild id → synced commands
        self.interactions: dict[str, Interaction] = {}  # interaction id → what it was answered
        self._lock = threading.Lock()
        self._faults: deque[Fault] = deque()
        self._buckets: dict[str, _Bucket] = {}
        self._ids = itertools.count(1)
        self._nonces: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}
        self.nonce_window = NONCE_WINDOW  # 0: a restart long after, when Discord forgot the nonces
        self.on_accept: Callable[[str, dict[str, Any]], None] | None = None
        # on_call(route, payload) runs as each request arrives, before it is carried out (a test kills
        # the process there: what it recorded is on our side, the request still done on Discord's)
        self.on_call: Callable[[str, Any], None] | None = None
        for channel_id in channels:
            self.add_channel(channel_id)
        self.reset_counters()

    # -- addresses --------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """What DISCORD_API_URL (discord.http.Route.BASE) is set to."""
        return self.server.url_for(API_PREFIX).rstrip("/")

    @contextmanager
    def routed(self) -> Iterator[FakeDiscord]:
        """Point discord.py at this fake; Route.BASE is a class attribute, so it is restored after."""
        from discord.http import Route

        previous = Route.BASE
        Route.BASE = self.base_url
        try:
            yield self
        finally:
            Route.BASE = previous

    # -- data -------------------------------------------------------------------------------------
    def snowflake(self) -> str:
        now_ms = int(time.time() * 1000)
        with self._lock:
            return str(((now_ms - DISCORD_EPOCH_MS) << 22) | (next(self._ids) & 0x3FFFFF))

    def add_channel(self, channel_id: int | str, *, kind: int = 0, name: str = "digests") -> dict[str, Any]:
        """A guild channel: kind 0 text, 5 announcement, 2 voice, 15 forum."""
        channel = {
            "id": str(channel_id),
            "type": kind,
            "guild_id": str(self.guild_id),
            "name": name,
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "rate_limit_per_user": 0,
        }
        if kind == 2:
            channel |= {"bitrate": 64000, "user_limit": 0}
        self.channels[str(channel_id)] = channel
        self.messages.setdefault(str(channel_id), [])
        return channel

    def messages_in(self, channel_id: int | str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.messages.get(str(channel_id), []))

    def threads(self) -> list[dict[str, Any]]:
        return [c for c in self.channels.values() if c["type"] in (10, 11, 12)]

    def attachments(self, channel_id: int | str) -> list[tuple[str, bytes]]:
        """(filename, content) of every file posted in a channel or thread, in order."""
        posted = [
            c for c in self.calls if c.route == "POST /channels/{channel_id}/messages" and c.status == 200
        ]
        return [f for c in posted if c.path.split("/")[2] == str(channel_id) for f in c.files]

    def add_user_message(
        self, channel_id: int | str, content: str, *, author_id: str = "42"
    ) -> dict[str, Any]:
        """A message by someone else (for history)."""
        message = self._message(str(channel_id), {"content": content}, [])
        message["author"] = {"id": author_id, "username": "someone", "discriminator": "0", "avatar": None}
        with self._lock:
            self.messages.setdefault(str(channel_id), []).append(message)
        return message

    # -- slash commands and gateway payloads ------------------------------------------------------------
    def interaction(
        self,
        options: dict[str, str] | None = None,
        *,
        channel_id: int | str | None = None,
        user_id: str = "42",
        late: bool = False,
    ) -> dict[str, Any]:
        """A `/digest` invocation: registered here, returned as the gateway's INTERACTION_CREATE data."""
        interaction_id = self.snowflake()
        token = f"itoken-{interaction_id}"
        self.interactions[interaction_id] = Interaction(interaction_id, token, late=late)
        channel = self.channels[str(channel_id or next(iter(self.channels)))]
        command_id = next((c["id"] for c in self.commands.get(str(self.guild_id), [])), self.snowflake())
        user = {"id": user_id, "username": "someone", "discriminator": "0", "avatar": None}
        return {
            "id": interaction_id,
            "application_id": str(self.application_id),
            "type": 2,
            "token": token,
            "version": 1,
            "guild_id": str(self.guild_id),
            "channel_id": channel["id"],
            "channel": {**channel, "guild_id": str(self.guild_id)},
            "member": {
                "user": user,
                "roles": [],
                "joined_at": _NOW,
                "deaf": False,
                "mute": False,
                "permissions": "2251799813685247",
                "flags": 0,
            },
            "app_permissions": "2251799813685247",
            "locale": "en-US",
            "guild_locale": "en-US",
            "entitlements": [],
            "attachment_size_limit": 10 * 1024 * 1024,
            "authorizing_integration_owners": {"0": str(self.guild_id)},
            "context": 0,
            "data": {
                "id": command_id,
                "name": "digest",
                "type": 1,
                "guild_id": str(self.guild_id),
                "options": [{"name": k, "type": 3, "value": v} for k, v in (options or {}).items()],
            },
        }

    def expire(self, interaction_id: str) -> None:
        """The interaction's token is past its 15 minutes: follow-ups now fail."""
        self.interactions[interaction_id].expired = True

    def guild_payload(self) -> dict[str, Any]:
        """GUILD_CREATE: the guild with its channels and active threads, as the gateway sends it."""
        channels = [{**c, "guild_id": str(self.guild_id)} for c in self.channels.values() if c["type"] != 11]
        threads = [c for c in self.channels.values() if c["type"] == 11]
        return {
            "id": str(self.guild_id),
            "name": "acme",
            "icon": None,
            "owner_id": "1",
            "region": "",
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "roles": [],
            "emojis": [],
            "features": [],
            "mfa_level": 0,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "public_updates_channel_id": None,
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "member_count": 2,
            "members": [],
            "channels": channels,
            "threads": threads,
            "stickers": [],
            "large": False,
            "unavailable": False,
        }

    def message_payload(
        self,
        channel_id: int | str,
        content: str,
        *,
        author_id: str = "42",
        bot: bool = False,
        mentions: tuple[dict[str, Any], ...] = (),
        reference: str | None = None,
    ) -> dict[str, Any]:
        """MESSAGE_CREATE for a message someone wrote (stored, so history and replies find it)."""
        message = self.add_user_message(channel_id, content, author_id=author_id)
        message["author"]["bot"] = bot
        message["mentions"] = list(mentions)
        message["guild_id"] = str(self.guild_id)
        message["member"] = {"roles": [], "joined_at": _NOW, "deaf": False, "mute": False, "flags": 0}
        if reference:
            message["type"] = 19
            message["message_reference"] = {"message_id": reference, "channel_id": str(channel_id)}
        return message

    def archive(self, thread_id: str, *, locked: bool = False) -> None:
        """The thread is archived (and locked): posting in it is refused (50083)."""
        meta = self.channels[str(thread_id)]["thread_metadata"]
        meta["archived"], meta["locked"] = True, locked

    def delete_channel(self, channel_id: str) -> None:
        with self._lock:
            self.channels.pop(str(channel_id), None)
            self.messages.pop(str(channel_id), None)

    # -- faults -----------------------------------------------------------------------------------
    def rate_limit(
        self, *, route: str | None = None, retry_after: float = 0.05, count: int = 1, global_: bool = False
    ) -> None:
        """The next `count` requests whose route ends with `route` answer 429 with retry_after (JSON body
        and headers)."""
        body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": global_}
        headers = {
            "Retry-After": str(max(1, round(retry_after))),  # the header is whole seconds; JSON is exact
            "X-RateLimit-Scope": "global" if global_ else "user",
        }
        if global_:
            headers["X-RateLimit-Global"] = "true"
        self._faults.append(Fault(429, body, headers, count, route))

    def fail_next(
        self, status: int, body: dict[str, Any], *, route: str | None = None, count: int = 1, after: int = 0
    ) -> None:
        """The next `count` requests matching route (after `after` successful ones) answer status/body."""
        self._faults.append(Fault(status, body, {}, count, route, after))

    def fail_after_accept(
        self,
        status: int = 500,
        *,
        route: str = "POST /channels/{channel_id}/messages",
        count: int = 1,
        after: int = 0,
    ) -> None:
        """The next `count` matching requests are carried out, then answered `status` (500: Discord's
        "Internal Server Error" body) instead of the result."""
        body = {"message": "500: Internal Server Error", "code": 0}
        self._faults.append(Fault(status, body, {}, count, route, after, accepted=True))

    def drop_after_accept(
        self, *, route: str = "POST /channels/{channel_id}/messages", count: int = 1, after: int = 0
    ) -> None:
        """The next `count` matching requests are carried out, then the connection is closed unanswered."""
        self._faults.append(Fault(0, {}, {}, count, route, after, accepted=True))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    # -- counters ---------------------------------------------------------------------------------
    def reset_counters(self) -> None:
        self.calls: list[Call] = []
        self.by_route: Counter[str] = Counter()
        self.rate_limited = 0
        self.rejected: list[tuple[str, dict[str, Any]]] = []
        self.edits: Counter[str] = Counter()  # message edits per message id

    @property
    def requests(self) -> int:
        return sum(self.by_route.values())

    def calls_to(self, route: str) -> list[Call]:
        return [c for c in self.calls if c.route == route]

    def allowed_mentions(self) -> list[Any]:
        """allowed_mentions of every message-creating request (None when a request had none)."""
        sends = [c for c in self.calls if c.method in ("POST", "PATCH") and c.route.endswith("/messages")]
        return [c.payload.get("allowed_mentions") if isinstance(c.payload, dict) else None for c in sends]

    # -- request handling -------------------------------------------------------------------------
    def _handle(self, request: Request) -> Response:
        if self.latency:
            time.sleep(self.latency)
        path = request.path.removeprefix(API_PREFIX)
        template, major = _id_template(path)
        route = f"{request.method} {template}"
        payload, files = self._body(request)
        if self.on_call is not None:
            self.on_call(route, payload)
        response = self._respond(request, path, route, major, payload, files)
        with self._lock:
            self.by_route[route] += 1
            self.calls.append(Call(request.method, path, route, response.status_code, payload, tuple(files)))
            if response.status_code == 429:
                self.rate_limited += 1
        response.headers["Via"] = "1.1 google"
        return response

    def _body(self, request: Request) -> tuple[Any, list[tuple[str, bytes]]]:
        if request.mimetype == "multipart/form-data":
            payload = json.loads(request.form.get("payload_json") or "{}")
            files = [(f.filename or "", f.read()) for _, f in sorted(request.files.items(multi=True))]
            return payload, files
        data = request.get_data()
        return (json.loads(data) if data else None), []

    def _respond(
        self,
        request: Request,
        path: str,
        route: str,
        major: str,
        payload: Any,
        files: list[tuple[str, bytes]],
    ) -> Response:
        if not request.path.startswith(API_PREFIX + "/"):
            return _json({"message": "404: Not Found", "code": 0}, 404)
        token_route = route.split(" ", 1)[1].startswith(("/interactions/", "/webhooks/"))
        if not token_route and request.headers.get("Authorization") != f"Bot {self.token}":
            return _json({"message": "401: Unauthorized", "code": 0}, 401)
        fault = self._take_fault(route)
        if fault is not None and not fault.accepted:
            return _json(fault.body, fault.status, fault.headers)
        bucket_key = f"{route}:{major}"
        allowed, remaining, reset_after = self._bucket(bucket_key).take(time.monotonic())
        headers = self._ratelimit_headers(route, remaining, reset_after)
        if not allowed:  # a client that ignored the headers: Discord answers 429
            body = {"message": "You are being rate limited.", "retry_after": reset_after, "global": False}
            return _json(body, 429, headers | {"Retry-After": str(max(1, round(reset_after)))})
        response = self._route(request, path, route, payload, files)
        response.headers.update(headers)
        if fault is not None:  # accepted: the work is done, the answer is lost
            return drop_connection(request) if fault.status == 0 else _json(fault.body, fault.status)
        return response

    def _bucket(self, key: str) -> _Bucket:
        with self._lock:
            if key not in self._buckets:
                self._buckets[key] = _Bucket(self.bucket_limit, self.bucket_per)
            return self._buckets[key]

    def _ratelimit_headers(self, route: str, remaining: int, reset_after: float) -> dict[str, str]:
        return {
            "X-RateLimit-Bucket": hashlib.sha1(route.encode()).hexdigest()[:16],
            "X-RateLimit-Limit": str(self.bucket_limit),
            "X-RateLimit-Remaining": str(remaining),
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
        }

    def _take_fault(self, route: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.route is None or route.endswith(fault.route):
                    if fault.after > 0:
                        fault.after -= 1
                        continue
                    fault.count -= 1
                    if fault.count <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _route(
        self, request: Request, path: str, route: str, payload: Any, files: list[tuple[str, bytes]]
    ) -> Response:
        parts = path.strip("/").split("/")
        if route == "GET /users/@me":
            return _json(self.user)
        if route == "GET /oauth2/applications/@me":
            return _json(self._application())
        if route.startswith("PUT /applications/{application_id}/"):
            return self._sync_commands(parts, payload)
        if parts[0] in ("interactions", "webhooks"):
            return self._interaction_route(route, parts, payload or {}, files)
        if parts[0] != "channels" or len(parts) < 2:
            return _json({"message": "404: Not Found", "code": 0}, 404)
        channel_id = parts[1]
        if channel_id not in self.channels:
            return _json({"message": "Unknown Channel", "code": 10003}, 404)
        if route == "GET /channels/{channel_id}":
            return _json(self.channels[channel_id])
        if route == "POST /channels/{channel_id}/typing":  # the "bot is typing…" indicator
            return Response(status=204)
        if route == "POST /channels/{channel_id}/messages":
            return self._create_message(channel_id, payload or {}, files)
        if route == "GET /channels/{channel_id}/messages":
            return self._history(
                channel_id,
                request.args.get("before"),
                int(request.args.get("limit", 50)),
                request.args.get("after"),
            )
        if route == "POST /channels/{channel_id}/messages/{message_id}/threads":
            return self._start_thread(channel_id, parts[3], payload or {})
        if route == "DELETE /channels/{channel_id}/messages/{message_id}":
            return self._delete_message(channel_id, parts[3])
        if route == "GET /channels/{channel_id}/messages/{message_id}":
            return self._get_message(channel_id, parts[3])
        if route == "PATCH /channels/{channel_id}/messages/{message_id}":
            return self._edit_message(channel_id, parts[3], payload or {})
        return _json({"message": "404: Not Found", "code": 0}, 404)

    # -- endpoints --------------------------------------------------------------------------------
    def _interaction_route(
        self, route: str, parts: list[str], payload: dict[str, Any], files: list[tuple[str, bytes]]
    ) -> Response:
        by_token = {i.token: i for i in self.interactions.values()}
        if parts[0] == "interactions":  # POST /interactions/{id}/{token}/callback
            found = self.interactions.get(parts[1])
            if found is None or found.late or found.token != parts[2]:
                return _json({"message": "Unknown interaction", "code": 10062}, 404)
            with self._lock:
                if found.callbacks:
                    return _json(
                        {"message": "Interaction has already been acknowledged.", "code": 40060}, 400
                    )
                found.callbacks.append(payload)
            data = payload.get("data") or {}
            ephemeral = bool(int(data.get("flags") or 0) & 64)
            body: dict[str, Any] = {
                "interaction": {
                    "id": found.id,
                    "type": 2,
                    "response_message_loading": payload.get("type") == 5,
                    "response_message_ephemeral": ephemeral,
                },
                "resource": {"type": payload.get("type")},
            }
            return _json(body)
        found = by_token.get(parts[2]) if len(parts) > 2 else None
        if found is None or found.expired or parts[1] != str(self.application_id):
            return _json({"message": "Unknown Webhook", "code": 10015}, 404)
        if route == "POST /webhooks/{webhook_id}/{token}":
            errors = self.validate_message(payload, files)
            if errors:
                return _json(errors if "code" in errors else _error(errors), 400)
            message = self._message(str(self.application_id), payload, files)
            message["flags"] = int(payload.get("flags") or 0)
            with self._lock:
                found.followups.append(message)
            return _json(message)
        if route == "DELETE /webhooks/{webhook_id}/{token}/messages/@original":
            found.deleted_original = True
            return Response(status=204)
        return _json({"message": "404: Not Found", "code": 0}, 404)

    def _application(self) -> dict[str, Any]:
        return {
            "id": str(self.application_id),
            "name": "digestbot",
            "description": "",
            "icon": None,
            "bot_public": False,
            "bot_require_code_grant": False,
            "owner": self.user,
            "verify_key": "0" * 64,
            "flags": 0,
        }

    def _sync_commands(self, parts: list[str], payload: Any) -> Response:
        scope = parts[3] if len(parts) > 3 and parts[2] == "guilds" else "global"
        synced = [
            {
                "id": self.snowflake(),
                "application_id": str(self.application_id),
                "version": "1",
                "type": 1,
                **command,
                **({"guild_id": scope} if scope != "global" else {}),
            }
            for command in payload or []
        ]
        with self._lock:
            self.commands[scope] = synced
        return _json(synced)

    def _create_message(
        self, channel_id: str, payload: dict[str, Any], files: list[tuple[str, bytes]]
    ) -> Response:
        meta = self.channels[channel_id].get("thread_metadata") or {}
        if meta.get("locked") or meta.get("archived"):
            return _json({"message": "Thread is archived", "code": 50083}, 400)
        reference = payload.get("message_reference") or {}
        known = {m["id"] for m in self.messages_in(channel_id)}
        wanted = str(reference.get("message_id") or "")
        if wanted and wanted not in known and reference.get("fail_if_not_exists", True):
            unknown = {"code": "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "message": "Unknown message"}
            return _json(_error({"message_reference": {"_errors": [unknown]}}), 400)
        errors = self.validate_message(payload, files)
        if errors:
            body = errors if "code" in errors else _error(errors)
            with self._lock:
                self.rejected.append((channel_id, body))
            status = 413 if body.get("code") == 40005 else 400
            return _json(body, status)
        nonce = str(payload["nonce"]) if payload.get("nonce") is not None else None
        now = time.monotonic()
        with self._lock:
            if nonce and payload.get("enforce_nonce"):
                seen = self._nonces.get((channel_id, nonce))
                if seen is not None and now - seen[0] < self.nonce_window:
                    return _json({**seen[1], "nonce": nonce})  # the first message, not a new one
        message = self._message(channel_id, payload, files)
        with self._lock:
            self.messages[channel_id].append(message)
            if nonce:
                self._nonces[(channel_id, nonce)] = (now, message)
        if self.on_accept is not None:
            self.on_accept(channel_id, message)
        # The nonce comes back in the answer to the send, never in the history (as on Discord).
        return _json({**message, "nonce": nonce} if nonce else message)

    def validate_message(self, payload: dict[str, Any], files: list[tuple[str, bytes]]) -> dict[str, Any]:
        """Discord's checks of a message body; {} when it is acceptable."""
        errors: dict[str, Any] = {}
        content = payload.get("content") or ""
        embeds = payload.get("embeds") or []
        if not content and not embeds and not files:
            return {"code": 50006, "message": "Cannot send an empty message"}
        if any(len(data) > self.max_file_bytes for _, data in files):
            return {"code": 40005, "message": "Request entity too large"}
        if len(content) > CONTENT_MAX:
            errors["content"] = _max_length(CONTENT_MAX)
        if len(embeds) > EMBEDS_MAX:
            errors["embeds"] = _max_length(EMBEDS_MAX)
        if len(files) > ATTACHMENTS_MAX:
            errors["files"] = _max_length(ATTACHMENTS_MAX)
        total = 0
        for i, embed in enumerate(embeds):
            total += self._check_embed(errors, str(i), embed)
        if total > EMBED_TOTAL_MAX:
            too_big = {
                "code": "MAX_EMBED_SIZE_EXCEEDED",
                "message": "Embed size exceeds maximum size of 6000",
            }
            _nest(errors, ["embeds", "_errors"], [too_big])
        return errors

    def _check_embed(self, errors: dict[str, Any], i: str, embed: dict[str, Any]) -> int:
        size = 0
        for key, limit in _EMBED_LIMITS.items():
            text = embed.get(key)
            if text is not None:
                size += len(text)
                if len(text) > limit:
                    _nest(errors, ["embeds", i, key], _max_length(limit))
        for key, limit in (("footer", 2048), ("author", 256)):
            text = (embed.get(key) or {}).get("text" if key == "footer" else "name")
            if text is not None:
                size += len(text)
                if len(text) > limit:
                    _nest(errors, ["embeds", i, key], _max_length(limit))
        fields = embed.get("fields") or []
        if len(fields) > FIELDS_MAX:
            _nest(errors, ["embeds", i, "fields"], _max_length(FIELDS_MAX))
        for j, f in enumerate(fields):
            for key, limit in _FIELD_LIMITS.items():
                text = f.get(key) or ""
                size += len(text)
                if not text.strip():
                    _nest(errors, ["embeds", i, "fields", str(j), key], _required())
                elif len(text) > limit:
                    _nest(errors, ["embeds", i, "fields", str(j), key], _max_length(limit))
        return size

    def _message(
        self, channel_id: str, payload: dict[str, Any], files: list[tuple[str, bytes]]
    ) -> dict[str, Any]:
        message_id = self.snowflake()
        message: dict[str, Any] = {
            "id": message_id,
            "channel_id": channel_id,
            "type": 19 if payload.get("message_reference") else 0,
            "content": payload.get("content") or "",
            "embeds": [{"type": "rich", **e} for e in payload.get("embeds") or []],
            "attachments": [
                {
                    "id": self.snowflake(),
                    "filename": name,
                    "size": len(data),
                    "url": f"https://cdn.example.invalid/attachments/{channel_id}/{message_id}/{name}",
                    "proxy_url": f"https://media.example.invalid/{message_id}/{name}",
                    "content_type": "text/markdown; charset=utf-8",
                }
                for name, data in files
            ],
            "author": self.user,
            "timestamp": datetime.now(UTC).isoformat(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "pinned": False,
            "flags": 0,
            "components": [],
            "allowed_mentions": payload.get("allowed_mentions"),  # not Discord's: kept for assertions
        }
        if payload.get("message_reference"):
            message["message_reference"] = payload["message_reference"]
        return message

    def _history(self, channel_id: str, before: str | None, limit: int, after: str | None = None) -> Response:
        """Newest first, as Discord answers; at most 100; `after` gives the oldest ones after it."""
        limit = max(1, min(limit, 100))
        found = [
            m
            for m in self.messages_in(channel_id)
            if (before is None or int(m["id"]) < int(before)) and (after is None or int(m["id"]) > int(after))
        ]
        if after is not None and before is None:
            return _json(list(reversed(found[:limit])))
        return _json(list(reversed(found))[:limit])

    def _start_thread(self, channel_id: str, message_id: str, payload: dict[str, Any]) -> Response:
        parent = next((m for m in self.messages_in(channel_id) if m["id"] == message_id), None)
        if parent is None:
            return _json({"message": "Unknown Message", "code": 10008}, 404)
        if self.channels[channel_id]["type"] not in (0, 5):
            return _json({"message": "Cannot execute action on this channel type", "code": 50024}, 400)
        if message_id in self.channels:
            return _json(
                {"message": "A thread has already been created for this message", "code": 160004}, 400
            )
        name = payload.get("name") or ""
        if not name or len(name) > THREAD_NAME_MAX:
            return _json(_error({"name": _max_length(THREAD_NAME_MAX)}), 400)
        thread = self.add_thread(channel_id, message_id, name, self.user["id"], payload)
        return _json(thread, 201)

    def add_thread(
        self,
        channel_id: str,
        message_id: str,
        name: str = "talk",
        owner_id: str = "42",
        payload: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A public thread started from a message of the channel (by someone, from the client's menu)."""
        payload = payload or {}
        thread = {
            "id": message_id,  # a thread started from a message shares its id
            "type": 11,
            "guild_id": str(self.guild_id),
            "parent_id": channel_id,
            "owner_id": owner_id,
            "name": name,
            "rate_limit_per_user": payload.get("rate_limit_per_user") or 0,
            "message_count": 0,
            "member_count": 1,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": payload.get("auto_archive_duration") or 1440,
                "archive_timestamp": datetime.now(UTC).isoformat(),
                "locked": False,
            },
        }
        with self._lock:
            self.channels[message_id] = thread
            self.messages[message_id] = []
        return thread

    def _delete_message(self, channel_id: str, message_id: str) -> Response:
        with self._lock:
            before = len(self.messages[channel_id])
            self.messages[channel_id] = [m for m in self.messages[channel_id] if m["id"] != message_id]
            if len(self.messages[channel_id]) == before:
                return _json({"message": "Unknown Message", "code": 10008}, 404)
        return Response(status=204)

    def _get_message(self, channel_id: str, message_id: str) -> Response:
        found = next((m for m in self.messages_in(channel_id) if m["id"] == message_id), None)
        return _json(found) if found else _json({"message": "Unknown Message", "code": 10008}, 404)

    def _edit_message(self, channel_id: str, message_id: str, payload: dict[str, Any]) -> Response:
        """Edits the fields given (content, embeds), as Discord does; `edits` counts them per message."""
        with self._lock:
            found = next((m for m in self.messages.get(channel_id, []) if m["id"] == message_id), None)
        if found is None:
            return _json({"message": "Unknown Message", "code": 10008}, 404)
        if found["author"]["id"] != self.user["id"]:
            return _json({"message": "Cannot edit a message authored by another user", "code": 50005}, 403)
        merged = {"content": found["content"], "embeds": found["embeds"], **payload}
        errors = self.validate_message(merged, [])
        if errors:
            return _json(errors if "code" in errors else _error(errors), 400)
        with self._lock:
            if "content" in payload:
                found["content"] = payload["content"] or ""
            if "embeds" in payload:
                found["embeds"] = [{"type": "rich", **e} for e in payload["embeds"] or []]
            found["edited_timestamp"] = datetime.now(UTC).isoformat()
            self.edits[message_id] += 1
        return _json(found)


_NOW = "2026-01-27T00:00:00+00:00"


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(data), status=status, headers=headers or {}, content_type="application/json")
