"""The SQLite database every process shares: the store's API (`db`), its schema as numbered migrations
(`migrations`), whether an opened file is usable (`health`) and the LLM call log `digestbot logs`
reads (`llm_calls`)."""
