"""The OpenAI Batch API: many calls as one JSONL upload, polled until done or the deadline, the output file
read back into replies (half the price on OpenAI); what does not come back is sent live by the caller."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from contextlib import suppress

import openai
from openai.types.chat import ChatCompletion

from adapters.llm.retries import Retry
from adapters.llm.server_messages import one_line
from bot.ports.protocols import BatchRequest, ChatReply

# The package's one logger: its lines are named "adapters.llm", as they were before the client was split.
log = logging.getLogger(__package__)


class BatchCalls:
    """LLMClient's Batch API calls (they build requests and read replies as its live calls do)."""

    model: str
    timeout: float
    _client: openai.AsyncOpenAI

    async def batch(
        self,
        requests: Sequence[BatchRequest],
        *,
        deadline: float,
        poll: float = 10.0,
        prompt_version: str = "",
    ) -> dict[str, ChatReply]:
        """Many calls through the OpenAI Batch API (a JSONL upload to /v1/files, /v1/batches, polled,
        the output file read back; half the price on OpenAI). Returns the replies that came back by
        `deadline` seconds, by custom_id; the caller sends the rest live. A batch still running at the
        deadline is cancelled. Never raises for the batch's own failure: it returns what it has."""
        if not requests:
            return {}
        began = time.monotonic()
        lines = []
        for r in requests:
            params = self._params(r.messages, r.response_model, r.max_tokens, 0.2)
            lines.append(
                json.dumps(
                    {
                        "custom_id": r.custom_id,
                        "method": "POST",
                        "url": "/v1/chat/completions",
                        "body": params,
                    },
                    ensure_ascii=False,
                )
            )
        job = None
        # Each request within LLM_TIMEOUT (the SDK's timeout is per read: an answer trickling in would
        # otherwise hold the day); the wait as a whole is the loop's, up to `deadline`. A batch that
        # finished near the deadline still gets a whole LLM_TIMEOUT to hand over its results.
        try:
            upload = await self._bounded(
                self._client.files.create(
                    file=("digest-batch.jsonl", ("\n".join(lines) + "\n").encode("utf-8")), purpose="batch"
                )
            )
            job = await self._bounded(
                self._client.batches.create(
                    input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
                )
            )
            while job.status not in ("completed", "failed", "expired", "cancelled"):
                if time.monotonic() - began + poll > deadline:
                    log.warning(
                        "LLM batch %s not done after %gs: cancelled, the calls go live",
                        job.id,
                        deadline,
                    )
                    await self._cancel_batch(job.id)
                    return {}
                await self._sleep(poll)
                with suppress(TimeoutError):  # a poll with no answer in time: the next one, or the deadline
                    job = await self._bounded(self._client.batches.retrieve(job.id))
            if job.status != "completed" or not job.output_file_id:
                log.warning("LLM batch %s ended %s: the calls go live", job.id, job.status)
                return {}
            content = await self._bounded(self._client.files.content(job.output_file_id))
        except (openai.APIError, ValueError) as exc:
            log.warning("LLM batch failed (%s): the calls go live", one_line(exc, scrub=self._scrub))
            return {}
        except TimeoutError:
            if job is not None and job.status == "completed":  # done and paid for: nothing to cancel
                log.warning(
                    "LLM batch %s: its results did not download within %gs: the calls go live",
                    job.id,
                    self.timeout,
                )
                return {}
            log.warning("LLM batch: no answer within %.0fs: the calls go live", self.timeout)
            if job is not None:
                await self._cancel_batch(job.id)
            return {}
        by_id = {r.custom_id: r for r in requests}
        replies: dict[str, ChatReply] = {}
        for line in content.text.splitlines():
            reply = self._batch_reply(line, by_id, began, prompt_version)
            if reply is not None:
                replies[reply[0]] = reply[1]
        return replies

    async def _cancel_batch(self, batch_id: str) -> None:
        """Cancel a batch whose results will not be used (they would be paid for twice), best effort."""
        try:
            await self._bounded(self._client.batches.cancel(batch_id))
        except (openai.APIError, TimeoutError) as exc:
            reason = one_line(exc, scrub=self._scrub) or "no answer in time"
            log.warning("LLM batch %s could not be cancelled: %s", batch_id, reason)

    def _batch_reply(
        self, line: str, by_id: dict[str, BatchRequest], began: float, prompt_version: str
    ) -> tuple[str, ChatReply] | None:
        try:
            item = json.loads(line)
        except ValueError:
            return None
        request = by_id.get(item.get("custom_id")) if isinstance(item, dict) else None
        if request is None:
            return None
        response = item.get("response") or {}
        if response.get("status_code") != 200:
            return None
        record = {"model": self.model, "prompt_version": prompt_version, "purpose": f"{request.purpose}-batch",
                  "repo": request.repo, "sha": request.sha}  # fmt: skip
        try:
            completion = ChatCompletion.model_validate(response.get("body") or {})
            return request.custom_id, self._reply(completion, request.messages, record, began)
        except (ValueError, Retry):
            return None
