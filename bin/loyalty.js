#!/usr/bin/env node
// The `loyalty` CLI (npx loyalty …). `npm ci` builds dist/ through the prepare script.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/index.js', import.meta.url);
if (!existsSync(entry)) {
  process.stdout.write(`${JSON.stringify({ ok: false, error: 'not built yet: run npm run build' })}\n`);
  process.exit(1);
}
await import(entry.href);
