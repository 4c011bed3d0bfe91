"""Scenario problems: one line each, naming the file, the field path and what is allowed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from drift_pipeline.entities import entity_types


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


class ScenarioError(ValueError):
    """A scenario file is invalid; ``problems`` lists every problem found."""

    def __init__(self, source: str, problems: list[Problem]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(problem.render(source) for problem in problems))

    def lines(self) -> list[str]:
        """One rendered line per problem."""
        return [problem.render(self.source) for problem in self.problems]


def format_path(loc: tuple[int | str, ...]) -> str:
    """Render a pydantic location as ``a.b[0].c``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _strip_union_tags(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    # Tagged unions put the tag (e.g. "human") into the location; users never wrote that key.
    tags = {entity_type.name for entity_type in entity_types()}
    cleaned: list[int | str] = []
    for index, part in enumerate(loc):
        if index > 0 and isinstance(loc[index - 1], int) and part in tags and cleaned[:1] == ["entities"]:
            continue
        cleaned.append(part)
    return tuple(cleaned)


def _model_at(root: type[BaseModel], loc: tuple[int | str, ...], data: Any) -> type[BaseModel] | None:
    """Find the pydantic model that owns the mapping at ``loc`` (for "allowed keys" hints)."""
    from typing import get_args, get_origin

    from drift_pipeline.entities import get_entity_type

    current: Any = root
    value: Any = data
    for part in loc:
        if isinstance(part, int):
            value = value[part] if isinstance(value, list) and part < len(value) else None
            args = get_args(current)
            current = args[0] if args else None
            if current is None:
                return None
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            # A tagged union of entity models: pick by the entry's own type.
            if isinstance(value, dict) and isinstance(value.get("type"), str):
                try:
                    current = get_entity_type(value["type"]).spec_model
                except KeyError:
                    return None
            else:
                return None
        field = current.model_fields.get(part)
        if field is None:
            return None
        value = value.get(part) if isinstance(value, dict) else None
        annotation = field.annotation
        # Unwrap Optional[...] / list[...] down to the model or union inside.
        while get_origin(annotation) is not None and not _is_entity_union(annotation):
            inner = [arg for arg in get_args(annotation) if arg is not type(None)]
            if get_origin(annotation) is list or len(inner) == 1:
                if get_origin(annotation) is list:
                    current = annotation
                    break
                annotation = inner[0]
            else:
                break
        else:
            current = annotation
    if isinstance(current, type) and issubclass(current, BaseModel):
        return current
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        try:
            return get_entity_type(value["type"]).spec_model
        except KeyError:
            return None
    return None


def _is_entity_union(annotation: Any) -> bool:
    from typing import get_args

    models = {entity_type.spec_model for entity_type in entity_types()}
    return any(arg in models for arg in get_args(annotation))


def problems_from_validation(
    error: ValidationError, root: type[BaseModel], data: Any
) -> list[Problem]:
    """Turn a pydantic ValidationError into one Problem per error, with allowed values."""
    problems: list[Problem] = []
    for item in error.errors(include_url=False):
        loc = _strip_union_tags(tuple(item["loc"]))
        kind = item["type"]
        message = str(item["msg"])
        if kind == "extra_forbidden":
            owner = _model_at(root, loc[:-1], data)
            allowed = ", ".join(owner.model_fields) if owner else ""
            message = f"unknown key {loc[-1]!r}" + (f"; allowed: {allowed}" if allowed else "")
        elif kind == "union_tag_invalid":
            tags = ", ".join(entity_type.name for entity_type in entity_types())
            message = f"unknown entity type {item['input'].get('type')!r}; allowed: {tags}"
            loc = (*loc, "type")
        elif kind == "union_tag_not_found":
            tags = ", ".join(entity_type.name for entity_type in entity_types())
            message = f"missing 'type'; allowed: {tags}"
        elif kind == "missing":
            message = "required field is missing"
        else:
            if message.startswith("Value error, "):
                message = message[len("Value error, ") :]
            if "input" in item and kind not in ("model_type",) and not isinstance(item["input"], dict | list):
                message += f" (got {item['input']!r})"
        problems.append(Problem(format_path(loc), message))
    return problems
