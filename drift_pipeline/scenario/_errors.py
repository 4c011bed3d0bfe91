"""Scenario problems: one line each, naming the file, the field path and what is allowed."""

from __future__ import annotations

import re
import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

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

_SHOULD = re.compile(r"^(?:Input|String|Tuple|List|Dictionary|Value) should ")
_NOT_A_MAPPING = {"model_attributes_type", "model_type", "dict_type"}


def findings_from_validation(
    error: ValidationError, root: type[BaseModel], data: Any
) -> list[Finding]:
    """Turn a pydantic ValidationError into one Finding per problem, naming what is allowed.

    Args:
        error: The error raised by validating ``data`` against ``root``.
        root: The model that was validated.
        data: The input that failed, used to tell mapping keys from list indices and to find
            the model, union or literal whose allowed keys or values a message lists.

    Returns:
        Findings in pydantic's order, with locations as the file writes them.

    """
    findings: list[Finding] = []
    for item in error.errors(include_url=False):
        finding = _finding(item, _file_loc(tuple(item["loc"]), data), root, data)
        if finding not in findings:  # e.g. both positions of an empty [first, last]
            findings.append(finding)
    return findings


def _finding(item: ErrorDetails, loc: Loc, root: type[BaseModel], data: Any) -> Finding:
    """Word one pydantic error for a scenario author."""
    kind = item["type"]
    given = item.get("input")
    ctx = item.get("ctx", {})
    if kind == "extra_forbidden":
        allowed = ", ".join(_allowed_keys(root, loc[:-1], data))
        hint = f"; allowed: {allowed}" if allowed else ""
        return Finding(loc, f"unknown key {loc[-1]!r}{hint}")
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        tags = ", ".join(_allowed_tags(root, loc, data))
        if kind == "union_tag_not_found":
            return Finding((*loc, _DISCRIMINATOR), f"required field is missing; allowed: {tags}")
        tag = _shown(given.get(_DISCRIMINATOR) if isinstance(given, dict) else given)
        return Finding((*loc, _DISCRIMINATOR), f"unknown entity type {tag}; allowed: {tags}")
    if kind == "missing" and loc and isinstance(loc[-1], int):
        # A short fixed-size list ([5] for [first, last]) lacks positions, not fields.
        annotation, value = _annotation_at(root, loc[:-1], data)
        size = len(get_args(annotation)) if get_origin(annotation) is tuple else 0
        got = len(value) if isinstance(value, list) else 0
        return Finding(loc[:-1], f"expected {_items(size)} (got {got})")
    if kind == "missing":
        return Finding(loc, "required field is missing")
    if kind == "literal_error" and (choices := _literal_choices(root, loc, data)):
        return Finding(loc, f"unknown value {_shown(given)}; allowed: {', '.join(choices)}")
    if kind == "too_short":
        bound = f"at least {_items(ctx['min_length'])}"
        return Finding(loc, f"expected {bound} (got {ctx['actual_length']})")
    if kind == "too_long":
        bound = f"at most {_items(ctx['max_length'])}"
        return Finding(loc, f"expected {bound} (got {ctx['actual_length']})")
    if kind in ("list_type", "tuple_type"):
        return Finding(loc, f"expected a list (got {_shown(given)})")
    if kind in _NOT_A_MAPPING:
        return Finding(loc, f"expected a mapping of fields (got {_shown(given)})")
    message = str(item["msg"]).removeprefix("Value error, ")
    # pydantic says "Input should be ..."; the path already names the input.
    message = _SHOULD.sub("must ", message, count=1)
    if "(got " not in message and not isinstance(given, dict | list | tuple):
        message += f" (got {_shown(given)})"
    return Finding(loc, message)


def _items(count: int) -> str:
    return "1 item" if count == 1 else f"{count} items"


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


def _annotation_at(root: type[BaseModel], loc: Loc, data: Any) -> tuple[Any, Any]:
    """Return the annotation that governs ``loc`` (``None`` if unknown) and the value there.

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
            return None, None
        value = value.get(part) if isinstance(value, dict) else _item(value, part)
    return annotation, value


def _allowed_keys(root: type[BaseModel], loc: Loc, data: Any) -> tuple[str, ...]:
    """Return the field names of the model that owns the mapping at ``loc``."""
    model = _model_for(*_annotation_at(root, loc, data))
    return tuple(model.model_fields) if model is not None else ()


def _allowed_tags(root: type[BaseModel], loc: Loc, data: Any) -> tuple[str, ...]:
    """Return the ``type`` values the tagged union at ``loc`` accepts."""
    models = _models_in(_annotation_at(root, loc, data)[0])
    return tuple(str(tag) for model in models for tag in _literal_values(model, _DISCRIMINATOR))


def _literal_choices(root: type[BaseModel], loc: Loc, data: Any) -> tuple[str, ...]:
    """Return the values the ``Literal`` at ``loc`` allows."""
    annotation, _ = _annotation_at(root, loc, data)
    literals = [alt for alt in _alternatives(annotation) if get_origin(alt) is Literal]
    return tuple(str(choice) for literal in literals for choice in get_args(literal))


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
