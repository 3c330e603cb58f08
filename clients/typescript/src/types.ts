// The types the client takes and returns, built on the ones generated from
// the daemon's OpenAPI document (./openapi.ts).

import type * as api from "./openapi.js";

export type {
  AnswerVia,
  AnswersReply,
  AskPlace,
  CanonicalAsk,
  CanonicalQuestion,
  CanonicalOption,
  Channel,
  ContextInput,
  Detail,
  ErrorBody,
  NoAnswerReason,
  OptionInput,
  Outcome,
  OutcomeStatus,
  Problem,
  QuestionInput,
  QuestionType,
  ReplyRequest,
  ReplyResponse,
  ReplyResult,
  ReplyUser,
  Responder,
  SkipReply,
  TargetInput,
  TextReply,
  ThreadInput,
} from "./openapi.js";

/** The events a webhook can be sent for. `ask.ended` is always sent. */
export type WebhookEvent = api.CallbackEventName;

/** One webhook delivery, as `GET /v1/asks/{id}` shows it under `callback`. */
export type CallbackDelivery = api.CallbackDelivery;

/** An ask's webhook and its deliveries (only on asks with a `callbackUrl`). */
export type CallbackState = api.Callback;

/** An ask in the canonical form, as `POST /v1/asks` takes it. */
export type AskBody = api.AskInput;

/** A pending ask: still waiting for answers. */
export type PendingAsk = api.PendingAsk;

/** An ended ask: its outcome (`status`, `reason`, `answers`, …) plus the ask. */
export type EndedAsk = api.EndedAsk;

/** An ask as the API returns it: pending, or ended with its outcome. */
export type Ask = PendingAsk | EndedAsk;

/** What a webhook request carries: the ask as `GET /v1/asks/{id}` shows it, plus the event. */
export type WebhookPayload = (api.PendingAsk | api.EndedAsk) & {
  event: WebhookEvent;
  /** `whd_…`, the same as the `askbridge-delivery` header. */
  deliveryId: string;
};

/** True when the ask has ended; it then carries its outcome. */
export function isEnded<T extends { status: string }>(
  ask: T,
): ask is Exclude<T, { status: "pending" }> {
  return ask.status !== "pending";
}

/** True when the ask is still waiting for answers. */
export function isPending<T extends { status: string }>(ask: T): ask is Extract<T, { status: "pending" }> {
  return ask.status === "pending";
}

/** True when the ask ended with every question answered. */
export function isAnswered<T extends { status: string }>(
  ask: T,
): ask is Exclude<T, { status: "pending" }> & { status: "answered"; reason: null } {
  return ask.status === "answered";
}
