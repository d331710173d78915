import { hash, randomBytes } from 'node:crypto';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';

/** URL-safe random string carrying `bytes` bytes of CSPRNG entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

// crypto.hash: one call, no Hash object (a third cheaper than createHash for a short input).
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

export function sha256(value: string): Buffer {
  return hash('sha256', value, 'buffer') as unknown as Buffer;
}

// Passwords are low-entropy, so they get a memory-hard hash: Argon2id with the OWASP
// baseline (19 MiB, 2 passes, 1 lane). API secrets are 256-bit random values and are
// stored as SHA-256 instead, which keeps the per-request check to microseconds.
const ARGON2_OPTIONS = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2Hash(password, ARGON2_OPTIONS);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2Verify(hash, password);
  } catch {
    return false;
  }
}

/** A hash to verify against when the account does not exist, so timing does not tell. */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(randomToken(16));
  return dummyHash;
}
