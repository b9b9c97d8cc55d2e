"""Slack, through slack-bolt and slack_sdk, split by role: the Web API client with its retry policy and
error mapping (`client`), the digest poster with its reconciliation (`poster`) and the radar's banners
(`banners`), the `/digest` command and thread questions (`handlers`), and the runtime that serves them
over Socket Mode or HTTP (`runtime`, behind the authenticating `front_door`).

What to say comes from the application through bot/ports (the chat facade, the posters' protocols);
how it looks comes from analysis/render/slack_blocks.py. Nothing here imports the Discord adapter.
"""
