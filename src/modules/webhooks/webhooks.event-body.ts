// The text of an event body as the repository stores it (its own file so that
// webhooks.events.ts, which builds it, and webhooks.repository.ts, which writes it, import
// it from below instead of from each other).

/**
 * An event body's text around its `sequence`, which the inserting statement draws from the
 * database: body = head + sequence + tail, exactly JSON.stringify of the EventBody.
 */
export interface EventBodyText {
  head: string;
  tail: string;
}
