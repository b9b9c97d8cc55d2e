"""`digestbot run` and what watches it: the long-running process that starts the chat runtimes and
builds and posts each subscription's digest (`runner`), the daily and weekly schedule with its catch-up
(`scheduler`), `digestbot status` (`status`) and the purge of stored prompts (`retention`)."""
