"""The models against the daemon's own OpenAPI document.

For each model and the schema it mirrors, the property names (the models'
wire names) and which of them are required must match exactly. A schema
reached through a property (`PendingAsk.callback`) is found by following
that property's `$ref`, so the test does not depend on what the daemon
names it.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, Set, Tuple, Type

import httpx
import pytest
from pydantic import BaseModel
from support import Daemon

import askbridge

# (model, where its schema is): a component name, or a component name
# followed by property names to walk.
PAIRS: Tuple[Tuple[Type[BaseModel], Tuple[str, ...]], ...] = (
    (askbridge.Ask, ("AskInput",)),
    (askbridge.Question, ("QuestionInput",)),
    (askbridge.Option, ("CanonicalOption",)),
    (askbridge.Context, ("CanonicalContext",)),
    (askbridge.Thread, ("ThreadBlock",)),
    (askbridge.Target, ("TargetParts",)),
    (askbridge.ReplyUser, ("ReplyUser",)),
    (askbridge.CanonicalAsk, ("CanonicalAsk",)),
    (askbridge.CanonicalQuestion, ("CanonicalQuestion",)),
    (askbridge.CanonicalThread, ("CanonicalThread",)),
    (askbridge.Escalation, ("CanonicalEscalation",)),
    (askbridge.EscalationStep, ("AskInput", "escalate")),
    (askbridge.Problem, ("Problem",)),
    (askbridge.AskPlace, ("AskPlace",)),
    (askbridge.Responder, ("Responder",)),
    (askbridge.Detail, ("Detail",)),
    (askbridge.Outcome, ("Outcome",)),
    (askbridge.EndedAsk, ("EndedAsk",)),
    (askbridge.PendingAsk, ("PendingAsk",)),
    (askbridge.Clarify, ("Clarify",)),
    (askbridge.ReplyResponse, ("ReplyResponse",)),
    (askbridge.ErrorBody, ("ErrorBody",)),
    (askbridge.Callback, ("PendingAsk", "callback")),
    (askbridge.Delivery, ("PendingAsk", "callback", "deliveries")),
)


@pytest.fixture(scope="module")
def openapi(daemon: Daemon) -> Dict[str, Any]:
    response = httpx.get(f"{daemon.url}/v1/openapi.json", timeout=10)
    response.raise_for_status()
    return response.json()


@pytest.mark.parametrize(
    "model, location",
    PAIRS,
    ids=[f"{model.__name__}-{'.'.join(where)}" for model, where in PAIRS],
)
def test_model_matches_schema(openapi: Dict[str, Any], model: Type[BaseModel], location: Tuple[str, ...]) -> None:
    schema = locate(openapi, location)
    properties, required = object_shape(openapi, schema)
    fields = {info.alias or name: info.is_required() for name, info in model.model_fields.items()}

    problems = []
    for name in sorted(set(properties) - set(fields)):
        problems.append(f"the schema has {name!r}, the model does not")
    for name in sorted(set(fields) - set(properties)):
        problems.append(f"the model has {name!r}, the schema does not")
    for name in sorted(set(fields) & set(properties)):
        if fields[name] != (name in required):
            want = "required" if name in required else "optional"
            problems.append(f"{name!r} is {want} in the schema, not in the model")
    if problems:
        pytest.fail(f"{model.__name__} vs {'.'.join(location)}:\n  " + "\n  ".join(problems), pytrace=False)


def test_every_model_is_checked() -> None:
    checked = {model for model, _ in PAIRS}
    # WebhookEvent is the ask view (checked above) plus two fields.
    exempt = {askbridge.WebhookEvent}
    models = {
        value
        for value in vars(askbridge).values()
        if isinstance(value, type) and issubclass(value, BaseModel)
    }
    assert models - checked - exempt == set()


def locate(doc: Dict[str, Any], location: Tuple[str, ...]) -> Dict[str, Any]:
    """The schema at a component name, then down its properties."""
    components = doc["components"]["schemas"]
    if location[0] not in components:
        pytest.fail(f"no schema {location[0]!r} in the document", pytrace=False)
    schema = resolve(doc, components[location[0]])
    for name in location[1:]:
        properties, _ = object_shape(doc, schema)
        if name not in properties:
            pytest.fail(f"{'.'.join(location)}: the schema has no property {name!r}", pytrace=False)
        schema = unwrap(doc, properties[name])
    return schema


def resolve(doc: Dict[str, Any], schema: Dict[str, Any]) -> Dict[str, Any]:
    while "$ref" in schema:
        prefix = "#/components/schemas/"
        ref = schema["$ref"]
        assert ref.startswith(prefix), ref
        schema = doc["components"]["schemas"][ref[len(prefix):]]
    return schema


def unwrap(doc: Dict[str, Any], schema: Dict[str, Any]) -> Dict[str, Any]:
    """The object schema inside a property: through `$ref`, a nullable
    `oneOf`/`anyOf`, and an array's `items`."""
    schema = resolve(doc, schema)
    for key in ("oneOf", "anyOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"]
            assert len(options) == 1, f"cannot pick one schema of {schema[key]}"
            return unwrap(doc, options[0])
    if "items" in schema:
        return unwrap(doc, schema["items"])
    return schema


def object_shape(doc: Dict[str, Any], schema: Dict[str, Any]) -> Tuple[Dict[str, Any], Set[str]]:
    """The properties and required names of an object schema, merging
    `allOf` parts (as EndedAsk is: the Outcome, then the ask)."""
    schema = resolve(doc, schema)
    properties: Dict[str, Any] = {}
    required: Set[str] = set()
    for part in _parts(doc, schema):
        properties.update(part.get("properties", {}))
        required.update(part.get("required", []))
    return properties, required


def _parts(doc: Dict[str, Any], schema: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    schema = resolve(doc, schema)
    yield schema
    for part in schema.get("allOf", []):
        yield from _parts(doc, part)
