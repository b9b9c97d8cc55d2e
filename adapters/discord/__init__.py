"""Discord, through discord.py 2.x, split by role: settings, login, the request bound and error wording
(`client`), the digest poster (`poster`) with how a restart recognises what it already sent
(`reconcile`), the `/digest` slash command and thread questions (`handlers`), and the runtime inside
`digestbot run` (`runtime`).

Everything Discord-independent (parsing, analysis, idempotency records, answers) comes from the
application through bot/ports; this package only translates. Every message goes out with
AllowedMentions.none(): commit text never pings. Nothing here imports the Slack adapter.
"""
