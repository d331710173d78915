// The spec's SMS interface (API credentials): send, status, consent. Validation failures on
// /sms/* are Shape A with code VALIDATION_ERROR (http-core maps schema errors; the service
// reports the rest the same way).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../infra/auth.js';
import type { Idempotency } from '../../infra/idempotency.js';
import { envelopeOf } from '../../shared/envelope.js';
import { AppError, notFound, unwrap, type FieldErrors } from '../../shared/errors.js';
import { toFieldErrors } from '../../infra/http-core.js';
import type { FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { DateTime, Envelope, errorResponses, LocaleParam, LocaleParams } from '../../shared/schemas.js';
import { MAX_VALIDITY_MINUTES, statusView, type SmsService } from './sms.service.js';
import { SendData, statusProperties } from './sms.schemas.js';

const SendBody = Type.Object({
  source: Type.String({
    minLength: 1,
    maxLength: 11,
    pattern: '^[A-Za-z0-9 ]+$',
    'x-message': 'sms.invalid_source',
    description: 'Sender name: letters, digits and spaces, at most 11 characters; must be approved for the account.',
  }),
  destination: Type.String({ minLength: 1, maxLength: 32, description: 'Mobile number in E.164 form; the plus sign is optional.' }),
  message: Type.String({ minLength: 1, maxLength: 6400, description: 'At most 1600 characters (Unicode code points).' }),
  receipt: Type.Optional(Type.Boolean({ default: false, description: 'Send status updates to receiptURL.' })),
  receiptURL: Type.Optional(Type.String({ maxLength: 2048, description: 'Required when receipt is true; a public http(s) URL.' })),
  scheduled: Type.Optional(Type.String({ maxLength: 64, description: 'Future delivery time (ISO 8601).' })),
  validity: Type.Optional(Type.String({ maxLength: 64, description: 'Expiry time (ISO 8601); undelivered messages expire after it.' })),
  validityMinutes: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_VALIDITY_MINUTES,
      description: 'Alternative to validity: minutes from the scheduled time (or from now).',
    }),
  ),
  marketing_consent: Type.Optional(Type.Boolean({ description: "Register the recipient's marketing consent with this message." })),
  client_ip: Type.Optional(Type.String({ maxLength: 64, description: "The consenting end user's IP address." })),
  client_user_agent: Type.Optional(Type.String({ maxLength: 1024 })),
  consent_page_url: Type.Optional(Type.String({ maxLength: 2048 })),
  transliterate: Type.Optional(
    Type.Boolean({
      description:
        'Replace Lithuanian/Polish letters and typographic characters by GSM-7 look-alikes so the text fits 160/153 per part. Off unless asked for here or in the account settings.',
    }),
  ),
});

const StatusData = Type.Object(statusProperties);

const ConsentBody = Type.Object({
  phone_number: Type.String({ minLength: 1, maxLength: 32, description: 'E.164 recommended.' }),
  consent_given: Type.Boolean({ description: 'true = opt-in, false = revoke.' }),
  consent_source: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 50,
      pattern: '^[A-Za-z0-9_.-]+$',
      default: 'api',
      description: 'e.g. website_form, pos, app, phone_call, checkout_page, mobile_app, pos_terminal',
    }),
  ),
  client_ip: Type.Optional(Type.String({ maxLength: 64 })),
  client_user_agent: Type.Optional(Type.String({ maxLength: 1024 })),
  consent_page_url: Type.Optional(Type.String({ maxLength: 2048 })),
});

export const ConsentData = Type.Object({
  phone_number: Type.String(),
  consent_given: Type.Boolean(),
  consent_source: Type.String(),
  consent_date: Type.Optional(DateTime),
  revoked_at: Type.Optional(DateTime),
});

/**
 * One 422 with every problem: the schema's errors merged with the service's field checks
 * (which skip fields the schema already refused).
 */
function rejectWithAllErrors(req: FastifyRequest, serviceErrors: FieldErrors): void {
  const schemaErrors = req.validationError
    ? toFieldErrors((req.validationError as Error & { validation: ErrorObject[] }).validation)
    : {};
  const merged: FieldErrors = { ...serviceErrors };
  for (const [field, messages] of Object.entries(schemaErrors)) merged[field] = messages;
  if (Object.keys(merged).length > 0) throw new AppError('SMS_VALIDATION', { fields: merged });
}

