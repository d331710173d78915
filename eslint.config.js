import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'migrations/'] },
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
    files: ['src/config.ts', 'src/server.ts', 'src/cli/**', 'test/**', 'bench/**', 'scripts/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Tests read response bodies as untyped JSON, as a client does.
    files: ['test/**', 'src/**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
