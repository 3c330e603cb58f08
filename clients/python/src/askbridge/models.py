"""Typed models of what askbridge's HTTP API sends and returns.

Each model mirrors one schema of the daemon's OpenAPI document
(`GET /v1/openapi.json`); the package's drift test checks that the field
names and which of them are required still match. Python names are
snake_case, the JSON on the wire is camelCase: parse with
`Model.model_validate(data)`, build with either spelling
(`Question(multi_select=True)` or `Question(multiSelect=True)`).

Fields the server sends that a model does not know are kept (in
`model.model_extra`), never an error, so a newer daemon does not break an
older client. Values with a fixed set today that may grow (a channel, how
an answer came in) are plain strings; their known values are listed in the
field's description.

Python 3.9 is supported, so the annotations use `Optional`, `List` and
`Dict` rather than `X | None` and `list[X]`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Dict, List, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "AskPlace",
    "Ask",
    "AskView",
    "Callback",
    "CallbackEvent",
    "CanonicalAsk",
    "CanonicalQuestion",
    "CanonicalThread",
    "Clarify",
    "Context",
    "Delivery",
    "Detail",
    "EndedAsk",
    "ErrorBody",
    "Escalation",
    "EscalationStep",
    "Option",
    "Outcome",
    "PendingAsk",
    "Problem",
    "Question",
    "QuestionType",
    "ReplyResponse",
    "ReplyUser",
    "Responder",
    "Target",
    "Thread",
    "WebhookEvent",
]


def _camel(name: str) -> str:
    """`answered_by` -> `answeredBy`: the wire name of a Python field name."""
    first, *rest = name.split("_")
    return first + "".join(word.capitalize() for word in rest)


class _Model(BaseModel):
    """Common settings: camelCase on the wire, either name in Python, and
    unknown fields kept rather than refused."""

    model_config = ConfigDict(
        alias_generator=_camel,
        populate_by_name=True,
        extra="allow",
    )


QuestionType = Literal["single", "multi", "text", "textarea", "confirm"]
"""What kind of answer a question expects."""

CallbackEvent = Literal["ask.posted", "ask.reminded", "ask.escalated", "ask.ended"]
"""The events a webhook can be sent for; `ask.ended` is always sent."""

Id = Union[str, int]
"""An id the API takes as a string or a number."""


# --- What an agent sends -------------------------------------------------


class Option(_Model):
    """One option of a choice question (schema `CanonicalOption`).

    In a `Question`, an option may also be given as its label alone.
    """

    label: str
    description: Optional[str] = None
    value: Optional[str] = Field(
        default=None, description="What the agent gets back in `details[].values` instead of the label."
    )
    recommended: Optional[bool] = None
    prompt: Optional[str] = Field(
        default=None, description="Agent-choice only: the message to continue with when chosen."
    )


class Context(_Model):
    """A block shown above the questions: a command, a diff, a plan
    (schema `CanonicalContext`)."""

    text: str
    language: Optional[str] = None


class Thread(_Model):
    """The thread an ask is posted in with the other asks of the same key
    (schema `ThreadBlock`); the title is the key when absent."""

    key: str
    title: Optional[str] = None


class Target(_Model):
    """A target in parts (schema `TargetParts`):
    `Target(channel="telegram", chat=-100123, thread=7, user=42)` is
    `telegram:-100123/7@42`. A target is usually given as that string."""

    channel: str
    chat: Optional[Id] = None
    thread: Optional[Id] = None
    user: Optional[Id] = None


class Question(_Model):
    """One question as sent (schema `QuestionInput`).

    Only `question` is needed: the id is derived from the header or the
    text, the type is `single` when there are options and `text` otherwise.
    """

    id: Optional[Id] = Field(default=None, description="The key of this question's answer in the outcome.")
    header: Optional[str] = Field(default=None, description="A short chip label, at most 12 characters.")
    question: str
    type: Optional[QuestionType] = None
    multi_select: Optional[bool] = None
    options: Optional[List[Union[str, Option]]] = None
    default: Any = Field(default=None, description="The default answer, shown as a hint only.")
    placeholder: Optional[str] = None
    required: Optional[bool] = Field(default=None, description="`False` lets the person skip this question.")
    letters: Optional[bool] = None


class EscalationStep(_Model):
    """A step of an ask's escalation, as sent (schema `EscalationInput`):
    where the ask is passed on to when still open `after_seconds` after it
    was created."""

    after_seconds: int
    to: Union[str, Target, List[Union[str, Target]]]


class Ask(_Model):
    """An ask as sent (schema `AskInput`)."""

    to: Optional[Union[str, Target, List[Union[str, Target]]]] = Field(
        default=None, description="Where to post it; absent: the daemon's default target (`web` unless set)."
    )
    title: Optional[str] = None
    context: Optional[Union[str, Context]] = None
    thread: Optional[Union[str, Thread]] = None
    questions: List[Question]
    timeout_seconds: Optional[int] = Field(
        default=None, description="How long the ask stays open: 900 when absent, kept within 30-3600."
    )
    escalate: Optional[List[EscalationStep]] = Field(
        default=None,
        description="Where to pass the ask on to when nobody answers in time; `[]`: none; absent: the daemon's default.",
    )
    remind_after_seconds: Optional[int] = Field(
        default=None, description="Remind the person this long after asking (0: never; at least 30)."
    )
    remind_every_seconds: Optional[int] = Field(
        default=None, description="Remind again at this interval (at most 3 reminders in all)."
    )
    callback_url: Optional[str] = Field(
        default=None, description="Where the daemon POSTs webhook events for this ask (an https URL)."
    )
    callback_events: Optional[List[CallbackEvent]] = Field(
        default=None, description="Events to send besides `ask.ended`, which is always sent."
    )
    approval: Optional[bool] = Field(
        default=None,
        description="An approval: only the one person each place names may answer it "
        "(never the HTTP API, unless the place is `web` and the daemon has a token).",
    )


class ReplyUser(_Model):
    """Who answers over the API (schema `ReplyUser`); the web page's user
    (id `web`) when absent."""

    id: Optional[Id] = None
    name: Optional[str] = None


# --- What the daemon returns ---------------------------------------------


class CanonicalQuestion(_Model):
    """One question of a normalised ask (schema `CanonicalQuestion`)."""

    id: str
    header: str
    question: str
    type: str = Field(description="`single`, `multi`, `text`, `textarea` or `confirm`.")
    options: Optional[List[Option]] = None
    default: Optional[List[str]] = None
    placeholder: Optional[str] = None
    required: bool = True
    letters: Optional[bool] = None


class CanonicalThread(_Model):
    """A normalised ask's thread (schema `CanonicalThread`)."""

    key: str
    title: str


