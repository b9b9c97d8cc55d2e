"""What we say to a language model and how we check what it says back, without calling one: the
prompts (`prompts`), the diff it sees within a token budget (`budget`, `tokens`), the reply's shape as
strict JSON schemas and its lenient reading (`schemas`), and the checks after generation — only what
the commit holds may be cited (`grounding`), our own instructions repeated are removed (`echo`).
The client that talks to the server is adapters/llm/; the analyser that drives it is bot/digest."""
