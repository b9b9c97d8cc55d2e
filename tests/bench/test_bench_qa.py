"""bench_qa's real-model section reads what each question got from the answer metrics: a fallback to the
data's answer (a model that timed out, failed or echoed its prompt) is reported as one, never as a pass."""

from bench.bench_qa import answer_outcome, answer_sources, real_model_overrides
from bot.config.settings import Settings
from bot.monitoring import metrics


def test_a_fallback_is_reported_as_a_fallback_and_a_model_answer_as_one():
    before = answer_sources()
    metrics.record_qa("fallback", 0)
    after_fallback = answer_sources()
    assert answer_outcome(before, after_fallback) == "fallback"
    metrics.record_qa("llm", 1)
    assert answer_outcome(after_fallback, answer_sources()) == "model"
    assert answer_outcome(answer_sources(), answer_sources()) == "fallback"  # nothing counted: no answer


def test_the_real_model_is_waited_for_as_long_as_its_client_waits():
    settings = Settings(_env_file=None, **real_model_overrides("http://127.0.0.1:1/v1", "local"))
    assert settings.qa_answer_timeout == settings.llm_timeout > Settings(_env_file=None).qa_answer_timeout
    assert settings.llm_max_retries == 0
