"""The analysers a run can choose (`--analyzer`): a module of its own, so the CLI's options name them
without importing the analysers (`digestbot --help` stays light)."""

ANALYZER_CHOICES = ("auto", "heuristic", "llm")
