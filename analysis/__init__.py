"""The domain, pure: data in, data out. No SDK, no network, no disk.

At the top, the vocabulary every layer shares: `models` (commits, analyses, digests), `errors`,
`labels` (every fixed word of our output), `text` (untrusted text made safe), `titles` (what a
commit title states by convention), `window` (the day window), `paths` (what a changed path is) and
`weekly` (the roll-up's counts). Each capability is a package: `heuristic` (the rubric's judgment and
its prose), `history` (follow-up links and what the branch's past says), `surface` (what a change does
to its users, from syntax trees and packaging), `llm` (what we ask a model and how we check its reply),
`questions` (thread questions answered from data), `evaluation` (scoring ranks against answer keys)
and `render` (Markdown, JSON, Slack Block Kit and Discord embeds).
"""
