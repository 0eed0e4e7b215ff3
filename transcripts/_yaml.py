"""Reading YAML in the importers (and the memory files): PyYAML's safe loader, with times
left as text and aliases refused."""

from __future__ import annotations

from typing import Any

import yaml

from transcripts.sanitize import NonFiniteNumber, finite_float

from .base import ImportFormatError


class TextTimesLoader(yaml.SafeLoader):
    """Times stay text (the reader parses them): YAML's own timestamps lose their zone, and a
    string that merely looks like a date must read back as the string it was.
    Aliases (``*name``) are refused: nested, a few lines expand to billions of entries.
    ``.inf`` and ``.nan`` are refused with their line: jsonb cannot store them."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not accepted: write the value out", mark
            )
        return super().compose_node(parent, index)

    def construct_yaml_float(self, node):
        try:
            return finite_float(super().construct_yaml_float(node), node.value)
        except NonFiniteNumber as exc:
            raise yaml.constructor.ConstructorError(None, None, str(exc), node.start_mark) from None


TextTimesLoader.add_constructor("tag:yaml.org,2002:float", TextTimesLoader.construct_yaml_float)


TextTimesLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_yaml(text: str, *, what: str = "YAML") -> Any:
    """One YAML document; ``ImportFormatError`` with the line of the first problem."""
    try:
        return yaml.load(text, Loader=TextTimesLoader)  # a SafeLoader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line = mark.line + 1 if mark is not None else None
        raise ImportFormatError(f"not valid {what}: {problem}", line=line) from None
