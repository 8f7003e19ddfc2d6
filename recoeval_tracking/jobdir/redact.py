"""Redaction and keys: the one place that decides what is a secret, and how keys are written.

Nothing here imports mlflow, hydra or omegaconf. :mod:`recoeval_tracking.jobdir.io` scrubs what it
writes to a job directory with these helpers, :mod:`recoeval_tracking.tracking` cleans params,
tags and run names with them, and reports flatten configs with :func:`flatten_config`.

The secret rule
---------------
A key is a *secret key* when **any of its dotted components** names a credential (so every key
under a secret section is secret too: ``secrets.github``, ``db.passwords.primary``). A component
is lower-cased and split into words at ``_``, ``-``, spaces and camelCase boundaries
(``apiKey`` -> ``api``, ``key``). It is secret when

* one of its words is ``password``, ``passwords``, ``passwd``, ``pwd``, ``pw``, ``pass``,
  ``passphrase``, ``token``, ``pat`` (a personal access token), ``secret``, ``secrets``, ``key``,
  ``apikey``, ``credential``, ``credentials``, ``authorization`` or ``bearer`` (and the plurals
  of these: ``passphrases``, ``apikeys``...); or
* one of its words is ``tokens``, unless it counts tokens: next to ``max``, ``min``, ``num``,
  ``n``, ``total``, ``count``, ``number`` before it or ``per`` after it (``max_tokens``,
  ``tokens_per_batch`` are not secret; ``tokens``, ``api_tokens`` are); or
* its compact form (words joined) ends with ``password``, ``passwd``, ``passphrase``,
  ``token``, ``secret`` or ``apikey``, or their plurals (``dbpassword``, ``accesstoken``,
  ``clientsecrets``).

So ``tracking.password``, ``db.api_key``, ``aws.secretAccessKey``, ``auth.token``,
``db.pw``, ``smtp.pass``, ``vault.passwords``, ``secrets``, ``secrets.path`` and
``service.accessToken`` are secret, while ``metrics.k``, ``metrics.max_tokens``,
``model.tokenizer``, ``split.keys_per_user``, ``model.n_passes`` and ``sort.monkey`` are not. The
value of a secret key is replaced whole, whatever it is: a list (``tokens: [a, b]``: every
element), a mapping (every key under it), a number.

A few names say ``key`` for a sort or lookup column, never a credential, and are not secret:
``orderByKey`` (the MLflow UI's sort column in its addresses, ``orderByKey=metrics.`ndcg_at_10```),
``viewStateShareKey`` (the name of a view the MLflow UI saved in an experiment tag), ``sortKey``
and ``sortByKey``, and the report's ``replicate_key`` and ``dataset_key`` (the param that names
a run's replicate or dataset) (:data:`NOT_SECRET`, compared in compact form).

Besides keys, text anywhere is scrubbed by :func:`scrub_text`, whatever its key:

* a PEM private key block (``-----BEGIN ... PRIVATE KEY-----`` to its ``-----END ...
  PRIVATE KEY-----``, or to the end of the text when the end line is missing), whatever key or
  text holds it;
* the password of a URL (``http://user:pw@host`` -> ``http://user:<redacted>@host``), also as
  Hydra writes it in overrides, with ``:`` escaped (``http\\://user\\:pw@host``);
* the value of a query parameter with a secret name (``?token=abc&x=1`` ->
  ``?token=<redacted>&x=1``);
* the value of a ``key=value`` assignment whose key is secret (``+db.password=abc`` inside a
  joined override list), up to the next space; a quoted value (``key='a b'``), a list
  (``key=[a, b]``) or a mapping (``key={a: b}``) whole; an assignment quoted whole, as a
  launcher prints a quoted override (``'tracking.password=a b'``), to its closing quote; and
  inside the quoted value of an ordinary key (``x.opts='user=bob password=abc'``) the same rules
  again;
* the value of a quoted key with a secret name in JSON or Python text (``"password": "abc"``,
  ``'tokens': ['a', 'b']``);
* secrets recognised by their value, whatever their key: an HTTP ``Bearer``/``Basic``
  credential (``Bearer eyJ...`` -> ``Bearer <redacted>``), and tokens of well-known shapes
  (GitHub ``ghp_``/``github_pat_``..., Slack ``xox?-``, AWS access key ids ``AKIA...``,
  Hugging Face ``hf_``, OpenAI-style ``sk-``, JSON web tokens ``eyJ...``);
* the value of every environment variable whose name is a secret key (``API_TOKEN``,
  ``DB_PASSWORD``, ``SECRET``), and every value a config took from the environment
  (``${oc.env:VAR}``: the app registers them with :func:`add_secret_values` before anything is
  written), wherever it appears, **longest first** (a secret that holds a shorter one is
  replaced whole, its tail does not leak).

Which environment values count as secrets (:func:`looks_like_secret_value`): a value replaced
wherever it appears must look like a secret, or it would redact ordinary text. A value is
skipped when it is shorter than 8 characters (4 for registered values), when it names an
existing file or folder, or when it has the shape of a path (``/...``, ``~/...``, ``./...``,
``C:\\...``, made of path characters only). So ``AWS_SHARED_CREDENTIALS_FILE=/home/me/.aws`` does
not redact every data path under ``/home/me``: a path says where a secret is, it is not one (the
file's contents never enter a config). The shell's ``PWD`` and ``OLDPWD`` are never secrets.

What goes through these functions
---------------------------------
Everything that leaves the process or the job directory: the job directory's ``config.yaml``,
``overrides.yaml`` and ``dataset.json`` (:mod:`recoeval_tracking.jobdir.io`); MLflow run names,
tags, params, descriptions and leaderboards (:mod:`recoeval_tracking.tracking`); report pages
(:mod:`recoeval_tracking.reporting.render`); error messages and markers. Hydra's own copies in
the job directory (``.hydra/config.yaml``, ``.hydra/overrides.yaml``, ``multirun.yaml``) keep what
Hydra wrote and are never uploaded.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "REDACTED",
    "NOT_SECRET",
    "is_secret_key",
    "scrub_url",
    "scrub_text",
    "scrub_value",
    "redact",
    "scrub_mapping",
    "scrub_overrides",
    "flatten_config",
    "sanitize_key",
    "add_secret_values",
    "env_interpolated_values",
    "looks_like_secret_value",
]

#: What a secret value is replaced with in artifacts (params and tags drop the key instead).
REDACTED = "<redacted>"

_SECRET_WORDS = frozenset(
    {
        "password",
        "passwords",
        "passwd",
        "passwds",
        "pwd",
        "pwds",
        "pw",
        "pass",
        "passphrase",
        "passphrases",
        "token",
        "pat",
        "secret",
        "secrets",
        "key",
        "apikey",
        "apikeys",
        "credential",
        "credentials",
        "authorization",
        "bearer",
    }
)
_SECRET_SUFFIXES = (
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "passphrases",
    "token",
    "secret",
    "secrets",
    "apikey",
    "apikeys",
)
#: Words that make ``tokens`` a count (``max_tokens``, ``tokens_per_batch``), not credentials.
_COUNT_BEFORE = frozenset({"max", "min", "num", "n", "total", "count", "number"})
_COUNT_AFTER = frozenset({"per"})
# a PEM private key block, to its end line or, when that is missing, to the end of the text
_PEM_PRIVATE_KEY = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)",
    re.DOTALL,
)
# credentials recognised by their value: an HTTP auth scheme's credential, and token shapes
_AUTH_VALUE = re.compile(
    r"(?P<scheme>\b(?:[Bb]earer|BEARER)\s+)(?P<value>[A-Za-z0-9\-._~+/]{6,}=*)"
    r"|(?P<basic>\b(?:Basic|BASIC)\s+)(?=[A-Za-z0-9+/]*[0-9+/=]|[A-Za-z0-9+/]+[A-Z])"
    r"[A-Za-z0-9+/]{8,}={0,2}"
)
_TOKEN_VALUE = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|A[KS]IA[0-9A-Z]{16}|hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_\-]{20,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*)"
)
#: Values registered as secrets (taken from the environment by a config): scrubbed anywhere.
_SECRET_VALUES: set[str] = set()
_MIN_ENV_SECRET = 8  # shorter values of secret-named variables would scrub ordinary words
#: The shell's working directories: "pwd" in their names is the command, not a password.
_NOT_SECRET_ENV = frozenset({"PWD", "OLDPWD"})
_MIN_REGISTERED = 4
# the shape of a path: optional root (~, ., .., a drive), then /-separated path characters
_PATH_SHAPE = re.compile(r"(?:~|\.{1,2}|[A-Za-z]:)?(?:[/\\][\w.\-@+ ]*)+")
#: Names (compact form: lower case, words joined) whose ``key`` names a column, not a credential.
NOT_SECRET = frozenset(
    {"orderbykey", "sortkey", "sortbykey", "viewstatesharekey", "replicatekey", "datasetkey"}
)
_WORD_SPLIT = re.compile(r"[_\-\s]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# scheme://user:password@ ; Hydra escapes ':' (and other specials) with a backslash in
# overrides, so every separator may be preceded by one.
_URL_CREDENTIALS = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*\\?:\\?/\\?/)"
    r"(?P<user>(?:\\[^:]|[^/@:\s\\])*)(?P<sep>\\?:)"
    r"(?P<password>[^/@\s]*)@"
)
# key=value where the value runs to the next ',', space, '&' or ';' (query strings, run names),
# then again to the next space only (a swept override's value holds commas); a quoted value, a
# list or a mapping is taken whole
_ASSIGNMENTS = tuple(
    re.compile(
        r"(?P<key>[A-Za-z_][\w.\-]*)(?P<op>\\?=)"
        r"(?P<value>'[^']*'|\"[^\"]*\"|\[[^\]]*\]|\{[^}]*\}|" + value + ")"
    )
    for value in (r"[^\s&;,]*", r"[^\s&;]*")
)
# an assignment quoted whole, as a launcher prints a quoted override: 'tracking.password=a b'
_QUOTED_ASSIGNMENT = re.compile(
    r"(?P<open>(?<![\w=])['\"])(?P<key>[+~]{0,2}[A-Za-z_][\w.\-]*)(?P<op>\\?=)"
    r"(?P<value>(?:(?!(?P=open)).)*)(?P=open)"
)
# "password": "abc" / 'tokens': ['a', 'b'] in JSON or Python text
_QUOTED_KEY = re.compile(
    r"(?P<head>(?P<q>['\"])(?P<key>[A-Za-z_][\w.\- ]*)(?P=q)\s*:\s*)"
    r"(?P<value>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\[[^\]]*\]|\{[^}]*\}|[^,}\]\s]+)"
)
_KEY_BAD_CHARS = re.compile(r"[^A-Za-z0-9_\-./ ]")


def is_secret_key(key: str) -> bool:
    """Whether ``key`` names a credential, by the rule in this module's docstring.

    Examples
    --------
    >>> is_secret_key("tracking.password"), is_secret_key("db.apiKey")
    (True, True)
    >>> is_secret_key("metrics.k"), is_secret_key("llm.max_tokens")
    (False, False)
    """
    return any(_is_secret_component(part) for part in str(key).split("."))


def _is_secret_component(part: str) -> bool:
    words = [w.lower() for w in _WORD_SPLIT.split(_CAMEL.sub("_", part)) if w]
    compact = "".join(words)
    if not words or compact in NOT_SECRET:
        return False
    for i, word in enumerate(words):
        if word in _SECRET_WORDS:
            return True
        if word == "tokens":
            before = words[i - 1] if i else ""
            after = words[i + 1] if i + 1 < len(words) else ""
            if before not in _COUNT_BEFORE and after not in _COUNT_AFTER:
                return True
    if compact.endswith("tokens"):
        stem = compact[: -len("tokens")]
        if stem and not any(stem.endswith(c) for c in _COUNT_BEFORE - {"n"}) and stem != "n":
            return True
    return compact.endswith(_SECRET_SUFFIXES)


def scrub_url(text: str) -> str:
    """Replace the password of every ``scheme://user:password@`` in ``text`` by ``<redacted>``
    (Hydra's escaped form ``scheme\\://user\\:password@`` included)."""
    return _URL_CREDENTIALS.sub(
        lambda m: f"{m['scheme']}{m['user']}{m['sep']}{REDACTED}@", str(text)
    )


def _scrub_assignment(m: re.Match) -> str:
    value = m["value"]
    if value in ("", REDACTED):
        return m[0]
    if is_secret_key(m["key"].lstrip("+~")):
        return f"{m['key']}{m['op']}{REDACTED}"
    if value[:1] in "'\"[{" and len(value) > 1:  # a quoted value holds assignments of its own
        inner = _scrub_assignments(value[1:-1])
        return f"{m['key']}{m['op']}{value[0]}{inner}{value[-1]}"
    return m[0]


def _scrub_quoted_assignment(m: re.Match) -> str:
    if is_secret_key(m["key"].lstrip("+~")) and m["value"] not in ("", REDACTED):
        value = REDACTED
    else:
        value = _scrub_assignments(m["value"])
    return f"{m['open']}{m['key']}{m['op']}{value}{m['open']}"


def _scrub_quoted_key(m: re.Match) -> str:
    if not is_secret_key(m["key"]):
        return m[0]
    q = m["value"][0] if m["value"][:1] in "'\"" else ""
    return f"{m['head']}{q}{REDACTED}{q}"


def _scrub_assignments(text: str) -> str:
    out = _QUOTED_ASSIGNMENT.sub(_scrub_quoted_assignment, text)
    for pattern in _ASSIGNMENTS:
        out = pattern.sub(_scrub_assignment, out)
    return out


def looks_like_secret_value(value: str, min_length: int = _MIN_ENV_SECRET) -> bool:
    """Whether ``value`` (of a secret-named environment variable, or registered by
    :func:`add_secret_values`) is scrubbed wherever it appears: at least ``min_length``
    characters, not :data:`REDACTED`, not an existing file or folder and not shaped like a path
    (the rule in this module's docstring: a path says where a secret is, it is not one, and
    replacing it would redact every path under it).

    Examples
    --------
    >>> looks_like_secret_value("s3cr3t-v4lue"), looks_like_secret_value("/home/me/.aws")
    (True, False)
    >>> looks_like_secret_value("short")
    False
    """
    text = str(value)
    if len(text) < min_length or text == REDACTED:
        return False
    if _PATH_SHAPE.fullmatch(text.strip()):
        return False
    try:
        return not os.path.exists(text)
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return True


def add_secret_values(values: Any) -> None:
    """Register values to scrub from every text written from now on in this process (the
    values a config took from the environment: :func:`env_interpolated_values`). Values
    shorter than 4 characters are ignored (they would scrub ordinary words)."""
    for value in values or ():
        text = str(value)
        if looks_like_secret_value(text, _MIN_REGISTERED):
            _SECRET_VALUES.add(text)


def env_interpolated_values(raw: Any, resolved: Any) -> list[str]:
    """The values of ``resolved`` (a config with its interpolations resolved) whose text in
    ``raw`` (the same config unresolved, e.g. ``OmegaConf.to_container(cfg, resolve=False)``)
    takes something from the environment (``${oc.env:VAR}``, ``${env:VAR}``)."""
    out: list[str] = []
    if isinstance(raw, Mapping) and isinstance(resolved, Mapping):
        for k, v in raw.items():
            if k in resolved:
                out += env_interpolated_values(v, resolved[k])
    elif isinstance(raw, (list, tuple)) and isinstance(resolved, (list, tuple)):
        for a, b in zip(raw, resolved):
            out += env_interpolated_values(a, b)
    elif (
        isinstance(raw, str) and re.search(r"\$\{\s*(?:oc\.)?env\s*:", raw) and resolved is not None
    ):
        if isinstance(resolved, (Mapping, list, tuple)):
            out += [str(v) for v in flatten_config({"v": resolved}).values()]
        else:
            out.append(str(resolved))
    return out


def _value_secrets() -> list[str]:
    """The values scrubbed wherever they appear, longest first (worked out again only when the
    environment or the registered values changed: every text written goes through this)."""
    environ = getattr(os.environ, "_data", None)  # CPython's own dict: copied and compared in C
    key = (dict(environ) if isinstance(environ, dict) else dict(os.environ), set(_SECRET_VALUES))
    if _VALUE_SECRETS_MEMO and _VALUE_SECRETS_MEMO[0] == key:
        return _VALUE_SECRETS_MEMO[1]
    values = set(_SECRET_VALUES)
    for name, value in os.environ.items():
        if name not in _NOT_SECRET_ENV and is_secret_key(name) and looks_like_secret_value(value):
            values.add(value)
    found = sorted(values, key=lambda v: (-len(v), v))
    _VALUE_SECRETS_MEMO[:] = [key, found]
    return found


#: The last environment and registered values seen by :func:`_value_secrets`, and its answer.
_VALUE_SECRETS_MEMO: list[Any] = []


def scrub_text(text: str) -> str:
    """``text`` with every credential the module docstring lists replaced by ``<redacted>``:
    URL passwords (escaped or not), secret query parameters and secret ``key=value``
    assignments, auth credentials and tokens recognised by their shape, and the values of
    secret environment variables and of registered values.

    Examples
    --------
    >>> scrub_text(r"tracking.uri=http\\://bob\\:pw@host +db.password=abc model=als")
    'tracking.uri=http\\\\://bob\\\\:<redacted>@host +db.password=<redacted> model=als'
    >>> scrub_text("https://h/x?api_key=abc&n=1")
    'https://h/x?api_key=<redacted>&n=1'
    """
    out = _PEM_PRIVATE_KEY.sub(REDACTED, str(text))
    for value in _value_secrets():  # longest first: a longer secret holding a shorter one
        out = out.replace(value, REDACTED)
    out = scrub_url(out)
    out = _scrub_assignments(out)
    out = _QUOTED_KEY.sub(_scrub_quoted_key, out)
    out = _AUTH_VALUE.sub(lambda m: f"{m['scheme'] or m['basic']}{REDACTED}", out)
    return _TOKEN_VALUE.sub(REDACTED, out)


def scrub_value(value: Any) -> Any:
    """Scrub a string value with :func:`scrub_text`; other values are returned unchanged."""
    if isinstance(value, str):
        return scrub_text(value)
    return value


def redact(obj: Any) -> Any:
    """The one entry point: a copy of ``obj`` with every secret replaced by ``<redacted>``.

    Text goes through :func:`scrub_text`; mappings and lists through :func:`scrub_mapping`
    (secret keys by name, text values scrubbed); other values are returned as they are.
    """
    if isinstance(obj, (Mapping, list, tuple)):
        return scrub_mapping(obj)
    return scrub_value(obj)


def scrub_mapping(obj: Any) -> Any:
    """A copy of a nested config (dicts and lists) with secret values replaced by ``<redacted>``.

    Keys are tested with :func:`is_secret_key` at every level (their own name, the last component);
    strings anywhere have URL passwords removed.
    """
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            out[k] = REDACTED if is_secret_key(str(k)) and v is not None else scrub_mapping(v)
        return out
    if isinstance(obj, (list, tuple)):
        return [scrub_mapping(v) for v in obj]
    return scrub_value(obj)


def scrub_overrides(overrides: list[str]) -> list[str]:
    """Hydra overrides (``key=value``, ``+key=value``, ``~key``) with secret values redacted."""
    out = []
    for item in overrides:
        text = str(item)
        if "=" in text:
            key, value = text.split("=", 1)
            bare = key.lstrip("+~").strip()
            if is_secret_key(bare):
                value = REDACTED
            out.append(f"{key}={scrub_text(value)}")
        else:
            out.append(scrub_text(text))
    return out


def _param_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def flatten_config(
    config: Mapping[str, Any], *, prefix: str = "", sep: str = "."
) -> dict[str, str]:
    """Flatten a nested config into dotted keys with string values, for MLflow params.

    Nested mappings become dotted keys (``{"model": {"factors": 64}}`` -> ``{"model.factors":
    "64"}``); lists and tuples stay one param holding their JSON text (``[1, 2]`` -> ``"[1, 2]"``);
    an empty mapping becomes ``"{}"``. Keys are converted with :func:`str`; nothing is scrubbed
    here (see :func:`recoeval_tracking.tracking.client.params_from_config`).

    Parameters
    ----------
    config : mapping
        A plain nested dict (convert an OmegaConf object with ``OmegaConf.to_container(cfg,
        resolve=True)`` first).
    prefix : str
        Prepended to every key (with ``sep``).
    sep : str
        Separator between levels.

    Returns
    -------
    dict of str to str

    Examples
    --------
    >>> flatten_config({"model": {"name": "als", "factors": 64}, "metrics": {"k": 10}})
    {'model.name': 'als', 'model.factors': '64', 'metrics.k': '10'}
    """
    if not isinstance(config, Mapping):
        from .._validation import param_error

        raise param_error(
            "config",
            "flatten_config",
            "a mapping (a plain nested dict)",
            config,
            "Convert an OmegaConf object with OmegaConf.to_container(cfg, resolve=True).",
        )
    out: dict[str, str] = {}

    def walk(node: Mapping[str, Any], path: str) -> None:
        for k, v in node.items():
            key = f"{path}{sep}{k}" if path else str(k)
            if isinstance(v, Mapping):
                if len(v) == 0:
                    out[key] = "{}"
                else:
                    walk(v, key)
            else:
                out[key] = _param_text(v)

    walk(config, prefix)
    return out


def sanitize_key(key: str) -> str:
    """A key MLflow accepts: ``@`` becomes ``_at_``; other characters outside
    ``[A-Za-z0-9_-./ ]`` become ``_``; at most 250 characters.

    Examples
    --------
    >>> sanitize_key("ndcg@10")
    'ndcg_at_10'
    """
    text = str(key).replace("@", "_at_")
    text = _KEY_BAD_CHARS.sub("_", text)
    return text[:250]
