"""A day's commits in, a complete digest out: fetch through a source (`sources`), fill each commit's
surface facts (`surface`) and history (`history`), analyse what the cache lacks with the heuristic or
the LLM (`analyzers`, `llm_analyzer`, `usage`), attach the day's follow-ups (`radar`) and record the
digest (`pipeline`). The weekly roll-up (`weekly`) and `digestbot eval` (`evaluate`) are built from the
same days. Nothing here posts: that is bot/delivery."""
