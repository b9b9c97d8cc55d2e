"""Putting what bot/digest built in front of people, exactly once: a digest posted as parent, cards,
medium list and report with every item recorded (`posting`), one poster per job across processes
(`leases`), work that must happen at least once and never twice — banners, notices, roll-ups —
retried until done (`outbox`, `banners`), the weekly roll-up's post (`weekly_post`) and
`post --dry-run`'s preview (`dry_run`). Platform-neutral: the chat adapters implement the posters."""
