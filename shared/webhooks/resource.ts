import type { AttemptLogEntry, WebhookEndpoint } from '../db/webhooks.js'

/** An endpoint as the API shows it: never its secret, which only its creation and rotation answer. */
export function toEndpointResource(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    event_types: endpoint.eventTypes,
    description: endpoint.description,
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    livemode: endpoint.livemode,
    created_at: endpoint.createdAt.toISOString(),
  }
}

/** One attempt of the delivery log. */
export function toAttemptResource(entry: AttemptLogEntry) {
  return {
    event_id: entry.eventId,
    event_type: entry.eventType,
    attempt: entry.attempt,
    status: entry.status,
    response_status: entry.responseStatus,
    duration_ms: entry.durationMs,
    error: entry.error,
    next_attempt_at: entry.nextAttemptAt?.toISOString() ?? null,
    at: entry.at.toISOString(),
  }
}