class Escalation(_Model):
    """One escalation step of a normalised ask (schema `CanonicalEscalation`)."""

    after_seconds: int
    to: str


class CanonicalAsk(_Model):
    """The ask as askbridge normalised it (schema `CanonicalAsk`)."""

    title: Optional[str] = None
    context: Optional[Context] = None
    thread: Optional[CanonicalThread] = None
    questions: List[CanonicalQuestion]
    timeout_seconds: int
    to: Optional[Union[str, List[str]]] = None
    escalate: Optional[List[Escalation]] = None
    remind_after_seconds: Optional[int] = None
    remind_every_seconds: Optional[int] = None
    callback_url: Optional[str] = None
    callback_events: Optional[List[str]] = Field(
        default=None, description="Events sent besides `ask.ended`; absent when only `ask.ended`."
    )
    approval: Optional[bool] = Field(
        default=None, description="`true` for an approval; absent otherwise."
    )


class Problem(_Model):
    """One problem with a request, or one fix the normaliser made: where
    (a JSON path such as `questions[1].options`) and what."""

    path: str
    message: str


class AskPlace(_Model):
    """One place an ask is posted to, and how it stands there."""

    target: str
    state: str = Field(
        description="`pending`, `posted`, `escalated`, `reminded`, `closed`, `delivery_failed` or `not_posted`."
    )


class Delivery(_Model):
    """One webhook delivery of an ask (`callback.deliveries[]`)."""

    id: str = Field(description="`whd_...`, the same across retries of this delivery.")
    event: str
    state: str = Field(
        description="`waiting` (an `ask.ended` delivery while the ask is pending), `pending` (being sent, "
        "or to be tried again at `next_attempt_at`), `delivered`, `gone` (the receiver answered 410) "
        "or `failed` (given up)."
    )
    attempts: int
    last_status: Optional[int] = None
    last_error: Optional[str] = None
    next_attempt_at: Optional[datetime] = None
    delivered_at: Optional[datetime] = None


