// TypeBox schemas of a partner message and its attachments as the API shows them: their
// OpenAPI document and the service's view types.
import { Type } from 'typebox';
import { DateTime } from '../../shared/schemas.js';

export const Attachment = Type.Object({
  id: Type.Integer(),
  filename: Type.String({ description: 'As uploaded (path removed); offered back on download' }),
  content_type: Type.String(),
  size: Type.Integer({ description: 'Bytes' }),
});

export const Message = Type.Object({
  id: Type.Integer(),
  partner_id: Type.Integer(),
  sender: Type.Union([Type.Literal('admin'), Type.Literal('partner')]),
  body: Type.String(),
  attachments: Type.Array(Attachment),
  created_at: DateTime,
  read_at: Type.Union([DateTime, Type.Null()], { description: 'When the other side first listed it; null = unread' }),
});
