// Validators and serializers compiled on first use, once per process: what a route does with
// them is what Fastify's own compilers do (strict bodies, coerced query strings, responses
// reduced to their schema), and a second app compiles nothing again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { compilePending, lazySerializerFactory, lazyValidator, schemaCompilerStats } from './schema-compilers.js';

const Body = Type.Object({ n: Type.Integer() });
const Query = Type.Object({ page: Type.Integer({ default: 1 }) });
const Reply = Type.Object({ id: Type.Integer() });

async function appWithRoute() {
  const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } } });
  app.setValidatorCompiler(lazyValidator);
  app.post('/x', { schema: { body: Body, querystring: Query, response: { 200: Reply } } }, async (req) => ({
    id: (req.body as { n: number }).n + (req.query as { page: number }).page,
    secret: 'never serialised',
  }));
  await app.ready();
  return app;
}

describe('schema compilers', () => {
  it('compile nothing at ready; validate and serialise like Fastify on the first call', async () => {
    const before = schemaCompilerStats();
    const app = await appWithRoute();
    const ready = schemaCompilerStats();
    assert.equal(ready.compiled, before.compiled, 'nothing compiled at ready');
    assert.equal(ready.pending, before.pending + 3, 'body, query string and response wait');
    const ok = await app.inject({ method: 'POST', url: '/x?page=2', payload: { n: 40 } });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { id: 42 });
    assert.equal(schemaCompilerStats().compiled, before.compiled + 3);
    assert.equal(schemaCompilerStats().pending, before.pending);
    // Bodies are strict (a string is not an integer); query strings are coerced (page=2 above).
    const bad = await app.inject({ method: 'POST', url: '/x', payload: { n: '40' } });
    assert.equal(bad.statusCode, 400);
    await app.close();
  });

  it('compiles each schema once per process: a second app reuses the functions', async () => {
    const app = await appWithRoute();
    const before = schemaCompilerStats();
    const res = await app.inject({ method: 'POST', url: '/x', payload: { n: 1 } });
    assert.deepEqual(res.json(), { id: 2 });
    assert.equal(schemaCompilerStats().compiled, before.compiled, 'found compiled by the first app');
    await app.close();
  });

  it('compilePending compiles every stand-in not called yet', async () => {
    const app = await appWithRoute();
    assert.ok(schemaCompilerStats().pending >= 3);
    compilePending();
    assert.equal(schemaCompilerStats().pending, 0);
    await app.close();
  });
});
