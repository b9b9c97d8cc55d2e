"""The store's commit tables: commits and their files, analyses, surface facts (a mixin of
bot/store/db.Store)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING, Any

from analysis.models import Analysis, Commit, SurfaceChange, SurfaceKind
from bot.store.rows import commit_from_row, insert_sql, iso, json_paths, paths_from_json, surface_row, utcnow

_UPSERT_ANALYSIS = insert_sql(
    "analyses",
    (
        "repo",
        "sha",
        "model",
        "prompt_version",
        "lang",
        "importance",
        "change_type",
        "analyzer",
        "data",
        "created_at",
    ),
    key=("repo", "sha", "model", "prompt_version", "lang"),
)
_COMMIT_COLUMNS = (
    "repo", "sha", "message", "author", "author_login", "committed_at", "parents", "url", "additions", "deletions",
    "files_total", "fetched_at",
)  # fmt: skip
_UPSERT_COMMIT = insert_sql("commits", _COMMIT_COLUMNS, key=("repo", "sha"))
_INSERT_FILE = insert_sql(
    "files", ("repo", "sha", "idx", "path", "status", "additions", "deletions", "patch", "previous_path")
)
_SURFACE_COLUMNS = ("repo", "sha", "version", "surface", "shipped", "prose", "created_at")
_UPSERT_SURFACE = insert_sql("surfaces", _SURFACE_COLUMNS, key=("repo", "sha", "version"))
_UPSERT_DOC_MENTIONS = insert_sql("doc_mentions", ("blob", "words", "chars"), key=("blob",))

if TYPE_CHECKING:
    import sqlite_utils

    from bot.store.group import GroupCommit


class CommitTables:
    """Reads and writes of commits, files, analyses and surfaces, over Store's connection and transactions."""

    db: sqlite_utils.Database
    _lock: threading.RLock
    _group: GroupCommit

    # -- commits ------------------------------------------------------------------------------
    def save_commits(self, commits: Iterable[Commit]) -> None:
        """Several commits in one transaction (a day's, a replayed chunk's): one commit to disk, not one each."""
        with self.transaction():
            for commit in commits:
                self.save_commit(commit)

    def save_commit(self, commit: Commit) -> None:
        # Three statements, not sqlite-utils' upsert and insert_all (a dozen or more, each giving the GIL up and
        # waiting for it again): eval stores a span's thousands of commits beside the parsing workers.
        with self.transaction():
            self.db.execute(
                _UPSERT_COMMIT,
                (
                    commit.repo,
                    commit.sha,
                    commit.message,
                    commit.author,
                    commit.author_login,
                    iso(commit.committed_at),
                    json.dumps(list(commit.parents)),
                    commit.url,
                    commit.additions,
                    commit.deletions,
                    commit.files_total,
                    iso(utcnow()),
                ),
            )
            self.db.execute("DELETE FROM files WHERE repo = ? AND sha = ?", (commit.repo, commit.sha))
            self.db.conn.executemany(
                _INSERT_FILE,
                [
                    (
                        commit.repo,
                        commit.sha,
                        i,
                        f.path,
                        f.status,
                        f.additions,
                        f.deletions,
                        f.patch,
                        f.previous_path,
                    )
                    for i, f in enumerate(commit.files)
                ],
            )

    def get_commit(self, repo: str, sha: str) -> Commit | None:
        with self._lock:
            rows = list(self.db.query("SELECT * FROM commits WHERE repo = ? AND sha = ?", [repo, sha]))
            if not rows:
                return None
            files = self.db.query("SELECT * FROM files WHERE repo = ? AND sha = ? ORDER BY idx", [repo, sha])
            return commit_from_row(rows[0], files)

    def get_commits(self, repo: str, shas: Iterable[str]) -> dict[str, Commit]:
        """The stored commits among `shas`, by sha: two queries however many (eval reads months)."""
        wanted = json.dumps(list(shas))
        with self._lock:
            rows = list(
                self.db.query(
                    "SELECT * FROM commits WHERE repo = ? AND sha IN (SELECT value FROM json_each(?))",
                    [repo, wanted],
                )
            )
            files: dict[str, list[dict[str, Any]]] = {}
            for f in self.db.query(
                "SELECT * FROM files WHERE repo = ? AND sha IN (SELECT value FROM json_each(?))"
                " ORDER BY sha, idx",
                [repo, wanted],
            ):
                files.setdefault(f["sha"], []).append(f)
        return {r["sha"]: commit_from_row(r, files.get(r["sha"], ())) for r in rows}

    def stored_shas(self, repo: str, shas: Iterable[str]) -> set[str]:
        wanted = list(shas)
        with self._lock:
            return {
                r["sha"]
                for r in self.db.query(
                    "SELECT sha FROM commits WHERE repo = ? AND sha IN (SELECT value FROM json_each(?))",
                    [repo, json.dumps(wanted)],
                )
            }

    def find_shas(self, repo: str, prefix: str) -> list[str]:
        """Stored SHAs of repo starting with prefix (for short-SHA lookups)."""
        with self._lock:
            return [
                r["sha"]
                for r in self.db.query(
                    "SELECT sha FROM commits WHERE repo = ? AND sha LIKE ? ORDER BY sha",
                    [repo, prefix.lower() + "%"],
                )
            ]

    # -- analyses -----------------------------------------------------------------------------
    def get_analysis(
        self, repo: str, sha: str, model: str, prompt_version: str, lang: str
    ) -> Analysis | None:
        self.settle()
        with self._lock:
            rows = list(
                self.db.query(
                    "SELECT data FROM analyses WHERE repo = ? AND sha = ? AND model = ? AND prompt_version = ?"
                    " AND lang = ?",
                    [repo, sha, model, prompt_version, lang],
                )
            )
        return Analysis.model_validate_json(rows[0]["data"]) if rows else None

    def latest_analysis(self, repo: str, sha: str, lang: str | None = None) -> Analysis | None:
        """The newest stored analysis of a commit, whatever produced it (for thread questions)."""
        sql = "SELECT data FROM analyses WHERE repo = ? AND sha = ?"
        params: list[Any] = [repo, sha]
        if lang:
            sql += " AND lang = ?"
            params.append(lang)
        self.settle()
        with self._lock:
            rows = list(
                self.db.query(sql + " ORDER BY analyzer = 'llm' DESC, created_at DESC LIMIT 1", params)
            )
        return Analysis.model_validate_json(rows[0]["data"]) if rows else None

    def save_analysis(self, repo: str, analysis: Analysis, model: str, prompt_version: str) -> None:
        self.save_analyses(repo, [analysis], model, prompt_version)

    def save_analysis_soon(
        self, repo: str, analysis: Analysis, model: str, prompt_version: str
    ) -> Future[None]:
        """save_analysis in the store's writer thread, in one transaction with whatever else is handed
        over meanwhile (group commit); the future is done once it is committed."""
        return self._group.submit(partial(self._upsert_analysis, repo, analysis, model, prompt_version))

    def save_analyses(self, repo: str, analyses: Iterable[Analysis], model: str, prompt_version: str) -> None:
        """Several analyses in one transaction (a replayed day's: one commit to disk, not one each)."""
        with self.transaction():
            for analysis in analyses:
                self._upsert_analysis(repo, analysis, model, prompt_version)

    def _upsert_analysis(self, repo: str, analysis: Analysis, model: str, prompt_version: str) -> None:
        if analysis.grounding_removed:
            self._note_grounding(repo, analysis, prompt_version)
        # One statement, not sqlite-utils' upsert (six or more, each giving the GIL up and waiting for it again
        # while a day's answers are handled: the LLM day's last writes ended its run).
        self.db.execute(
            _UPSERT_ANALYSIS,
            [
                repo,
                analysis.sha,
                model,
                prompt_version,
                analysis.lang,
                analysis.importance.value,
                analysis.change_type.value,
                analysis.analyzer,
                analysis.model_dump_json(),
                iso(utcnow()),
            ],
        )

    def _note_grounding(self, repo: str, analysis: Analysis, prompt_version: str) -> None:
        """What the fact-check removed goes on the commit's newest LLM call (its `error` column): kept
        for whoever audits the model, never shown to readers."""
        note = "grounding removed: " + ", ".join(analysis.grounding_removed)
        self.db.execute(
            "UPDATE llm_calls SET error = CASE WHEN coalesce(error, '') = '' THEN ? ELSE error || '; ' || ? END"
            " WHERE id = (SELECT max(id) FROM llm_calls WHERE repo = ? AND sha = ? AND prompt_version = ?)",
            [note, note, repo, analysis.sha, prompt_version],
        )

    # -- surface facts ------------------------------------------------------------------------------
    def save_surfaces(
        self,
        repo: str,
        version: str,
        found: Mapping[str, tuple[tuple[SurfaceChange, ...], frozenset[str] | None, frozenset[str] | None]],
    ) -> None:
        # One statement per row, not sqlite-utils' upsert_all (its per-value conversions and statements for each
        # chunk): eval stores a span's thousands of facts beside the parsing workers.
        now = iso(utcnow())
        rows = [
            (
                repo,
                sha,
                version,
                json.dumps([surface_row(c) for c in surface], ensure_ascii=False),
                json_paths(shipped),
                json_paths(prose),
                now,
            )
            for sha, (surface, shipped, prose) in found.items()
        ]
        if rows:
            with self.transaction():
                self.db.conn.executemany(_UPSERT_SURFACE, rows)

    def surfaces(
        self, repo: str, shas: Iterable[str], version: str
    ) -> dict[str, tuple[tuple[SurfaceChange, ...], frozenset[str] | None, frozenset[str] | None]]:
        """The stored facts of these commits by this parser version (commits never read are absent):
        (surface, shipped paths, prose files)."""
        with self._lock:
            rows = list(
                self.db.query(
                    "SELECT sha, surface, shipped, prose FROM surfaces WHERE repo = ? AND version = ?"
                    " AND sha IN (SELECT value FROM json_each(?))",
                    [repo, version, json.dumps(list(shas))],
                )
            )
        out = {}
        for r in rows:
            try:
                surface = tuple(
                    SurfaceChange(**{**c, "kind": SurfaceKind(c["kind"])}) for c in json.loads(r["surface"])
                )
            except (TypeError, ValueError, KeyError):
                continue  # damaged or from another version of the shape: read again
            out[r["sha"]] = (surface, paths_from_json(r["shipped"]), paths_from_json(r["prose"]))
        return out

    # -- documentation mentions ---------------------------------------------------------------------
    def doc_mentions(self, blobs: Iterable[str]) -> dict[str, tuple[frozenset[str], int]]:
        """What each documentation blob mentions and its length, for the blobs known."""
        with self._lock:
            rows = self.db.query(
                "SELECT blob, words, chars FROM doc_mentions WHERE blob IN (SELECT value FROM json_each(?))",
                [json.dumps(list(blobs))],
            )
            return {r["blob"]: (frozenset(r["words"].split()), r["chars"]) for r in rows}

    def save_doc_mentions(self, found: Mapping[str, tuple[frozenset[str], int]]) -> None:
        rows = [(b, " ".join(sorted(w)), n) for b, (w, n) in found.items()]
        if rows:
            with self.transaction():
                self.db.conn.executemany(_UPSERT_DOC_MENTIONS, rows)
