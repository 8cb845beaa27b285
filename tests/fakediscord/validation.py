"""Discord's OpenAPI spec as a validator: match a REST call to its operation, check bodies against its schemas.

The spec (`discord-openapi.json`, OpenAPI 3.1, so its schemas are JSON Schema 2020-12) is vendored in `spec/`
beside this module with its MIT licence; `ARENA_DISCORD_OPENAPI` overrides the path. Every `$ref` resolves inside
the one document through a `referencing` registry, so no schema is copied or rewritten by hand.

One deliberate relaxation, for request bodies only: the spec types every snowflake as a decimal string, but
Discord accepts integers too, and discord.py sends integers where a file's attachment entry names its upload
(`{"id": 0, "filename": ...}` pointing at `files[0]`). Responses the fake sends are checked against the strict
spec.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, relevance
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

log = logging.getLogger(__name__)

SPEC_ENV_VAR = "ARENA_DISCORD_OPENAPI"
SPEC_URI = "urn:discord-openapi"
HTTP_METHODS = ("get", "put", "post", "patch", "delete")


def default_spec_path() -> Path:
    """`$ARENA_DISCORD_OPENAPI`, else the copy vendored beside this module (`spec/`, with Discord's MIT licence)."""
    configured = os.environ.get(SPEC_ENV_VAR)
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parent / "spec" / "discord-openapi.json"


@dataclass(frozen=True)
class SchemaError:
    """One place where a body breaks its schema: a path into the body and what is wrong there."""

    path: tuple[str | int, ...]
    message: str
    code: str

    def __str__(self) -> str:
        where = ".".join(str(part) for part in self.path) or "<body>"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Operation:
    """One (method, path template) of the spec, with JSON pointers to its request and response schemas."""

    operation_id: str
    method: str
    template: str
    pattern: re.Pattern[str] = field(repr=False)
    literal_segments: int
    request_schemas: dict[str, str] = field(repr=False)  # content type -> pointer
    response_schemas: dict[str, str | None] = field(repr=False)  # status ("200", "204", "4XX") -> pointer


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _template_regex(template: str) -> re.Pattern[str]:
    parts = [("[^/]+" if re.fullmatch(r"\{[^}]+\}", seg) else re.escape(seg)) for seg in template.split("/")]
    return re.compile("/".join(parts) + "/?")


class OpenAPISpec:
    """Operations of the spec and validators for their bodies (compiled on first use, then cached)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self._strict = Registry().with_resource(SPEC_URI, Resource(contents=document, specification=DRAFT202012))
        lenient = copy.deepcopy(document)
        snowflake = lenient["components"]["schemas"]["SnowflakeType"]
        lenient["components"]["schemas"]["SnowflakeType"] = {"anyOf": [snowflake, {"type": "integer", "minimum": 0}]}
        self._lenient = Registry().with_resource(SPEC_URI, Resource(contents=lenient, specification=DRAFT202012))
        self._validators: dict[tuple[str, bool], Draft202012Validator] = {}
        self.operations = self._collect_operations()

    def _collect_operations(self) -> list[Operation]:
        operations: list[Operation] = []
        for template, item in self.document["paths"].items():
            for method in HTTP_METHODS:
                op = item.get(method)
                if op is None:
                    continue
                base = f"/paths/{_escape(template)}/{method}"
                requests = {
                    content_type: f"{base}/requestBody/content/{_escape(content_type)}/schema"
                    for content_type in op.get("requestBody", {}).get("content", {})
                }
                responses: dict[str, str | None] = {}
                for status, response in op.get("responses", {}).items():
                    pointer = response["$ref"].removeprefix("#") if "$ref" in response else f"{base}/responses/{status}"
                    resolved = self.resolve_pointer(pointer)
                    has_json = "application/json" in resolved.get("content", {})
                    responses[status] = f"{pointer}/content/application~1json/schema" if has_json else None
                literal = sum(1 for seg in template.split("/") if seg and not seg.startswith("{"))
                operations.append(
                    Operation(
                        operation_id=op["operationId"],
                        method=method.upper(),
                        template=template,
                        pattern=_template_regex(template),
                        literal_segments=literal,
                        request_schemas=requests,
                        response_schemas=responses,
                    )
                )
        # More literal segments first: `/messages/@original` wins over `/messages/{message_id}`.
        operations.sort(key=lambda op: -op.literal_segments)
        return operations

    def resolve_pointer(self, pointer: str) -> Any:
        node: Any = self.document
        for token in pointer.strip("/").split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            node = node[int(token)] if isinstance(node, list) else node[token]
        return node

    def match(self, method: str, path: str) -> Operation | None:
        """The operation for `method` on `path` (relative to `/api/v10`), or None when the spec has none."""
        for op in self.operations:
            if op.method == method.upper() and op.pattern.fullmatch(path):
                return op
        return None

    def validator(self, pointer: str, *, lenient: bool) -> Draft202012Validator:
        key = (pointer, lenient)
        if key not in self._validators:
            registry = self._lenient if lenient else self._strict
            schema = {"$ref": f"{SPEC_URI}#{pointer}"}
            self._validators[key] = Draft202012Validator(schema, registry=registry)
        return self._validators[key]

    def component_pointer(self, name: str) -> str:
        if name not in self.document["components"]["schemas"]:
            raise KeyError(f"no schema {name!r} in the spec")
        return f"/components/schemas/{name}"

    def validate(self, pointer: str, instance: Any, *, lenient: bool = False) -> list[SchemaError]:
        """The errors of `instance` against the schema at `pointer`; empty when it conforms."""
        errors = list(self.validator(pointer, lenient=lenient).iter_errors(instance))
        if not errors:
            return []
        return [_describe(self._most_specific(max(errors, key=relevance)))]

    @staticmethod
    def _most_specific(error: ValidationError) -> ValidationError:
        """Descend into unions, into the branch that plausibly applies (not ruled out by its type or `type` tag)."""
        while error.validator in ("anyOf", "oneOf") and error.context:
            depth = len(error.absolute_path)
            branches: dict[Any, list[ValidationError]] = {}
            for sub in error.context:
                branches.setdefault(sub.relative_schema_path[0], []).append(sub)
            plausible = [
                sub for subs in branches.values() if not any(_rules_out(s, depth) for s in subs) for sub in subs
            ]
            error = max(plausible or error.context, key=relevance)
        return error

    def validate_request(self, op: Operation, content_type: str, body: Any) -> list[SchemaError]:
        pointer = op.request_schemas.get(content_type)
        if pointer is None:
            if not op.request_schemas:
                return [] if body in (None, b"", {}) else [SchemaError((), "this operation takes no body", "NO_BODY")]
            accepted = ", ".join(op.request_schemas)
            return [SchemaError((), f"content type {content_type!r} is not accepted ({accepted})", "CONTENT_TYPE")]
        return self.validate(pointer, body, lenient=True)

    def validate_response(self, op: Operation, status: int, body: Any) -> list[SchemaError]:
        pointer = op.response_schemas.get(str(status), op.response_schemas.get(f"{str(status)[0]}XX"))
        if pointer is None:
            return []
        return self.validate(pointer, body)

    def validate_component(self, name: str, instance: Any) -> list[SchemaError]:
        """Check one object against `components/schemas/<name>` (strict), e.g. the fake's own gateway payloads."""
        return self.validate(self.component_pointer(name), instance)


def _rules_out(error: ValidationError, depth: int) -> bool:
    """Whether an error inside a union branch shows the branch does not apply: wrong JSON type, or wrong `type` tag."""
    below = list(error.absolute_path)[depth:]
    return (error.validator == "type" and not below) or (error.validator in ("enum", "const") and below == ["type"])


_CODES = {
    "maxLength": "BASE_TYPE_MAX_LENGTH",
    "minLength": "BASE_TYPE_MIN_LENGTH",
    "maxItems": "BASE_TYPE_MAX_LENGTH",
    "minItems": "BASE_TYPE_MIN_LENGTH",
    "required": "BASE_TYPE_REQUIRED",
    "type": "BASE_TYPE_BAD_TYPE",
    "enum": "BASE_TYPE_CHOICES",
    "maximum": "NUMBER_TYPE_MAX",
    "minimum": "NUMBER_TYPE_MIN",
}


_MESSAGES = {
    "maxLength": "Must be {} or fewer in length.",
    "minLength": "Must be {} or more in length.",
    "maxItems": "Must be {} or fewer in length.",
    "minItems": "Must be {} or more in length.",
    "maximum": "int value should be less than or equal to {}.",
    "minimum": "int value should be greater than or equal to {}.",
}
MAX_MESSAGE_CHARS = 300


def _describe(error: ValidationError) -> SchemaError:
    """Discord's wording where it has one (the spec's limits), else jsonschema's, cut short."""
    path = tuple(error.absolute_path)
    validator = str(error.validator)
    if validator == "required":
        missing = [name for name in error.validator_value if name not in (error.instance or {})]
        path = (*path, missing[0]) if missing else path
        message = "This field is required"
    elif validator in _MESSAGES:
        message = _MESSAGES[validator].format(error.validator_value)
    else:
        message = error.message if len(error.message) <= MAX_MESSAGE_CHARS else error.message[:MAX_MESSAGE_CHARS] + "…"
    return SchemaError(path, message, _CODES.get(validator, "BASE_TYPE_INVALID"))


def discord_error_body(errors: list[SchemaError]) -> dict[str, Any]:
    """Discord's 400 body for a bad form: code 50035 and an `errors` tree keyed by the body path."""
    tree: dict[str, Any] = {}
    for error in errors:
        node = tree
        for part in error.path:
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": error.code, "message": error.message})
    return {"code": 50035, "message": "Invalid Form Body", "errors": tree}


@cache
def load_spec(path: Path | None = None) -> OpenAPISpec:
    """The spec at `path` (default: `default_spec_path()`), parsed once per process."""
    resolved = (path or default_spec_path()).resolve()
    if not resolved.is_file():
        raise FileNotFoundError(f"Discord's OpenAPI spec is not at {resolved}; set {SPEC_ENV_VAR} to its path")
    log.debug("loading Discord's OpenAPI spec from %s", resolved)
    return OpenAPISpec(json.loads(resolved.read_text(encoding="utf-8")))
