"""``ConfigError``: a config file, a key of it or a command-line flag the server cannot honour.

Codes (stable, asserted by tests):

* ``SG520`` the config file is missing, unreadable or not JSON, or a graph fails to load;
* ``SG521`` an unknown key (with a did-you-mean suggestion);
* ``SG522`` a key with a value of the wrong type or out of range;
* ``SG523`` a known key that stepgraph does not support (yet): refused, never ignored;
* ``SG524`` a path named by a key does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stepgraph.errors import StepgraphError, format_error

__all__ = [
    "CONFIG_FILE", "CONFIG_INVALID", "CONFIG_MISSING_PATH", "CONFIG_UNKNOWN_KEY",
    "CONFIG_UNSUPPORTED", "ConfigError", "Problem",
]

CONFIG_FILE = "SG520"
CONFIG_UNKNOWN_KEY = "SG521"
CONFIG_INVALID = "SG522"
CONFIG_UNSUPPORTED = "SG523"
CONFIG_MISSING_PATH = "SG524"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one key: its code, the dotted key, what is wrong and a hint."""

    code: str
    key: str
    message: str
    hint: str | None = None

    def render(self) -> str:
        text = f"[{self.code}] `{self.key}`: {self.message}"
        return f"{text} (hint: {self.hint})" if self.hint else text


class ConfigError(StepgraphError):
    """The config file is missing or malformed, a key is refused, or a graph cannot be loaded.

    ``problems`` lists every refused key when the error comes from checking a config file;
    ``code`` is the first one's.
    """

    code = CONFIG_FILE

    def __init__(self, message: str, *, code: str | None = None, hint: str | None = None,
                 problems: Sequence[Problem] = ()) -> None:
        self.problems = tuple(problems)
        self.key = self.problems[0].key if self.problems else None
        if code is not None:
            self.code = code
        if hint is not None:
            self.hint = hint
        super().__init__(format_error(self.code, message, hint) if code is not None else message)

    @classmethod
    def from_problems(cls, source: str, problems: Sequence[Problem]) -> ConfigError:
        """One error listing every problem of ``source`` (a file name); its code is the first's."""
        lines = "\n".join(f"  {p.render()}" for p in problems)
        noun = "problem" if len(problems) == 1 else "problems"
        err = cls(f"{source}: {len(problems)} {noun}:\n{lines}", problems=problems)
        err.code = problems[0].code if problems else CONFIG_FILE
        return err