class Callback(_Model):
    """An ask's webhook and its deliveries, shown by `GET /v1/asks/{id}`
    when the ask has a `callbackUrl` (not in other responses, nor in the
    webhook's own body)."""

    url: str
    events: List[str]
    deliveries: List[Delivery]


class Responder(_Model):
    """Who answered (or skipped) an ask."""

    channel: str = Field(description="`telegram`, `discord`, `slack`, `feishu`, `matrix`, `teams`, `email`, `web`, `host`.")
    user_id: str
    name: Optional[str]
    place: Optional[str]


class Detail(_Model):
    """How one question was answered."""

    id: str
    selected: List[str] = Field(description="The chosen labels, verbatim.")
    values: List[str] = Field(description="The chosen options' values; for a text question, the text.")
    other: Optional[str] = Field(description="The person's own words on a choice or confirm question.")
    via: str = Field(description="`button`, `select`, `text`, `modal`, `web` or `host`.")
    prompts: Optional[List[str]] = None
    skipped: Optional[bool] = None


class Outcome(_Model):
    """What an agent gets when an ask ends (docs/outcome.md).

    `answers` maps each answered question id to its list of strings.
    `status` is `answered` or `no_answer`; then `reason` says why:
    `timeout`, `skipped`, `cancelled` or `delivery_failed`.
    """

    id: str
    status: Literal["answered", "no_answer"]
    reason: Optional[str] = Field(description="`None` when answered, else why not.")
    failure: Optional[str] = None
    answers: Dict[str, List[str]]
    details: List[Detail]
    answered_by: Optional[Responder]
    answered_at: datetime
    text: str
    continuation: str


class EndedAsk(Outcome):
    """An ended ask as the API returns it: the outcome, then the ask."""

    ask: CanonicalAsk
    to: str
    created_at: datetime
    warnings: Optional[List[Problem]] = None
    places: Optional[List[AskPlace]] = None
    callback: Optional[Callback] = None


class PendingAsk(_Model):
    """An ask still waiting for answers."""

    id: str
    status: Literal["pending"]
    ask: CanonicalAsk
    to: str
    created_at: datetime
    expires_at: datetime
    answered: List[str] = Field(description="Ids of the questions answered so far.")
    open: List[str] = Field(description="Ids of the questions still open.")
    remind_at: Optional[List[datetime]] = None
    warnings: Optional[List[Problem]] = None
    places: Optional[List[AskPlace]] = None
    host_key: Optional[str] = Field(
        default=None,
        description="Only in the response that created the ask: makes a reply the agent host's own.",
    )
    callback: Optional[Callback] = None


AskView = Annotated[Union[PendingAsk, EndedAsk], Field(discriminator="status")]
"""An ask as the API returns it: a `PendingAsk`, or an `EndedAsk` (which is
an `Outcome`). Tell them apart with `isinstance`."""


class Clarify(_Model):
    """A question whose text reply fitted several options."""

    id: str
    candidates: List[str]


class ReplyResponse(_Model):
    """What `POST /v1/asks/{id}/reply` did."""

    result: str = Field(description="`accepted` (still pending), `answered` or `ended` (skipped).")
    ask: AskView
    still_open: List[str]
    clarify: List[Clarify]


class ErrorBody(_Model):
    """The `error` object of an error response."""

    code: str
    message: str
    path: Optional[str]
    errors: Optional[List[Problem]] = None


class WebhookEvent(_Model):
    """A webhook's body: the event, the delivery id, and the ask as
    `GET /v1/asks/{id}` showed it when the event happened.

    On the wire these are one flat object (the ask's fields plus `event`
    and `deliveryId`); here the ask is in `ask`. For `ask.ended`, `ask` is
    an `EndedAsk`, so `event.ask.answers` are the answers.
    """

    event: str = Field(description="`ask.posted`, `ask.reminded`, `ask.escalated` or `ask.ended`.")
    delivery_id: str = Field(description="`whd_...`, the same across retries: use it to drop repeats.")
    ask: AskView

    @model_validator(mode="before")
    @classmethod
    def _split_flat_body(cls, data: Any) -> Any:
        # The webhook body is flat: an ask view (it has `status` at the top)
        # plus `event` and `deliveryId`. Move the view under `ask`.
        if isinstance(data, dict) and "status" in data:
            view = {k: v for k, v in data.items() if k not in ("event", "deliveryId", "delivery_id")}
            return {
                "event": data.get("event"),
                "deliveryId": data.get("deliveryId", data.get("delivery_id")),
                "ask": view,
            }
        return data
