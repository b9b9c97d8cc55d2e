"""Every output format, as text or plain dicts: the Markdown report and card (`markdown`), its JSON twin
(`json_report`), Slack Block Kit (`slack_blocks`), Discord embeds (`discord_embeds`), thread answers
(`answer`), the weekly roll-up (`weekly`), `digestbot eval`'s table (`eval_report`) and the words said
about follow-ups everywhere (`followups`). Pure: no SDK import; each respects its platform's limits and
treats commit text and model text as untrusted."""
