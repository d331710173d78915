// clientAddressResolver must give, for any TRUST_PROXY setting, the address Fastify's
// request.ip gives when Fastify is configured as app.ts configures it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TrustProxySetting } from '../config.js';
import { clientAddressResolver, proxyTrust } from './client-address.js';

const PEER = '10.0.0.5';
const CHAIN = '198.18.0.1, 203.0.113.7, 10.1.2.3';

/** [setting, X-Forwarded-For, the client address expected]. */
const cases: Array<[TrustProxySetting, string | undefined, string]> = [
  [false, CHAIN, PEER],
  [false, undefined, PEER],
  [1, CHAIN, '10.1.2.3'],
  [2, CHAIN, '203.0.113.7'],
  [3, CHAIN, '198.18.0.1'],
  [9, CHAIN, '198.18.0.1'],
  [1, undefined, PEER],
  [['10.0.0.0/8'], CHAIN, '203.0.113.7'],
  [['uniquelocal'], CHAIN, '203.0.113.7'],
  [['10.0.0.5', '10.1.2.3'], CHAIN, '203.0.113.7'],
  // The peer is not a listed proxy: its X-Forwarded-For is not read at all.
  [['192.168.0.0/16'], CHAIN, PEER],
  [['loopback'], CHAIN, PEER],
];

describe('clientAddressResolver', () => {
  const apps: FastifyInstance[] = [];
  after(async () => {
    for (const app of apps) await app.close();
  });

  for (const [setting, xff, expected] of cases) {
    it(`TRUST_PROXY ${JSON.stringify(setting)}, X-Forwarded-For ${JSON.stringify(xff)} → ${expected}, as request.ip`, async () => {
      const resolve = clientAddressResolver(setting);
      const app = Fastify({ trustProxy: proxyTrust(setting) || undefined });
      apps.push(app);
      app.get('/', async (req) => ({ ip: req.ip, resolved: resolve(req.raw) }));
      const res = await app.inject({ method: 'GET', url: '/', remoteAddress: PEER, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } });
      assert.deepEqual(res.json(), { ip: expected, resolved: expected });
    });
  }

});
