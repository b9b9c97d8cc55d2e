"""`digestbot eval`'s arithmetic: the repository's own answer keys — follow-ups (risk) and release notes
(impact, `release_notes`) — and the scores of our ranks against them beside a rank by size and chance
(`scoring`). Pure: judged commits in, figures out; bot/digest/evaluate.py replays the days."""
