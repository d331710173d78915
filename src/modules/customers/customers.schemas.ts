// The customer as the API shows it, shared by the customers' own routes and QR login.
import { Type } from 'typebox';
import { DateTime } from '../../shared/schemas.js';

export const Customer = Type.Object(
  {
    id: Type.Integer(),
    phone: Type.String({ description: 'E.164' }),
    name: Type.Union([Type.String(), Type.Null()]),
    email: Type.Union([Type.String(), Type.Null()]),
    birth_date: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    language: Type.Union([Type.Literal('lt'), Type.Literal('en'), Type.Null()]),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { description: 'Customer (user)' },
);
