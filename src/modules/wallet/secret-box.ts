// Secrets at rest (DESIGN.md §15): AES-256-GCM with LOYALTY_SECRETS_KEY. On the embedded store
// the key is generated once into the data dir; with DATABASE_URL it must come from the
// environment — a key kept in the same database as what it seals protects nothing — and
// without it nothing is sealed (the caller refuses the save) while the service still runs.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const VERSION = 'v1';
const IV_BYTES = 12;
/** GCM's full tag: a shorter one would be accepted by Node as given (4 bytes = 2^32 tries to forge). */
const TAG_BYTES = 16;

export class SecretBox {
  constructor(private readonly key: Buffer) {}

  /** `aad` binds the sealed value to where it is kept (partner and field), so a row cannot be moved to another. */
  seal(plain: string, aad: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** undefined when the value was sealed with another key or for another place, or is cut short (a tag under 16 bytes). */
  open(sealed: string, aad: string): string | undefined {
    const [version, data] = sealed.split(':');
    if (version !== VERSION || data === undefined) return undefined;
    const raw = Buffer.from(data, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(aad));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/**
 * The key: configured, else (embedded store only) `{data dir}/secrets.key`, created on first
 * use with mode 0600; the first writer wins, so concurrent first uses agree.
 */
export function secretsKeySource(opts: { configured: Buffer | undefined; embedded: boolean; dataDir: string }): () => Promise<SecretBox | undefined> {
  let box: Promise<SecretBox | undefined> | undefined;
  const load = async (): Promise<SecretBox | undefined> => {
    if (opts.configured) return new SecretBox(opts.configured);
    if (!opts.embedded) return undefined;
    const file = path.join(opts.dataDir, 'secrets.key');
    await mkdir(opts.dataDir, { recursive: true });
    await writeFile(file, `${randomBytes(32).toString('hex')}\n`, { flag: 'wx', mode: 0o600 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    const hex = (await readFile(file, 'utf8')).trim();
    if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`${file} does not hold a 64-hex-digit key`);
    return new SecretBox(Buffer.from(hex, 'hex'));
  };
  return () => {
    box ??= load().catch((err: unknown) => {
      box = undefined;
      throw err;
    });
    return box;
  };
}
