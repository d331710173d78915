import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', '.test-build/', 'node_modules/', 'data/', 'migrations/', 'web/dist/', 'web/src/api/loyalty-api.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration through src/config.ts (loadConfig).' },
      ],
    },
  },
  {
    // The config module is the only reader of process.env; tests, benchmarks and scripts
    // pass environments to child processes.
    files: ['src/config.ts', 'src/server.ts', 'src/cli/**', 'test/**', 'bench/**', 'scripts/**', 'web/e2e/**', 'web/vite.config.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Module boundaries: shared/ and infra/ know no module (modules hand their tables and
    // messages to the composition root: src/schema.ts, src/messages.ts) ...
    files: ['src/shared/**', 'src/infra/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/modules/**'], message: 'shared/ and infra/ import no module; register it at the composition root.' }] }],
    },
  },
  {
    // ... and a route file imports no other route file (shared shapes live in *.schemas.ts).
    files: ['src/modules/**/*.routes.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/*.routes.js'], message: 'Move what routes share into a *.schemas.ts or the service.' }] }],
    },
  },
  {
    // Tests read response bodies as untyped JSON, as a client does.
    files: ['test/**', 'src/**/*.test.ts', 'web/e2e/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
