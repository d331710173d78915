import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes a new SQL migration from the table definitions.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema.ts',
  out: './migrations',
  casing: 'snake_case',
});
