"""Scenario problems: one line each, naming the file, the field path and what is allowed."""

from __future__ import annotations

import re
import types
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

Loc = tuple[int | str, ...]
"""A field path as parts: ``str`` for a mapping key, ``int`` for a list index."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a scenario file.

    Attributes:
        path: Field path such as ``entities[1].profile.big_five.O``; empty for the whole file.
        message: What is wrong and what would be right.
        line: 1-based line in the file, when known.

    """

    path: str
    message: str
    line: int | None = None

    def render(self, source: str) -> str:
        """Format as ``source[:line]: path: message``."""
        where = f"{source}:{self.line}" if self.line else source
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


@dataclass(frozen=True)
class Finding:
    """A problem located by path parts, before it is placed on a line of a file.

    Attributes:
        loc: Where the problem is; ``()`` for the whole file.
        message: What is wrong and what would be right.

    """

    loc: Loc
    message: str


class ScenarioError(ValueError):
    """A scenario file is invalid; ``problems`` lists every problem found."""

    def __init__(self, source: str, problems: list[Problem]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(problem.render(source) for problem in problems))

    def lines(self) -> list[str]:
        """Return one rendered line per problem."""
        return [problem.render(self.source) for problem in self.problems]


def format_path(loc: Loc) -> str:
    """Render a location as ``a.b[0].c``: ints are list indices, strings mapping keys."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


_DISCRIMINATOR = "type"
"""The key that picks an entity entry's model; pydantic puts its value into error locations."""

_NOT_A_MAPPING = {"model_attributes_type", "model_type", "dict_type"}


def findings_from_validation(
    error: ValidationError, root: type[BaseModel], data: Any
) -> list[Finding]:
    """Turn a pydantic ValidationError into one Finding per error, naming what is allowed.

    Args:
        error: The error raised by validating ``data`` against ``root``.
        root: The model that was validated.
        data: The input that failed, used to tell mapping keys from list indices and to pick
            the entity model whose keys an "unknown key" message lists.

    Returns:
        Findings in pydantic's order, with locations as the file writes them.

    """
    findings: list[Finding] = []
    for item in error.errors(include_url=False):
        loc = _file_loc(tuple(item["loc"]), data)
        kind = item["type"]
        given = item.get("input")
        ctx = item.get("ctx") or {}
        if kind == "extra_forbidden":
            allowed = ", ".join(_allowed_keys(root, loc[:-1], data))
            message = f"unknown key {loc[-1]!r}" + (f"; allowed: {allowed}" if allowed else "")
        elif kind == "union_tag_invalid":
            tag = given.get(_DISCRIMINATOR) if isinstance(given, dict) else given
            message = f"unknown entity type {tag!r}; allowed: {_quoted_list(ctx['expected_tags'])}"
            loc = (*loc, _DISCRIMINATOR)
        elif kind == "union_tag_not_found":
            message = f"required field is missing; allowed: {_quoted_list(ctx['expected_tags'])}"
            loc = (*loc, _DISCRIMINATOR)
        elif kind == "missing":
            message = "required field is missing"
        elif kind == "literal_error":
            message = f"unknown value {_shown(given)}; allowed: {_quoted_list(ctx['expected'])}"
        elif kind in _NOT_A_MAPPING:
            message = f"expected a mapping of fields (got {_shown(given)})"
        else:
            message = str(item["msg"]).removeprefix("Value error, ")
            if not isinstance(given, dict | list | tuple):
                message += f" (got {_shown(given)})"
        findings.append(Finding(loc, message))
    return findings


def _file_loc(raw: Loc, data: Any) -> Loc:
    """Rewrite a pydantic location into the path the file writes.

    Tagged unions insert the tag (``entities.0.human.profile``) and key errors append
    ``[key]``; neither is a key anyone wrote. Integer-looking mapping keys become strings so
    that ``format_path`` never shows a mapping key as a list index.
    """
    loc: list[int | str] = []
    value = data
    for part in raw:
        if part == "[key]":
            continue
        if isinstance(value, dict):
            if part not in value and part == value.get(_DISCRIMINATOR):
                continue
            loc.append(str(part))
            value = value.get(part)
        else:
            loc.append(part)
            value = _item(value, part)
    return tuple(loc)


def _allowed_keys(root: type[BaseModel], loc: Loc, data: Any) -> tuple[str, ...]:
    """Return the field names of the model that owns the mapping at ``loc``.

    Walks the annotations alongside the data: a model field leads to its annotation, a list
    index or mapping key to the container's item type, and a tagged union is resolved by the
    entry's own ``type``.
    """
    annotation: Any = root
    value = data
    for part in loc:
        model = _model_for(annotation, value)
        if model is not None:
            field = model.model_fields.get(str(part))
            annotation = field.annotation if field is not None else None
        else:
            annotation = _item_annotation(annotation)
        if annotation is None:
            return ()
        value = value.get(part) if isinstance(value, dict) else _item(value, part)
    model = _model_for(annotation, value)
    return tuple(model.model_fields) if model is not None else ()


def _alternatives(annotation: Any) -> list[Any]:
    """Flatten ``Annotated``, ``Optional`` and ``Union`` into the types they allow."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _alternatives(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [alt for arg in get_args(annotation) for alt in _alternatives(arg)]
    return [annotation]


def _model_for(annotation: Any, value: Any) -> type[BaseModel] | None:
    """Return the single model ``annotation`` allows for ``value``, if there is one."""
    alternatives = _alternatives(annotation)
    models = [alt for alt in alternatives if isinstance(alt, type) and issubclass(alt, BaseModel)]
    if len(models) > 1 and isinstance(value, dict):
        tag = value.get(_DISCRIMINATOR)
        models = [model for model in models if tag in _literal_values(model, _DISCRIMINATOR)]
    return models[0] if len(models) == 1 else None


def _literal_values(model: type[BaseModel], name: str) -> tuple[Any, ...]:
    field = model.model_fields.get(name)
    return get_args(field.annotation) if field is not None else ()


def _item_annotation(annotation: Any) -> Any:
    """Return the item type of a list, tuple or dict annotation (the value type for dicts)."""
    for alt in _alternatives(annotation):
        if get_origin(alt) in (list, tuple, dict):
            return get_args(alt)[-1]
    return None


def _item(value: Any, part: int | str) -> Any:
    if isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
        return value[part]
    return None


def _quoted_list(expected: str) -> str:
    """Turn pydantic's ``'a', 'b' or 'c'`` into ``a, b, c``."""
    return ", ".join(re.findall(r"'([^']*)'", expected)) or expected


def _shown(value: Any) -> str:
    """Show a YAML value the way the file would spell it, shortened."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    else:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
