"""What marks a change as touching security: security-sensitive words in a path, and risky calls
(eval, unpickling, shell=True, TLS verification off, raw HTML) in a diff's added lines.
"""

from __future__ import annotations

import re

from analysis.heuristic.facts import Diff

# Security-sensitive words as whole path tokens ("auth_utils.py", not "authors.py" or "tokenizer").
SECURITY_PATH = re.compile(
    r"^.*?(?<![a-z0-9])(?:auth|authn|authz|oauth|jwt|security|secrets?|crypto|sandbox(?:ing)?|permissions?|acl"
    r"|rbac|csrf|credentials?|password|passwd|tls|ssl|sanitizer?|pickle|deserializ(?:e|ation))(?![a-z0-9]).*$",
    re.M,
)
_RISKY_CALLS = re.compile(
    r"(?<![\w.])(?:eval|exec)(?=\s*\()"  # the builtins, not model.eval()
    r"|\b(?:c?pickle|cloudpickle|dill)\.loads?(?=\s*\()|\bmarshal\.loads(?=\s*\()"
    r"|\byaml\.load(?=\s*\()|\btorch\.load(?=\s*\()|\bos\.system(?=\s*\()"
    r"|\bshell\s*=\s*True\b|\btrust_remote_code\s*=\s*True\b|\bverify\s*=\s*False\b"
    r"|\bdangerouslySetInnerHTML\b|\.innerHTML\s*=(?!=)",
    re.M,
)

# Text each of those contains: a diff with none of it skips the expression's search. As specific as the
# expression allows ("torch.load", not "torch", which most diffs of a deep-learning project hold).
_RISKY_WORDS = (
    "eval", "exec", "pickle.", "dill.", "marshal.", "yaml.load", "torch.load", "os.system", "shell",
    "trust_remote_code", "verify", "nnerHTML",
)  # fmt: skip


def risky_calls_in(diff: Diff) -> list[str]:
    calls: list[str] = []
    added = diff.added
    if not any(word in added for word in _RISKY_WORDS) or not _RISKY_CALLS.search(added):
        return calls
    text = diff.added_code()  # not in string literals or comments: a pattern or docstring is no call
    for m in _RISKY_CALLS.finditer(text):
        end = text.find("\n", m.end())
        line = text[text.rfind("\n", 0, m.start()) + 1 : end if end >= 0 else None]
        # torch.load with weights_only=True is the safe form.
        if not (m.group(0) == "torch.load" and "weights_only=True" in line):
            calls.append(re.sub(r"\s+", "", m.group(0)).lstrip("."))
    return calls
