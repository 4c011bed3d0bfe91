"""Scenario problems: one line each, naming the file, the field path and what is allowed."""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

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
        if kind == "extra_forbidden":
            allowed = ", ".join(_allowed_keys(root, loc[:-1], data))
            message = f"unknown key {loc[-1]!r}" + (f"; allowed: {allowed}" if allowed else "")
        elif kind in ("union_tag_invalid", "union_tag_not_found"):
            tags = ", ".join(_allowed_tags(root, loc, data))
            if kind == "union_tag_invalid":
                tag = given.get(_DISCRIMINATOR) if isinstance(given, dict) else given
                message = f"unknown entity type {_shown(tag)}; allowed: {tags}"
            else:
                message = f"required field is missing; allowed: {tags}"
            loc = (*loc, _DISCRIMINATOR)
        elif kind == "missing":
            message = "required field is missing"
        elif kind == "literal_error" and (choices := _literal_choices(root, loc, data)):
            message = f"unknown value {_shown(given)}; allowed: {', '.join(choices)}"
        elif kind in _NOT_A_MAPPING:
            message = f"expected a mapping of fields (got {_shown(given)})"
        else:
            message = str(item["msg"]).removeprefix("Value error, ")
            # pydantic says "Input should be ..."; the path already names the input.
            if message.startswith("Input should be "):
                message = "must be " + message.removeprefix("Input should be ")
            if "(got " not in message and not isinstance(given, dict | list | tuple):
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


def _annotation_at(root: type[BaseModel], loc: Loc, data: Any) -> Any:
    """Return the type annotation that governs the value at ``loc`` (``None`` if unknown).

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
            return None
        value = value.get(part) if isinstance(value, dict) else _item(value, part)
    return annotation


def _allowed_keys(root: type[BaseModel], loc: Loc, data: Any) -> tuple[str, ...]:
    """Return the field names of the model that owns the mapping at ``loc``."""
    model = _model_for(_annotation_at(root, loc, data), _value_at(data, loc))
    return tuple(model.model_fields) if model is not None else ()


def _allowed_tags(root: type[BaseModel], loc: Loc, data: Any) -> tuple[str, ...]:
    """Return the ``type`` values the tagged union at ``loc`` accepts."""
    models = _models_in(_annotation_at(root, loc, data))
    return tuple(str(tag) for model in models for tag in _literal_values(model, _DISCRIMINATOR))


def _literal_choices(root: type[BaseModel], loc: Loc, data: Any) -> tuple[str, ...]:
    """Return the values the ``Literal`` at ``loc`` allows."""
    alternatives = _alternatives(_annotation_at(root, loc, data))
    return tuple(
        str(choice) for alt in alternatives if get_origin(alt) is Literal for choice in get_args(alt)
    )


def _alternatives(annotation: Any) -> list[Any]:
    """Flatten ``Annotated``, ``Optional`` and ``Union`` into the types they allow."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _alternatives(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [alt for arg in get_args(annotation) for alt in _alternatives(arg)]
    return [annotation]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """Return the models ``annotation`` allows directly (not inside a list or dict)."""
    alternatives = _alternatives(annotation)
    return [alt for alt in alternatives if isinstance(alt, type) and issubclass(alt, BaseModel)]


def _model_for(annotation: Any, value: Any) -> type[BaseModel] | None:
    """Return the single model ``annotation`` allows for ``value``, if there is one."""
    models = _models_in(annotation)
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


def _value_at(data: Any, loc: Loc) -> Any:
    value = data
    for part in loc:
        value = value.get(part) if isinstance(value, dict) else _item(value, part)
    return value


def _item(value: Any, part: int | str) -> Any:
    if isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
        return value[part]
    return None


def _shown(value: Any) -> str:
    """Show a YAML value the way the file would spell it, shortened."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    else:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
