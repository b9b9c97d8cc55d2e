"""How digestbot is told what to do: settings and secrets from the environment or .env (`settings`),
the TOML file of subscriptions validated at start-up (`file`), subscriptions from the file and from
chat merged in one registry (`subscriptions`), and when each fires (`schedule`)."""
