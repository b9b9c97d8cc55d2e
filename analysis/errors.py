"""Errors a user can act on. Every layer raises these; the CLI and the chat handlers turn them
into one clear line (exit code 2 on the command line) instead of a traceback."""


class DigestError(Exception):
    """Base class: the message is shown to the user as is, so it must be complete and safe."""


class ConfigError(DigestError):
    """A setting or configuration file is missing or invalid."""


class InputError(DigestError):
    """Bad user input: date, time zone, reference, repository name."""


class RefNotFound(InputError):
    """No commit matches the reference."""


class AmbiguousRef(InputError):
    """More than one commit matches a short SHA."""


class OverLimit(InputError):
    """A person or thread asked for more new paid work (model calls, a source's quota) than their rate
    allows: the message says when to ask again."""


class Flooded(OverLimit):
    """A whole channel asked for more than its rate allows. `public`: this refusal is the one notice the
    channel gets this minute (everyone there sees when to retry); the others are said to their asker alone."""

    def __init__(self, message: str, *, public: bool = False):
        super().__init__(message)
        self.public = public


class SourceError(DigestError):
    """The commit source (GitHub or git) failed: not found, unauthorised, unreachable."""


class SourceRefused(SourceError):
    """The source answered that the repository, branch or token as configured cannot work (not found,
    unauthorised): a setting to fix, not an outage to wait out."""


class RateLimited(SourceError):
    """A service asked us to wait longer than we are allowed to."""


class ServiceError(DigestError):
    """A chat or LLM service failed after retries."""


class Undeliverable(ServiceError):
    """The platform says this can never succeed (the message is gone, too old to edit, no permission):
    work that meets it is given up, not retried."""
