// The console's build: two pages (the partner console at /dashboard/, the admin console at
// /dashboard/admin/) sharing chunks, emitted to web/dist, which src/infra/dashboard.ts
// serves. Pages are loaded on demand, so a console's first page carries only what it shows.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const root = import.meta.dirname;

/** Writes .br and .gz beside every text asset; @fastify/static serves them when the client accepts them. */
function precompress(): Plugin {
  return {
    name: 'loyalty-precompress',
    apply: 'build',
    closeBundle() {
      const walk = (dir: string): string[] =>
        readdirSync(dir).flatMap((n) => {
          const p = path.join(dir, n);
          return statSync(p).isDirectory() ? walk(p) : [p];
        });
      for (const file of walk(path.join(root, 'dist'))) {
        if (!/\.(js|css|html|svg|json)$/.test(file)) continue;
        const raw = readFileSync(file);
        if (raw.length < 1024) continue;
        writeFileSync(`${file}.gz`, gzipSync(raw, { level: 9 }));
        writeFileSync(`${file}.br`, brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      }
    },
  };
}

export default defineConfig({
  root,
  base: '/dashboard/',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: {
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat' },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill would be a script of its own; every browser the console supports has modulepreload.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    rollupOptions: {
      input: {
        partner: path.join(root, 'index.html'),
        admin: path.join(root, 'admin/index.html'),
      },
    },
  },
  plugins: [precompress()],
});
