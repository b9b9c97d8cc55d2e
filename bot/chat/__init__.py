"""What happens when someone talks to the bot, whatever the platform: `/digest …` parsed (`commands`),
carried out (`service`: a commit's card, a day's digest, subscriptions; the one facade the Slack and
Discord handlers call), and thread questions answered from the stored data (`answers`) or, when the
data cannot, by the model with its answer fact-checked (`llm_answers`)."""
