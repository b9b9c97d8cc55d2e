import time

from analysis.llm.tokens import MESSAGE_OVERHEAD, estimate_messages, estimate_tokens

CODE = """@@ -416,13 +416,12 @@ class GPUModelRunner(LoRAModelRunnerMixin):
     def finish_requests(self, scheduler_output: SchedulerOutput) -> None:
-        if scheduler_output.preempted_req_ids is not None:
+        for req_id in scheduler_output.finished_req_ids or ():
+            self.requests.pop(req_id, None)
         torch.cuda.synchronize()
"""
ZH = "这个提交修复了调度器在高并发情况下的内存泄漏问题，并且增加了单元测试。"


def test_empty_and_tiny():
    assert estimate_tokens("") == 0
    assert estimate_tokens(" ") >= 1
    assert estimate_tokens("a") >= 1


def test_monotonic_when_text_grows():
    samples = [
        CODE,
        ZH,
        "MODEL_ARCH_CONFIG_CONVERTORS",
        "| `Qwen3VL` | ✅︎ | ✅︎ |",
        "v0.3.0 1.5× 30%",
        "😀 emoji",
    ]
    for text in samples:
        previous = 0
        for end in range(1, len(text) + 1):
            current = estimate_tokens(text[:end])
            assert current >= previous, (text[:end], current, previous)
            previous = current
    assert estimate_tokens(CODE * 10) >= 9 * estimate_tokens(CODE)


def test_code_is_at_least_one_token_per_four_chars():
    # Real BPE tokenizers spend about one token per 3-4 characters of diff text.
    assert estimate_tokens(CODE) >= len(CODE) / 4


def test_cjk_counts_about_one_token_per_character():
    cjk = sum(1 for ch in ZH if "\u4e00" <= ch <= "\u9fff")
    assert cjk <= estimate_tokens(ZH) <= 2 * len(ZH)


def test_symbols_and_emoji_cost_more_than_latin_letters():
    assert estimate_tokens("✅" * 10) > estimate_tokens("a" * 10)
    assert estimate_tokens("😀" * 10) >= 20


def test_fast_on_a_megabyte():
    text = (CODE + ZH) * (1_000_000 // len(CODE + ZH))
    start = time.perf_counter()
    n = estimate_tokens(text)
    assert time.perf_counter() - start < 1.0
    assert n > 250_000


def test_messages_add_overhead_and_read_content_parts():
    msgs = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": CODE}]
    base = estimate_tokens("You are terse.") + estimate_tokens(CODE)
    assert estimate_messages(msgs) >= base + 2 * MESSAGE_OVERHEAD
    parts = [{"role": "user", "content": [{"type": "text", "text": CODE}]}]
    assert estimate_messages(parts) >= estimate_tokens(CODE) + MESSAGE_OVERHEAD
    assert estimate_messages([{"role": "assistant", "content": None}]) > 0
