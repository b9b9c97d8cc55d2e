"""The application: what digestbot does with the domain (analysis/) and the outside world (adapters/).

Each capability is a package: `digest` (a day's commits to a complete, ranked digest, and the weekly
roll-up and `eval` built on it), `delivery` (posting into a chat channel once, and the work that must
happen at least once), `chat` (`/digest` and thread questions, for every platform), `service` (the
long-running `digestbot run`: scheduler, runner, status), `config` (settings from the environment,
the TOML file, subscriptions and their schedules), `store` (SQLite and its migrations), `monitoring`
(logs with secrets masked, Prometheus metrics, guarded listeners) and `cli` (the `digestbot` command).
`healthcheck` and `json_schema` are entry points of their own (`python -m bot.…`).
"""
