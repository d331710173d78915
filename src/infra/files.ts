// Files of the service (message attachments) on a local or shared volume (DESIGN.md §1):
// stored under random names, never under a name a client chose, written completely (to a
// temporary name, then renamed) before anything refers to them. An object-store adapter can
// implement the same interface later.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface StoredFile {
  key: string;
  size: number;
  sha256: string;
}

export interface FileStore {
  /** Writes the stream to a new random key; on any failure nothing is left behind. */
  write(source: Readable): Promise<StoredFile>;
  /** The file's size and a stream of its bytes; undefined if it is not there. */
  open(key: string): Promise<{ size: number; stream: ReadStream } | undefined>;
  /** Removes a file (missing is fine). */
  remove(key: string): Promise<void>;
}

const KEY = /^[0-9a-f]{2}\/[0-9a-f]{32}$/;

export class LocalFileStore implements FileStore {
  constructor(private readonly dir: string) {}

  private pathOf(key: string): string {
    // Keys come from our own rows, but a path is only ever built from a well-formed key.
    if (!KEY.test(key)) throw new Error('malformed file key');
    return path.join(this.dir, key);
  }

  async write(source: Readable): Promise<StoredFile> {
    const name = randomBytes(16).toString('hex');
    // Two-character fan-out keeps directories small.
    const key = `${name.slice(0, 2)}/${name}`;
    const file = this.pathOf(key);
    const tmp = `${file}.part`;
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const hash = createHash('sha256');
    let size = 0;
    const measure = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(source, measure, createWriteStream(tmp, { mode: 0o600, flags: 'wx' }));
      await rename(tmp, file);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    return { key, size, sha256: hash.digest('hex') };
  }

  async open(key: string): Promise<{ size: number; stream: ReadStream } | undefined> {
    const file = this.pathOf(key);
    try {
      const { size } = await stat(file);
      return { size, stream: createReadStream(file) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    await unlink(this.pathOf(key)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}
