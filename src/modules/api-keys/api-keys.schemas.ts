// TypeBox schemas of the API keys' responses: their OpenAPI document and ApiKeyView's type.
import { Type } from 'typebox';
import { DateTime } from '../../shared/schemas.js';

export const ApiKey = Type.Object({ id: Type.Integer(), name: Type.String(), key: Type.String(), created_at: DateTime });
