// TypeBox schema of an administrator's account as the API shows it.
import { Type } from 'typebox';
import { DateTime } from '../../shared/schemas.js';

export const Admin = Type.Object({ id: Type.Integer(), email: Type.String(), name: Type.String(), created_at: DateTime });
