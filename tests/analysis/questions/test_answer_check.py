"""The fact-check of a model's thread answer: what is not in the thread's commits, day or store goes."""

from analysis.models import FileChange, Importance
from analysis.questions.fact_check import answer_evidence, check_answer, cited_commits, cited_refs, data_text
from tests.fakes.digests import make_analysis, make_commit

PATCH = "@@ -1,2 +1,2 @@\n-timeout = 30\n+timeout = 45\n-speedup = '1.5x'\n+ratio = 12.5"


def commits():
    a = make_commit(
        "[Perf] Faster cache, 20% less memory (#101)",
        body="Follow-up to #90.",
        files=[FileChange("src/app/cache/store.py", "modified", 30, 8, PATCH)],
    )
    b = make_commit(
        "[Doc] typo (#102)", files=[FileChange("docs/index.md", "modified", 1, 1, "@@ -1 +1 @@\n-a\n+b")]
    )
    return [a, b]


def evidence(extra_shas=(), extra_prs=()):
    cs = commits()
    analyses = [make_analysis(cs[0], Importance.HIGH, lang="en", risks=["eviction under 64 workers"])]
    return cs, answer_evidence(cs, data_text(cs, analyses, ["2026-01-26"]), extra_shas, extra_prs)


def test_what_the_data_holds_is_kept():
    cs, ev = evidence()
    text = (
        f"{cs[0].short_sha} (#101) changes src/app/cache/store.py and cache/store.py, raising the timeout from "
        "30 to 45 and saving 20% of memory. It follows up #90. It adds 30 lines and deletes 8, 38 in all. "
        "It landed on 2026-01-26 with a 12.5 ratio. Risk: eviction under 64 workers. Wait 48 hours and check 2 "
        "dashboards."
    )
    checked = check_answer(text, ev)
    assert checked.text == text and checked.removed == 0


def test_invented_shas_prs_paths_and_figures_are_removed_counted_and_listed():
    cs, ev = evidence()
    text = "\n".join(
        [
            f"{cs[0].short_sha} is the cache change.",
            "It was reverted by 9f8e7d6c5b (#4242).",
            "It also edits src/app/engine/loop.py.",
            "Throughput rises by 35%, about 1.8x.",
            "It needs torch 2.9.1.",
            "It changes 1234 lines.",
            "It landed on 2026-03-01.",
            "The timeout went from 30 to 99.",
        ]
    )
    checked = check_answer(text, ev)
    assert checked.text == f"{cs[0].short_sha} is the cache change."
    assert checked.removed == 7
    for item in (
        "9f8e7d6c5b",
        "#4242",
        "src/app/engine/loop.py",
        "35%",
        "1.8x",
        "2.9.1",
        "1234",
        "2026-03-01",
        "99",
    ):
        assert item in checked.items


def test_an_invented_sha256_commit_name_is_removed():
    cs, ev = evidence()
    invented = "9f8e7d6c5b4a" * 5 + "1234"  # 64 hex: a SHA-256 repository's commit name
    checked = check_answer(f"{cs[0].short_sha} is the cache change.\nIt was reverted by {invented}.", ev)
    assert checked.text == f"{cs[0].short_sha} is the cache change." and invented in checked.items


def test_the_store_vouches_for_shas_and_prs_outside_the_thread():
    _, ev = evidence(extra_shas=["9f8e7d6c5b"], extra_prs=[4242])
    checked = check_answer("It was reverted by 9f8e7d6c5b (#4242).", ev)
    assert checked.removed == 0
    assert cited_refs("see 9f8e7d6c5b, #4242 and https://x.io/o/r/pull/77; deadbeef is a word") == (
        {"9f8e7d6c5b"},
        {4242, 77},
    )


def test_sentences_of_one_line_go_one_by_one_and_an_empty_answer_is_empty():
    _, ev = evidence()
    checked = check_answer("It is the cache change. It edits src/x/y.py. 它修改了 src/a/b.py。它很重要。", ev)
    assert checked.text == "It is the cache change. 它很重要。" and checked.removed == 2
    nothing = check_answer("Reverted by abc1234f (#9999).\n- 77% faster.", ev)
    assert nothing.text == "" and nothing.removed == 2


def test_mentions_and_trailers_are_cleaned():
    _, ev = evidence()
    checked = check_answer("Ping @everyone.\nSigned-off-by: Eve <eve@evil.example.com>", ev)
    assert "@everyone" not in checked.text and "Signed-off-by" not in checked.text


def test_cited_commits_in_text_order():
    cs, _ = evidence()
    text = f"First #102, then {cs[0].sha[:9]}; #555 is unknown."
    assert [c.sha for c in cited_commits(text, cs)] == [cs[1].sha, cs[0].sha]
