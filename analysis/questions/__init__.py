"""Thread questions answered without a model: what a question asks and names (`parse`), the answer
from the day's stored data (`answers`), and the fact-check of a model's answer before it is posted
(`fact_check`). Pure; bot/chat gathers the data and decides when the model is asked."""
