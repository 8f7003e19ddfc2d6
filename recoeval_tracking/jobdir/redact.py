"""Redaction and keys: the one place that decides what is a secret, and how keys are written.

Nothing here imports mlflow, hydra or omegaconf. :mod:`recoeval_tracking.jobdir.io` scrubs what it
writes to a job directory with these helpers, :mod:`recoeval_tracking.tracking` cleans params,
tags and run names with them, and reports flatten configs with :func:`flatten_config`.

The secret rule
---------------
A key is a *secret key* when its **last dotted component** names a credential. The component is
lower-cased and split into words at ``_``, ``-``, spaces and camelCase boundaries
(``apiKey`` -> ``api``, ``key``). It is secret when

* one of its words is ``password``, ``passwd``, ``pwd``, ``passphrase``, ``token``, ``pat``
  (a personal access token), ``secret``, ``key``, ``apikey``, ``credential``, ``credentials``,
  ``authorization`` or ``bearer``; or
* its compact form (words joined) ends with ``password``, ``passwd``, ``passphrase``,
  ``token``, ``secret`` or ``apikey`` (``dbpassword``, ``accesstoken``, ``clientsecret``).

So ``tracking.password``, ``db.api_key``, ``aws.secretAccessKey``, ``auth.token`` and
``service.accessToken`` are secret, while ``metrics.k``, ``metrics.max_tokens``,
``model.tokenizer``, ``split.keys_per_user`` and ``sort.monkey`` are not. Only the last component
counts: ``secrets.path`` is not secret (its value is a path, not a secret).

A few names say ``key`` for a sort or lookup column, never a credential, and are not secret:
``orderByKey`` (the MLflow UI's sort column in its addresses, ``orderByKey=metrics.`ndcg_at_10```),
``viewStateShareKey`` (the name of a view the MLflow UI saved in an experiment tag), ``sortKey``
and ``sortByKey`` (:data:`NOT_SECRET`, compared in compact form).

Besides keys, text anywhere is scrubbed by :func:`scrub_text`, whatever its key:

* the password of a URL (``http://user:pw@host`` -> ``http://user:<redacted>@host``), also as
  Hydra writes it in overrides, with ``:`` escaped (``http\\://user\\:pw@host``);
* the value of a query parameter with a secret name (``?token=abc&x=1`` ->
  ``?token=<redacted>&x=1``);
* the value of a ``key=value`` assignment whose key is secret (``+db.password=abc`` inside a
  joined override list), up to the next space;
* secrets recognised by their value, whatever their key: an HTTP ``Bearer``/``Basic``
  credential (``Bearer eyJ...`` -> ``Bearer <redacted>``), and tokens of well-known shapes
  (GitHub ``ghp_``/``github_pat_``..., Slack ``xox?-``, AWS access key ids ``AKIA...``,
  Hugging Face ``hf_``, OpenAI-style ``sk-``, JSON web tokens ``eyJ...``);
* the value of every environment variable whose name is a secret key (``API_TOKEN``,
  ``DB_PASSWORD``, ``SECRET``; values of 8 characters or more), and every value a config took
  from the environment (``${oc.env:VAR}``: the app registers them with
  :func:`add_secret_values` before anything is written), wherever it appears.

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
]

#: What a secret value is replaced with in artifacts (params and tags drop the key instead).
REDACTED = "<redacted>"

_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "token",
        "pat",
        "secret",
        "key",
        "apikey",
        "credential",
        "credentials",
        "authorization",
        "bearer",
    }
)
_SECRET_SUFFIXES = ("password", "passwd", "passphrase", "token", "secret", "apikey")
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
#: Names (compact form: lower case, words joined) whose ``key`` names a column, not a credential.
NOT_SECRET = frozenset({"orderbykey", "sortkey", "sortbykey", "viewstatesharekey"})
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
# then again to the next space only (a swept override's value holds commas)
_ASSIGNMENTS = tuple(
    re.compile(
        r"(?P<key>[A-Za-z_][\w.\-]*)(?P<op>\\?=)"
        r"(?P<value>'[^']*'|\"[^\"]*\"|" + value + ")"
    )
    for value in (r"[^\s&;,]*", r"[^\s&;]*")
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
    last = str(key).rsplit(".", 1)[-1]
    words = [w.lower() for w in _WORD_SPLIT.split(_CAMEL.sub("_", last)) if w]
    compact = "".join(words)
    if compact in NOT_SECRET:
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    return compact.endswith(_SECRET_SUFFIXES)


def scrub_url(text: str) -> str:
    """Replace the password of every ``scheme://user:password@`` in ``text`` by ``<redacted>``
    (Hydra's escaped form ``scheme\\://user\\:password@`` included)."""
    return _URL_CREDENTIALS.sub(
        lambda m: f"{m['scheme']}{m['user']}{m['sep']}{REDACTED}@", str(text)
    )


def _scrub_assignment(m: re.Match) -> str:
    if not is_secret_key(m["key"]) or m["value"] in ("", REDACTED):
        return m[0]
    return f"{m['key']}{m['op']}{REDACTED}"


def add_secret_values(values: Any) -> None:
    """Register values to scrub from every text written from now on in this process (the
    values a config took from the environment: :func:`env_interpolated_values`). Values
    shorter than 4 characters are ignored (they would scrub ordinary words)."""
    for value in values or ():
        text = str(value)
        if len(text) >= _MIN_REGISTERED and text != REDACTED:
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
    """The values scrubbed wherever they appear, longest first."""
    values = set(_SECRET_VALUES)
    for name, value in os.environ.items():
        if len(value) >= _MIN_ENV_SECRET and name not in _NOT_SECRET_ENV and is_secret_key(name):
            values.add(value)
    return sorted(values, key=len, reverse=True)


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
    out = str(text)
    for value in _value_secrets():
        out = out.replace(value, REDACTED)
    out = scrub_url(out)
    for pattern in _ASSIGNMENTS:
        out = pattern.sub(_scrub_assignment, out)
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
