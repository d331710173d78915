// The `loyalty` command. Every command prints one JSON document on stdout and exits
// 0 on success, 1 on failure, 2 on a usage error.
//   loyalty migrate
//   loyalty admin create --email E [--password P | --password-stdin] [--name N]
//   loyalty demo seed
//   loyalty ledger verify      exits 1 when any balance differs from its ledger
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import type { Context } from '../context.js';
import { saveDemoCredentials } from '../modules/demo/demo-credentials-file.js';
import { verifyLedger } from './ledger-verify.js';
import { VERSION } from '../version.js';

const USAGE = 'usage: loyalty migrate | admin create --email E (--password P | --password-stdin) [--name N] | demo seed | ledger verify';

function out(doc: unknown, code = 0): never {
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  process.exit(code);
}

const log = {
  info: (obj: object, msg?: string) => process.stderr.write(`${JSON.stringify({ level: 'info', msg, ...obj })}\n`),
  warn: (obj: object, msg?: string) => process.stderr.write(`${JSON.stringify({ level: 'warn', msg, ...obj })}\n`),
  error: (obj: object, msg?: string) => process.stderr.write(`${JSON.stringify({ level: 'error', msg, ...obj })}\n`),
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

async function withContext<T>(fn: (ctx: Context) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env, VERSION);
  // Loaded only by the commands that open the store: usage and --help answer at once.
  const { createContext } = await import('../context.js');
  const ctx = await createContext(config, { log, redis: false });
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        email: { type: 'string' },
        password: { type: 'string' },
        'password-stdin': { type: 'boolean' },
        name: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    // An unknown option or a missing option value is a usage error, like an unknown command.
    return out({ ok: false, error: err instanceof Error ? err.message : String(err), usage: USAGE }, 2);
  }
}

async function main(argv: string[]) {
  const { values, positionals } = parse(argv);
  const command = positionals.join(' ');
  if (values.help || command === '') out({ ok: true, usage: USAGE });

  switch (command) {
    case 'migrate':
      await withContext(async () => undefined);
      return out({ ok: true, migrated: true });

    case 'admin create': {
      const email = values.email;
      const password = values['password-stdin'] ? await readStdin() : values.password;
      if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) return out({ ok: false, error: 'a valid --email is required' }, 2);
      if (!password || password.length < 10) {
        return out({ ok: false, error: 'a password of at least 10 characters is required (--password or --password-stdin)' }, 2);
      }
      const result = await withContext((ctx) =>
        ctx.services.admin.ensure({ email, password, ...(values.name ? { name: values.name } : {}) }),
      );
      if (!result.created) return out({ ok: false, error: 'an admin with this e-mail already exists', admin: result.admin }, 1);
      return out({ ok: true, created: true, admin: result.admin });
    }

    case 'demo seed': {
      const credentials = await withContext(async (ctx) => {
        const seeded = await ctx.services.demo.seedIfEmpty();
        if (seeded) await saveDemoCredentials(ctx.config, seeded);
        return seeded;
      });
      if (!credentials) return out({ ok: true, seeded: false, reason: 'the database already has partners' });
      return out({ ok: true, seeded: true, credentials });
    }

    case 'ledger verify': {
      const report = await withContext((ctx) => verifyLedger(ctx.database.db));
      return out({ ok: report.differences.length === 0, ...report }, report.differences.length === 0 ? 0 : 1);
    }

    default:
      return out({ ok: false, error: `unknown command "${command}"`, usage: USAGE }, 2);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ConfigError) out({ ok: false, error: 'invalid configuration', problems: err.problems }, 1);
  out({ ok: false, error: err instanceof Error ? err.message : String(err) }, 1);
});
