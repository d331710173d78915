// TypeBox schemas of the wallet API (they are its types and its OpenAPI document).
import { Type, type Static, type TSchema } from 'typebox';
import { DateTime } from '../../shared/schemas.js';

const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const Certificate = Type.Object({
  subject: Type.String(),
  issuer: Type.String(),
  serial_number: Type.String(),
  expires_at: DateTime,
  fingerprint_sha256: Type.String(),
});

export const WalletConfigView = Type.Object({
  apple: nullable(
    Type.Object({
      pass_type_identifier: Type.String(),
      team_identifier: Type.String(),
      certificate: Certificate,
      wwdr_certificate: Certificate,
      updated_at: DateTime,
    }),
  ),
  google: nullable(Type.Object({ issuer_id: Type.String(), client_email: Type.String(), updated_at: DateTime })),
});
export type WalletConfigView = Static<typeof WalletConfigView>;

export const AppleConfigBody = Type.Object({
  pass_type_identifier: Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9.-]+$', examples: ['pass.com.example.loyalty'] }),
  team_identifier: Type.String({ minLength: 1, maxLength: 20, pattern: '^[A-Z0-9]+$', examples: ['A1B2C3D4E5'] }),
  certificate: Type.String({ minLength: 1, maxLength: 100_000, description: 'The Pass Type ID certificate: PEM, or a base64 PKCS#12 (.p12) holding the certificate and its key' }),
  private_key: Type.Optional(Type.String({ maxLength: 100_000, description: 'PEM private key; required with a PEM certificate' })),
  passphrase: Type.Optional(Type.String({ maxLength: 1000, description: "The key's or the .p12 file's passphrase; used once, never stored" })),
  wwdr_certificate: Type.String({ minLength: 1, maxLength: 100_000, description: "Apple's WWDR intermediate certificate (PEM) that issued the pass certificate" }),
});

export const GoogleConfigBody = Type.Object({
  issuer_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9]+$', examples: ['3388000000012345678'] }),
  service_account: Type.Union([Type.String({ minLength: 1, maxLength: 100_000 }), Type.Object({}, { additionalProperties: true })], {
    description: "The service account's JSON key file: its text, or the object",
  }),
});

export const SaveLink = Type.Object({ save_url: Type.String({ description: 'https://pay.google.com/gp/v/save/{jwt}' }) });

export const PkpassResponse = {
  description: 'The signed pass (application/vnd.apple.pkpass)',
  content: { 'application/vnd.apple.pkpass': { schema: { type: 'string', format: 'binary' } } },
};
