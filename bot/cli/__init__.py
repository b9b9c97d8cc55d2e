"""The `digestbot` command line (click). `main` holds the group and registers the verbs; each verb
lives in a module of its own (`digest` for digest and analyze, `post`, `run` for run and status, `logs`,
`weekly`, `evaluate` for eval), all sharing `common` (the one-line error contract, the context, the
options); `output` decides where a verb writes, never over a user's file or the store's own; `exit`
ends the process once the verb is done. A verb parses, asks the composition root (bot/app.py) for what
it needs, and prints."""