/** A body that failed the schema may be anything (null, an array, a string). */
const objectOrEmpty = <T>(body: T): T => (body !== null && typeof body === 'object' && !Array.isArray(body) ? body : ({} as T));

export const smsRoutes: FastifyPluginAsyncTypebox<{ sms: SmsService; idempotency: Idempotency }> = async (app, { sms, idempotency }) => {
  app.post(
    '/:locale/sms/send',
    {
      config: { auth: 'api' },
      attachValidation: true,
      schema: {
        tags: ['sms'],
        summary: 'Queue an SMS',
        description:
          'Charges parts × price to the SMS account and queues the message; `200 queued` means it is committed and will be handed to the carrier once. Honours Idempotency-Key. Response headers X-SMS-Encoding (GSM-7 or UCS-2) and X-SMS-Transliterated report how the text is sent.',
        params: LocaleParams,
        body: SendBody,
        response: { 200: Envelope(SendData), ...errorResponses(400, 401, 409, 422, 429) },
      },
    },
    async (req, reply) => {
      const { partnerId } = principalOf(req, 'api');
      if (req.validationError) rejectWithAllErrors(req, await sms.sendFieldErrors(objectOrEmpty(req.body)));
      const body = await idempotency.runAtomic(req, reply, `partner:${partnerId}`, async (exec, inTransaction) => {
        const result = unwrap(await sms.send(partnerId, req.body, exec, inTransaction));
        const { encoding, transliterated, ...data } = result;
        return { status: 200, body: { ...envelopeOf(req, data, 'sms.queued'), encoding, transliterated } };
      });
      sms.queuedCommitted();
      const { encoding, transliterated, ...envelope } = body as typeof body & { encoding?: string; transliterated?: boolean };
      if (encoding) reply.header('x-sms-encoding', encoding);
      if (transliterated !== undefined) reply.header('x-sms-transliterated', String(transliterated));
      return envelope;
    },
  );

  app.get(
    '/:locale/sms/status/:message_id',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['sms'],
        summary: 'Status of a message',
        description: 'Poll no more often than every 5 seconds; stop after delivered, failed or expired.',
        params: Type.Object({ locale: LocaleParam, message_id: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 200: Envelope(StatusData), ...errorResponses(401, 404, 429) },
      },
    },
    async (req) => {
      const row = await sms.status(principalOf(req, 'api').partnerId, req.params.message_id);
      if (!row) throw notFound('resource.sms_message', 'message_id');
      return envelopeOf(req, statusView(row), 'sms.status');
    },
  );

  app.post(
    '/:locale/sms/consent',
    {
      config: { auth: 'api' },
      attachValidation: true,
      schema: {
        tags: ['sms'],
        summary: 'Register or revoke marketing consent',
        description: 'Opt-in returns consent_date, opt-out revoked_at. Every change is kept in an append-only history.',
        params: LocaleParams,
        body: ConsentBody,
        response: { 200: Envelope(ConsentData), ...errorResponses(400, 401, 422, 429) },
      },
    },
    async (req) => {
      const { partnerId } = principalOf(req, 'api');
      if (req.validationError) rejectWithAllErrors(req, sms.consentFieldErrors(objectOrEmpty(req.body)));
      const record = unwrap(await sms.setConsent(partnerId, req.body));
      return envelopeOf(req, record, record.consent_given ? 'sms.consent_registered' : 'sms.consent_revoked');
    },
  );

  app.get(
    '/:locale/sms/consent/:phone',
    {
      config: { auth: 'api' },
      schema: {
        tags: ['sms'],
        summary: 'Current marketing consent of a phone number',
        params: Type.Object({ locale: LocaleParam, phone: Type.String({ minLength: 1, maxLength: 32 }) }),
        response: { 200: Envelope(ConsentData), ...errorResponses(401, 404, 429) },
      },
    },
    async (req) => {
      const record = await sms.consent(principalOf(req, 'api').partnerId, req.params.phone);
      if (!record) throw notFound('resource.consent', 'phone');
      return envelopeOf(req, record);
    },
  );
};
