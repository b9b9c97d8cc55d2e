"""What a thread question asks, read without a model: the intent (the day's riskiest commits, a tier,
follow-ups, what a commit changes, commits touching an area or by an author, surface changes, counts)
and what it names (commits by #N, SHA or URL; paths and areas; an author; tiers; "top 3").

Pure parsing, in English and Chinese. Keywords are grouped by meaning and matched as patterns, and
entities are extracted by shape (a SHA is hex with a digit and a letter, a path has a '/' or a file
extension), so questions worded in ways nobody listed still land on the right intent. What the parser
cannot place is UNKNOWN: the caller then asks the model, or says what it can answer.

The parts: the parsed question's types (question.py); what it names by shape (entities.py), the keyword
groups (keywords.py), paths and areas (areas.py), an author (authors.py), a commit named by a phrase
(commit_phrases.py), typing slips (slips.py); the intent decided from all of them (intents.py).
"""

from analysis.questions.parse.entities import named_commits
from analysis.questions.parse.intents import READ_CHARS, is_question, parse_question, question_lang
from analysis.questions.parse.question import Aspect, Facet, Intent, NamedCommit, Question

__all__ = [
    "READ_CHARS",
    "Aspect",
    "Facet",
    "Intent",
    "NamedCommit",
    "Question",
    "is_question",
    "named_commits",
    "parse_question",
    "question_lang",
]
