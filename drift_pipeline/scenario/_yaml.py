"""Strict YAML reading that keeps the node tree, so problems can name the line they are on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from ._errors import Loc, Problem, format_path

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping repeats a key; ``key_node`` lets the caller find the key's field path."""

    def __init__(self, key: object, key_node: yaml.Node) -> None:
        super().__init__(None, None, f"duplicate key {key!r}", key_node.start_mark)
        self.key_node = key_node


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys instead of silently keeping the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """Build a mapping, raising on the first key that appears twice."""
        # Checked before the base class flattens merge keys (`<<: *base`) into the node: a key
        # that overrides a merged one is the point of merging, not a duplicate.
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, list | dict):
                continue  # unhashable: the base class reports it with its own message
            if key in seen:
                raise _DuplicateKeyError(key, key_node)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True)
class YamlDocument:
    """Parsed YAML data together with the node tree it came from.

    Attributes:
        data: The constructed Python value (``None`` for an empty document).
        root: The document's root node, or ``None`` for an empty document.

    """

    data: Any
    root: yaml.Node | None

    def line_of(self, loc: Loc) -> int | None:
        """Return the 1-based line where the field at ``loc`` is written.

        A mapping field is placed on its key's line (a block value starts one line below the
        key that names it); a list item on the item's own line. A path that leaves the document
        (a missing field) is placed on the deepest part that exists; a path that matches nothing
        at all has no line.
        """
        node = self.root
        line: int | None = None
        for part in loc:
            found = _child(node, part)
            if found is None:
                break
            label, node = found
            line = label.start_mark.line + 1
        return line

    def loc_of(self, target: yaml.Node) -> Loc | None:
        """Return the field path of a mapping key node, or ``None`` if it is not in the tree."""
        return _find_key(self.root, target, (), set())


def read_yaml(text: str) -> YamlDocument | Problem:
    """Parse one YAML document strictly (no duplicate keys, safe tags only).

    Args:
        text: The file's text.

    Returns:
        The document, or a Problem with the line of the first syntax error.

    """
    try:
        loader = _StrictLoader(text)
    except yaml.reader.ReaderError as error:
        # The reader checks the whole text when it is built, before any parsing.
        return _reader_problem(text, error)
    root: yaml.Node | None = None
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except _DuplicateKeyError as error:
        loc = YamlDocument(None, root).loc_of(error.key_node) or ()
        line = error.key_node.start_mark.line + 1
        return Problem(format_path(loc), f"{error.problem}; each key may appear once", line)
    except yaml.MarkedYAMLError as error:
        return _syntax_problem(error)
    except yaml.YAMLError as error:
        return Problem("", f"YAML syntax error: {str(error).splitlines()[0]}")
    except RecursionError:
        # PyYAML composes nested collections recursively; thousands of levels exhaust the stack.
        return Problem("", "YAML nesting is too deep for a scenario file")
    finally:
        loader.dispose()
    return YamlDocument(data, root)


def _reader_problem(text: str, error: yaml.reader.ReaderError) -> Problem:
    """Name a character YAML does not allow (a control character, say) and its line."""
    character = error.character
    code = ord(character) if isinstance(character, str) else int(character)
    line = text.count("\n", 0, error.position) + 1
    column = error.position - (text.rfind("\n", 0, error.position) + 1) + 1
    return Problem(
        "",
        f"YAML syntax error, column {column}: character U+{code:04X} is not allowed in YAML "
        "text; remove it",
        line,
    )


def _syntax_problem(error: yaml.MarkedYAMLError) -> Problem:
    """Describe a YAML error on the line where the parser gave up."""
    mark = error.problem_mark or error.context_mark
    what = error.problem or error.context or "invalid YAML"
    opened = error.context_mark
    if error.problem and error.context and opened is not None and opened is not mark:
        # The cause is often where a bracket or quote was opened, lines above the failure.
        what += f" ({error.context} from line {opened.line + 1})"
    if mark is None:
        return Problem("", f"YAML syntax error: {what}")
    return Problem("", f"YAML syntax error, column {mark.column + 1}: {what}", mark.line + 1)


def _child(node: yaml.Node | None, part: int | str) -> tuple[yaml.Node, yaml.Node] | None:
    """Return (the node that names ``part``, its value node) inside ``node``."""
    if isinstance(node, yaml.MappingNode):
        # Backwards: after merge keys are flattened, the last occurrence is the one that counts.
        for key_node, value_node in reversed(node.value):
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                return key_node, value_node
    elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
        items: list[yaml.Node] = node.value
        if 0 <= part < len(items):
            return items[part], items[part]
    return None


def _find_key(node: yaml.Node | None, target: yaml.Node, loc: Loc, seen: set[int]) -> Loc | None:
    # Aliases can make the node graph cyclic (`&a [*a]`), hence the visited set.
    if node is None or id(node) in seen:
        return None
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else "?"
            if key_node is target:
                return (*loc, key)
            found = _find_key(value_node, target, (*loc, key), seen)
            if found is not None:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found = _find_key(item, target, (*loc, index), seen)
            if found is not None:
                return found
    return None
