import { Type } from 'typebox';
import { DateTime, Name } from '../../shared/schemas.js';

export const Partner = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    email: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { description: 'Partner (a business using the platform)' },
);

export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Password = Type.String({ minLength: 10, maxLength: 200 });

export const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 200 }),
});

export const CreatePartnerBody = Type.Object({
  name: Name(255),
  email: Email,
  password: Password,
});

export const PartnerLoginData = Type.Object({
  token: Type.String(),
  expires_at: DateTime,
  partner: Partner,
});

export const ChangePasswordBody = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 200 }),
  new_password: Password,
});

export const SetPasswordBody = Type.Object({ password: Password });
