"""The report languages: a module of their own, so the CLI's options name them without loading the
models and labels (`digestbot --help` imports no pydantic)."""

LANGS = ("zh", "en")
