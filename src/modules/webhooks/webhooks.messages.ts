// The webhooks module's user-facing messages (subscriptions, DESIGN.md §14), registered in src/messages.ts.
export const webhooksMessages = {
  'webhooks.subscription_created': { en: 'Webhook subscription created', lt: 'Webhook prenumerata sukurta' },
  'webhooks.subscription_updated': { en: 'Webhook subscription updated', lt: 'Webhook prenumerata atnaujinta' },
  'webhooks.subscription_deleted': { en: 'Webhook subscription deleted', lt: 'Webhook prenumerata ištrinta' },
  'webhooks.ping_queued': { en: 'Test event queued; it is sent at once', lt: 'Bandomasis įvykis įtrauktas į eilę; siunčiamas iš karto' },
  'webhooks.subscription_limit': {
    en: 'A partner has at most {limit} webhook subscriptions',
    lt: 'Partneris gali turėti ne daugiau kaip {limit} webhook prenumeratų',
  },
  'webhooks.unknown_events': { en: 'Unknown event names: {names}', lt: 'Nežinomi įvykių pavadinimai: {names}' },
  'webhooks.url_private': {
    en: 'Must be a public address ({reason})',
    lt: 'Turi būti viešas adresas ({reason})',
  },
  'resource.webhook_subscription': { en: 'Webhook subscription', lt: 'Webhook prenumerata' },
} as const;

type WebhooksMessages = typeof webhooksMessages;
declare module '../../shared/i18n.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds this module's keys
  interface Messages extends WebhooksMessages {}
}
