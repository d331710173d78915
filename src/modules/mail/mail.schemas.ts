// TypeBox schema of an outgoing e-mail as the API shows it (admin e-mail to a partner): the
// response's OpenAPI document and MailView's type.
import { Type } from 'typebox';
import { DateTime } from '../../shared/schemas.js';

export const Mail = Type.Object({
  id: Type.Integer(),
  to: Type.String({ description: "The partner's e-mail address at the time of sending" }),
  subject: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: DateTime,
  sent_at: Type.Union([DateTime, Type.Null()]),
});
