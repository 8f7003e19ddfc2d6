"""Redaction and keys: the one place that decides what is a secret, and how keys are written.

Nothing here imports mlflow, hydra or omegaconf. :mod:`recoeval_tracking.jobdir.io` scrubs what it
writes to a job directory with these helpers, :mod:`recoeval_tracking.tracking` cleans params,
tags and run names with them, and reports flatten configs with :func:`flatten_config`.

The secret rule
---------------
A key is a *secret key* when its **last dotted component** names a credential. The component is
lower-cased and split into words at ``_``, ``-``, spaces and camelCase boundaries
(``apiKey`` -> ``api``, ``key``). It is secret when

* one of its words is ``password``, ``passwd``, ``pwd``, ``token``, ``secret``, ``key``,
  ``apikey``, ``credential`` or ``credentials``; or
* its compact form (words joined) ends with ``password``, ``passwd``, ``token``, ``secret`` or
  ``apikey`` (``dbpassword``, ``accesstoken``, ``clientsecret``).

So ``tracking.password``, ``db.api_key``, ``aws.secretAccessKey``, ``auth.token`` and
``service.accessToken`` are secret, while ``metrics.k``, ``metrics.max_tokens``,
``model.tokenizer``, ``split.keys_per_user`` and ``sort.monkey`` are not. Only the last component
counts: ``secrets.path`` is not secret (its value is a path, not a secret).

Besides keys, any value that is a URL with a password in it (``http://user:pw@host``) has the
password replaced, whatever its key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "REDACTED",
    "is_secret_key",
    "scrub_url",
    "scrub_value",
    "scrub_mapping",
    "scrub_overrides",
    "flatten_config",
    "sanitize_key",
]

#: What a secret value is replaced with in artifacts (params and tags drop the key instead).
REDACTED = "<redacted>"

_SECRET_WORDS = frozenset({"password", "passwd", "pwd", "token", "secret", "key", "apikey",
                           "credential", "credentials"})
_SECRET_SUFFIXES = ("password", "passwd", "token", "secret", "apikey")
_WORD_SPLIT = re.compile(r"[_\-\s]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<user>[^/@:\s]*):"
                              r"(?P<password>[^/@\s]*)@")
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
    if any(w in _SECRET_WORDS for w in words):
        return True
    compact = "".join(words)
    return compact.endswith(_SECRET_SUFFIXES)


def scrub_url(text: str) -> str:
    """Replace the password of every ``scheme://user:password@`` in ``text`` by ``<redacted>``."""
    return _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", text)


def scrub_value(value: Any) -> Any:
    """Scrub URL passwords inside a string value; other values are returned unchanged."""
    if isinstance(value, str):
        return scrub_url(value)
    return value


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
            bare = key.lstrip("+~")
            if is_secret_key(bare):
                value = REDACTED
            out.append(f"{key}={scrub_url(value)}")
        else:
            out.append(scrub_url(text))
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


def flatten_config(config: Mapping[str, Any], *, prefix: str = "", sep: str = "."
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

        raise param_error("config", "flatten_config", "a mapping (a plain nested dict)", config,
                          "Convert an OmegaConf object with OmegaConf.to_container(cfg, "
                          "resolve=True).")
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
