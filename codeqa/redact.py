"""Credentials written inside files that are read (tokens, private keys, password assignments) are blanked
before any later stage sees the text: the index, a prompt, an answer, a log. `redact_source` keeps a file's
line count, so every line number stays true.
"""

from __future__ import annotations

import re
from collections.abc import Iterator


# a key block to its END line; without one (code that writes or checks a key header), the marker and
# the base64 lines right under it, so the rest of the file stays in the index
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"
                          r"|(?:[ \t]*\n[ \t]*[A-Za-z0-9+/=]{16,}[ \t]*(?=\n|\Z))*)", re.DOTALL)
_TOKEN = re.compile(r"\b(sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
                    r"|xox[abprs]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,}"
                    r"|hf_[A-Za-z0-9]{30,}|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})")
# what every _TOKEN alternative starts with: the regex (slow over a whole file) runs only where one occurs
_TOKEN_PREFIXES = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AKIA", "ASIA", "AIza",
                   "glpat-", "hf_", "eyJ")
_SECRET_NAME = r"[A-Za-z_]*(?:password|passwd|secret|api_?key|apikey|access_?key|auth_?token|private_?key|token|credential)[A-Za-z_]*"
_SECRET_WORDS = r"password|passwd|secret|api_?key|apikey|access_?key|auth_?token|private_?key|token|credential"
_SECRET_WORD = re.compile("(?i)" + _SECRET_WORDS)
_SECRET_WORD_LOWER = re.compile(_SECRET_WORDS)  # on lowercased text: several times faster than (?i)
_QUOTED_SECRET = re.compile(r"(?i)\b(" + _SECRET_NAME + r"[\"']?\s*[:=]\s*)([\"'])([^\"'\s]{8,})\2")
# unquoted values (KEY=value in configs): only token-looking values with a digit, so `token = get_token()` stays
_BARE_SECRET = re.compile(r"(?i)\b(" + _SECRET_NAME + r"\s*[:=]\s*)(?=[A-Za-z0-9_+/=-]*\d)(?=[A-Za-z0-9_+/=-]*[A-Za-z])"
                          r"([A-Za-z0-9_+/=-]{16,})(?=\s*(?:$|[,;#]))", re.MULTILINE)
# a credential-named key set at the start of a line, its value running to the end of it (a config's
# `DB_PASSWORD=supersecretvalue`, `export API_TOKEN=...`, YAML's `password: ...`): any value of 8 or more
# characters, digits or none; _looks_like_code keeps the forms code writes (`password = user_password`,
# `token: OAuthToken`). The key's credential word is not the start of another lowercase word (`tokenizer`,
# `max_tokens`); `$` (a reference to another setting), quotes and brackets never make a value.
_LINE_SECRET = re.compile(r"(?im)^([ \t]*(?:(?:export|env|set|-)[ \t]+)?[A-Za-z0-9_.-]{0,64}(?:" + _SECRET_WORDS
                          + r")(?-i:(?![a-z]))[A-Za-z0-9_.-]{0,64}"
                          r"([ \t]*=[ \t]*|:[ \t]+))([^\s'\"`,;()\[\]{}<>$#]{8,})(?=[ \t]*(?:#.*)?\r?$)")
_IDENTIFIER_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\??\.[A-Za-z_][A-Za-z0-9_]*)*")  # `a.b`, `a?.b` too
# words that stand for no value in code or in a settings table (`token: optional`)
_NOT_VALUES = frozenset({"undefined", "nullptr", "nothing", "bytearray", "optional", "required", "readonly"})
_BEARER = re.compile(r"(?i)\b(bearer\s+)([A-Za-z0-9_.~+/=-]{16,})")
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@\"']+:)([^@\s/\"']+)(@)")


def redact(text: str) -> str:
    """Blank out obvious credentials (private keys, API keys and tokens, password assignments,
    passwords in URLs). Applied to every file before it is parsed, chunked or embedded, so no
    credential written inside source code reaches the index, and again to what is sent to an LLM.
    Line breaks are kept, so line numbers of redacted text still match the file."""
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY.sub(lambda m: "[REDACTED PRIVATE KEY]" + "\n" * m.group(0).count("\n"), text)
    if any(prefix in text for prefix in _TOKEN_PREFIXES):
        text = _TOKEN.sub("[REDACTED]", text)
    text = _redact_assignments(text)
    if "bearer" in text.lower():
        text = _BEARER.sub(lambda m: f"{m.group(1)}[REDACTED]", text)
    if "://" in text:
        text = _redact_url_passwords(text)
    return text


def _redact_url_passwords(text: str) -> str:
    """`scheme://user:password@host`, on the lines that hold a `://` only (a match never spans lines):
    over a whole file the pattern tries every word, and URLs in docstrings are common (site-packages:
    a third of the redaction's time)."""
    out, last = [], 0
    at = text.find("://")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        out += [text[last:start], _URL_PASSWORD.sub(lambda m: f"{m.group(1)}[REDACTED]{m.group(3)}", text[start:end])]
        last = end
        at = text.find("://", end)
    return "".join(out) + text[last:]


def _redact_assignments(text: str) -> str:
    """`password = "..."`-style assignments. The two patterns cost a lot per word, so they run only on
    the lines around a credential-like word (and the line after, for a value on the next line)."""
    out, last = [], 0
    lower = text.lower()
    if len(lower) == len(text):  # (a few characters change length when lowercased: then match case-blind)
        spans = _lines_around(text, _SECRET_WORD_LOWER.finditer(lower))
    else:
        spans = _lines_around(text, _SECRET_WORD.finditer(text))
    for start, end in spans:
        region = _QUOTED_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}[REDACTED]{m.group(2)}", text[start:end])
        region = _BARE_SECRET.sub(lambda m: f"{m.group(1)}[REDACTED]", region)
        out += [text[last:start], _LINE_SECRET.sub(_redact_line_secret, region)]
        last = end
    return "".join(out) + text[last:] if out else text


def _redact_line_secret(m: re.Match) -> str:
    return m.group(0) if _looks_like_code(m.group(2), m.group(3)) else f"{m.group(1)}[REDACTED]"


def _looks_like_code(separator: str, value: str) -> bool:
    """Whether `key<separator>value` at the start of a line reads as code, not as a setting: a word that
    stands for no value (`undefined`), a name read from an object or module (`response.token`), a name
    after a spaced `=` (`password = user_password`), or a type or variable after a colon (`SecretStr`,
    `refreshToken`, `user_token`: a plain lowercase word there is a YAML value). A `KEY=value` with no
    space is how .env files, shells and Dockerfiles set values: blanked unless it reads from an object."""
    if value.lower() in _NOT_VALUES:
        return True
    if _IDENTIFIER_PATH.fullmatch(value) is None:
        return False
    if "." in value:
        return True
    if separator == "=":
        return False
    return separator.strip() == "=" or value != value.lower() or "_" in value


def _lines_around(text: str, matches: Iterator[re.Match]) -> list[tuple[int, int]]:
    """Merged (start, end) spans from the start of each matching line to the end of the line after it."""
    spans: list[tuple[int, int]] = []
    for m in matches:
        if spans and m.start() < spans[-1][1]:
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        end = len(text) if end == -1 else text.find("\n", end + 1)
        end = len(text) if end == -1 else end + 1
        if spans and start < spans[-1][1]:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def redact_source(text: str) -> str:
    """`redact` over a whole file (a key block spanning lines is caught), keeping its line count."""
    redacted = redact(text)
    if redacted == text or len(redacted.splitlines()) == len(text.splitlines()):
        return redacted
    return "".join(redact(line) for line in text.splitlines(keepends=True))
