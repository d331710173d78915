// The SSRF guard: which URLs and addresses are refused, and that a request is refused at
// connection time when the name resolves (or re-resolves) to a private address.
import assert from 'node:assert/strict';
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { checkPublicUrl, classifyAddress, safeAgents, safeFetch, SafeFetchError, safeGetStream, type LookupAddress, type ResolveAll } from './safe-url.js';

const PRIVATE_LITERALS: Array<[string, string]> = [
  ['http://127.0.0.1/', 'loopback'],
  ['http://127.255.255.254:8080/x', 'loopback'],
  ['http://127.1/', 'loopback'],
  ['http://2130706433/', 'loopback'],
  ['http://0x7f000001/', 'loopback'],
  ['http://10.0.0.1/', 'private'],
  ['http://10.255.255.255/', 'private'],
  ['http://172.16.0.1/', 'private'],
  ['http://172.31.255.255/', 'private'],
  ['http://192.168.1.1/', 'private'],
  ['http://169.254.169.254/latest/meta-data/', 'linkLocal'],
  ['http://100.64.0.1/', 'carrierGradeNat'],
  ['http://100.127.255.255/', 'carrierGradeNat'],
  ['http://0.0.0.0/', 'unspecified'],
  ['http://0.1.2.3/', 'unspecified'],
  ['http://224.0.0.1/', 'multicast'],
  ['http://239.255.255.250/', 'multicast'],
  ['http://255.255.255.255/', 'broadcast'],
  ['http://240.0.0.1/', 'reserved'],
  ['http://192.0.2.10/', 'reserved'],
  ['http://198.18.0.1/', 'reserved'],
  ['http://[::1]/', 'loopback'],
  ['http://[::]/', 'unspecified'],
  ['http://[fe80::1]/', 'linkLocal'],
  ['http://[febf::1]/', 'linkLocal'],
  ['http://[fc00::1]/', 'uniqueLocal'],
  ['http://[fd12:3456::1]/', 'uniqueLocal'],
  ['http://[ff02::1]/', 'multicast'],
  ['http://[2001:db8::1]/', 'reserved'],
  ['http://[::ffff:127.0.0.1]/', 'ipv4Mapped loopback'],
  ['http://[::ffff:10.1.2.3]/', 'ipv4Mapped private'],
  ['http://[::ffff:169.254.169.254]/', 'ipv4Mapped linkLocal'],
  ['http://[64:ff9b::7f00:1]/', 'rfc6052 loopback'],
  ['http://[::7f00:1]/', 'ipv4Compatible'],
  ['https://localhost/', 'loopback'],
  ['https://LOCALHOST./', 'loopback'],
  ['http://api.localhost:3000/', 'loopback'],
];

const PUBLIC_LITERALS = [
  'http://8.8.8.8/',
  'https://1.1.1.1:8443/hook?x=1',
  'http://172.32.0.1/',
  'http://172.15.255.255/',
  'http://100.128.0.1/',
  'http://11.0.0.1/',
  'http://169.255.0.1/',
  'http://[2606:4700:4700::1111]/',
  'http://[::ffff:8.8.8.8]/',
  'http://[64:ff9b::808:808]/',
];

/** A resolver answering from a table, as DNS would. */
function table(entries: Record<string, string[]>): ResolveAll {
  return async (host) => {
    const list = entries[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return list.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

describe('classifyAddress', () => {
  it('names the range of a non-public address and accepts public unicast', () => {
    assert.deepEqual(classifyAddress('10.0.0.1'), { public: false, range: 'private' });
    assert.deepEqual(classifyAddress('::ffff:192.168.0.1'), { public: false, range: 'ipv4Mapped private' });
    assert.deepEqual(classifyAddress('93.184.216.34'), { public: true });
    assert.deepEqual(classifyAddress('2a00:1450:4001:80b::200e'), { public: true });
    assert.deepEqual(classifyAddress('not-an-ip'), { public: false, range: 'invalid' });
  });
});

describe('checkPublicUrl', () => {
  for (const [url, range] of PRIVATE_LITERALS) {
    it(`refuses ${url} (${range})`, async () => {
      const r = await checkPublicUrl(url, { allowPrivate: false, resolve: table({}) });
      assert.equal(r.ok, false);
      assert.ok(!r.ok);
      assert.equal(r.code, 'private');
      assert.match(r.reason, new RegExp(`not a public address \\(${range}\\)`), r.reason);
    });
  }

  it('names the refused address in the reason', async () => {
    const r = await checkPublicUrl('http://192.168.7.7:9000/hook', { allowPrivate: false });
    assert.ok(!r.ok);
    assert.match(r.reason, /192\.168\.7\.7/);
  });

  for (const url of PUBLIC_LITERALS) {
    it(`accepts ${url}`, async () => {
      assert.deepEqual(await checkPublicUrl(url, { allowPrivate: false, resolve: table({}) }), { ok: true });
    });
  }

  it('allows every private address and localhost with allowPrivate', async () => {
    for (const [url] of PRIVATE_LITERALS) {
      assert.deepEqual(await checkPublicUrl(url, { allowPrivate: true, resolve: table({}) }), { ok: true }, url);
    }
    assert.deepEqual(await checkPublicUrl('http://db.internal/', { allowPrivate: true, resolve: table({}) }), { ok: true });
  });

  it('accepts only http and https, with or without allowPrivate', async () => {
    for (const url of ['ftp://8.8.8.8/', 'file:///etc/passwd', 'gopher://8.8.8.8/', 'javascript:alert(1)', 'data:text/plain,x']) {
      for (const allowPrivate of [false, true]) {
        const r = await checkPublicUrl(url, { allowPrivate });
        assert.ok(!r.ok, url);
        assert.equal(r.code, 'scheme', url);
      }
    }
  });

  it('refuses credentials in the URL, with or without allowPrivate', async () => {
    for (const url of ['http://user:pw@8.8.8.8/', 'https://user@example.com/', 'http://:pw@8.8.8.8/']) {
      for (const allowPrivate of [false, true]) {
        const r = await checkPublicUrl(url, { allowPrivate, resolve: table({ 'example.com': ['93.184.216.34'] }) });
        assert.ok(!r.ok, url);
        assert.equal(r.code, 'credentials', url);
      }
    }
  });

  it('refuses what is not a URL', async () => {
    for (const url of ['not a url', '', '/relative/path', 'http://']) {
      const r = await checkPublicUrl(url, { allowPrivate: false });
      assert.ok(!r.ok, url);
      assert.equal(r.code, 'invalid', url);
    }
  });

  it('resolves a host name and needs every address to be public', async () => {
    const resolve = table({
      'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
      'internal.example.com': ['10.20.30.40'],
      'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
      'v6only.example.com': ['fd00::5'],
    });
    assert.deepEqual(await checkPublicUrl('https://hooks.example.com/x', { allowPrivate: false, resolve }), { ok: true });
    const internal = await checkPublicUrl('https://internal.example.com/x', { allowPrivate: false, resolve });
    assert.ok(!internal.ok);
    assert.equal(internal.code, 'private');
    // The refusal reaches the caller: it names the host, never the internal address it resolves to.
    assert.equal(internal.reason, 'internal.example.com resolves to an address that is not public');
    const mixed = await checkPublicUrl('https://mixed.example.com/x', { allowPrivate: false, resolve });
    assert.ok(!mixed.ok);
    assert.equal(mixed.code, 'private');
    assert.doesNotMatch(mixed.reason, /127\.0\.0\.1|loopback/);
    const v6 = await checkPublicUrl('https://v6only.example.com/x', { allowPrivate: false, resolve });
    assert.ok(!v6.ok);
    assert.equal(v6.reason, 'v6only.example.com resolves to an address that is not public');
    // A literal address is the caller's own: named, with its range.
    const literal = await checkPublicUrl('https://10.20.30.40/x', { allowPrivate: false, resolve });
    assert.ok(!literal.ok);
    assert.equal(literal.reason, '10.20.30.40 is not a public address (private)');
  });

  it('refuses a name that cannot be resolved', async () => {
    const r = await checkPublicUrl('https://nowhere.example.com/', { allowPrivate: false, resolve: table({}) });
    assert.ok(!r.ok);
    assert.equal(r.code, 'unresolvable');
    assert.match(r.reason, /nowhere\.example\.com.*ENOTFOUND/);
  });

  it("refuses a name that resolves like 'localhost' (real resolver)", async () => {
    // Whatever this machine's resolver answers for localhost (127.0.0.1 and/or ::1) is refused.
    const real = await dns.promises.lookup('localhost', { all: true });
    assert.ok(real.length > 0);
    const r = await checkPublicUrl('http://alias-of-localhost.test/', {
      allowPrivate: false,
      resolve: () => dns.promises.lookup('localhost', { all: true }),
    });
    assert.ok(!r.ok);
    assert.equal(r.code, 'private');
    assert.equal(r.reason, 'alias-of-localhost.test resolves to an address that is not public');
    // And 'localhost' itself, through the default resolver path.
    const direct = await checkPublicUrl('http://localhost:8080/', { allowPrivate: false });
    assert.ok(!direct.ok);
    assert.equal(direct.code, 'private');
  });
});

describe('safeFetch', () => {
  let server: http.Server;
  let port: number;
  const received: Array<{ method: string; url: string; body: string }> = [];

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        received.push({ method: req.method ?? '', url: req.url ?? '', body });
        if (req.url === '/redirect') {
          res.writeHead(302, { location: `http://127.0.0.1:${port}/target` }).end();
        } else if (req.url === '/slow') {
          setTimeout(() => res.writeHead(200).end('late'), 2000).unref();
        } else if (req.url === '/trickle') {
          res.writeHead(202, { 'content-type': 'text/plain' });
          res.write('partial');
          setTimeout(() => res.end(), 2000).unref();
        } else if (req.url === '/big') {
          res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(1_000_000));
        } else {
          res.writeHead(201, { 'content-type': 'text/plain' }).end('ok');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const count = () => received.length;

  it('posts the body and returns the status when private addresses are allowed', async () => {
    const before = count();
    const res = await safeFetch(`http://127.0.0.1:${port}/hook`, { allowPrivate: true, body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 201);
    assert.equal(res.body, 'ok');
    assert.equal(count(), before + 1);
    assert.deepEqual(received.at(-1), { method: 'POST', url: '/hook', body: '{"a":1}' });
  });

  it('refuses a literal private address before connecting', async () => {
    const before = count();
    await assert.rejects(safeFetch(`http://127.0.0.1:${port}/hook`, { allowPrivate: false, body: 'x' }), (err: unknown) => {
      assert.ok(err instanceof SafeFetchError);
      assert.equal(err.code, 'refused');
      assert.match(err.message, /127\.0\.0\.1 is not a public address \(loopback\)/);
      return true;
    });
    assert.equal(count(), before);
  });

  it('refuses at connection time a name that resolves to a private address', async () => {
    const before = count();
    const resolve = table({ 'hooks.example.com': ['127.0.0.1'] });
    await assert.rejects(safeFetch(`http://hooks.example.com:${port}/hook`, { allowPrivate: false, body: 'x', resolve }), (err: unknown) => {
      assert.ok(err instanceof SafeFetchError);
      assert.equal(err.code, 'refused');
      assert.match(err.message, /hooks\.example\.com resolves to an address that is not public/);
      assert.doesNotMatch(err.message, /127\.0\.0\.1/);
      return true;
    });
    assert.equal(count(), before);
  });

  it('catches DNS rebinding: public when checked, private when connecting', async () => {
    let calls = 0;
    const rebinding: ResolveAll = async () => [{ address: ++calls === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    const before = count();
    assert.deepEqual(await checkPublicUrl(`http://rebind.example.com:${port}/`, { allowPrivate: false, resolve: rebinding }), { ok: true });
    await assert.rejects(
      safeFetch(`http://rebind.example.com:${port}/`, { allowPrivate: false, body: 'x', resolve: rebinding }),
      (err: unknown) => err instanceof SafeFetchError && err.code === 'refused' && err.message === 'rebind.example.com resolves to an address that is not public',
    );
    assert.equal(calls, 2);
    assert.equal(count(), before);
  });

  it('refuses through shared agents too', async () => {
    const agents = safeAgents({ allowPrivate: false, resolve: table({ 'hooks.example.com': ['10.0.0.7', '127.0.0.1'] }) });
    try {
      const before = count();
      await assert.rejects(
        safeFetch(`http://hooks.example.com:${port}/`, { allowPrivate: false, agents, body: 'x' }),
        (err: unknown) => err instanceof SafeFetchError && err.code === 'refused' && /^hooks\.example\.com resolves to an address that is not public$/.test(err.message),
      );
      assert.equal(count(), before);
    } finally {
      agents.destroy();
    }
  });

  it('checks the connected address even through an agent that resolves without the guard', async () => {
    const lookup = ((_h: string, o: dns.LookupOptions, cb: (...a: unknown[]) => void) =>
      o.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)) as never;
    const agent = new http.Agent({ lookup } as http.AgentOptions);
    const before = count();
    try {
      await assert.rejects(
        safeFetch(`http://unguarded.example.com:${port}/`, {
          allowPrivate: false,
          agents: { http: agent, https: agent as never, destroy: () => agent.destroy() },
          body: 'x',
        }),
        (err: unknown) => err instanceof SafeFetchError && err.code === 'refused' && err.message === 'unguarded.example.com resolves to an address that is not public',
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(count(), before);
    } finally {
      agent.destroy();
    }
  });

  it('does not follow redirects', async () => {
    const before = count();
    const res = await safeFetch(`http://127.0.0.1:${port}/redirect`, { allowPrivate: true, body: 'x' });
    assert.equal(res.status, 302);
    assert.equal(count(), before + 1);
  });

  it('times out', async () => {
    const started = Date.now();
    await assert.rejects(safeFetch(`http://127.0.0.1:${port}/slow`, { allowPrivate: true, timeoutMs: 200 }), (err: unknown) => {
      assert.ok(err instanceof SafeFetchError);
      assert.equal(err.code, 'timeout');
      assert.match(err.message, /200 ms/);
      return true;
    });
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 190 && elapsed < 1500, String(elapsed));
  });

  it('keeps the status of an answer whose body is unfinished at the deadline', async () => {
    const res = await safeFetch(`http://127.0.0.1:${port}/trickle`, { allowPrivate: true, timeoutMs: 200 });
    assert.equal(res.status, 202);
    assert.equal(res.body, 'partial');
  });

  it('reads at most maxResponseBytes of the answer', async () => {
    const res = await safeFetch(`http://127.0.0.1:${port}/big`, { allowPrivate: true, maxResponseBytes: 1024 });
    assert.equal(res.status, 200);
    assert.equal(res.body.length, 1024);
  });

  it('reports a refused connection as a network error', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await assert.rejects(
      safeFetch(`http://127.0.0.1:${deadPort}/`, { allowPrivate: true }),
      (err: unknown) => err instanceof SafeFetchError && err.code === 'network' && /ECONNREFUSED/.test(err.message),
    );
  });

  it('can be aborted', async () => {
    const ac = new AbortController();
    const p = safeFetch(`http://127.0.0.1:${port}/slow`, { allowPrivate: true, signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(p, (err: unknown) => err instanceof SafeFetchError && err.code === 'aborted');
  });
});

describe('safeGetStream (feeds)', () => {
  let server: http.Server;
  let base: string;
  before(async () => {
    server = http.createServer((req, res) => {
      const hop = /^\/hop\/(\d+)$/.exec(req.url ?? '');
      if (hop) {
        const n = Number(hop[1]);
        res.writeHead(302, { location: n > 1 ? `/hop/${n - 1}` : '/body' }).end();
      } else if (req.url === '/to-ftp') {
        res.writeHead(301, { location: 'ftp://8.8.8.8/feed.xml' }).end();
      } else if (req.url === '/to-credentials') {
        res.writeHead(307, { location: `${base.replace('//', '//user:pw@')}/body` }).end();
      } else if (req.url === '/stall') {
        res.writeHead(200);
        res.write('<products>');
      } else {
        res.writeHead(200, { etag: '"e1"' }).end('<products/>');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });

  const text = async (body: AsyncIterable<Buffer>) => {
    let out = '';
    for await (const chunk of body) out += chunk.toString();
    return out;
  };

  it('follows up to 5 redirects and streams the answer', async () => {
    const res = await safeGetStream(`${base}/hop/5`, { allowPrivate: true });
    assert.equal(res.status, 200);
    assert.equal(res.url, `${base}/body`);
    assert.equal(res.headers.etag, '"e1"');
    assert.equal(await text(res.body), '<products/>');
    await assert.rejects(safeGetStream(`${base}/hop/6`, { allowPrivate: true }), (err: unknown) => err instanceof SafeFetchError && err.code === 'refused' && /more than 5 redirects/.test(err.message));
  });

  it('checks every redirect target like the first URL', async () => {
    await assert.rejects(safeGetStream(`${base}/to-ftp`, { allowPrivate: true }), (err: unknown) => err instanceof SafeFetchError && err.code === 'refused' && /only http and https/.test(err.message));
    await assert.rejects(safeGetStream(`${base}/to-credentials`, { allowPrivate: true }), (err: unknown) => err instanceof SafeFetchError && /user name or password/.test(err.message));
  });

  it('refuses a private address before connecting, and a name that resolves to one at connection time', async () => {
    await assert.rejects(safeGetStream(`${base}/body`, { allowPrivate: false }), (err: unknown) => err instanceof SafeFetchError && err.code === 'refused' && /loopback/.test(err.message));
    // Public when asked, private when connecting (DNS rebinding): refused at the connection.
    let calls = 0;
    const rebinding: ResolveAll = async () => [{ address: calls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    const port = new URL(base).port;
    await assert.rejects(
      safeGetStream(`http://feeds.example.test:${port}/body`, { allowPrivate: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] }),
      (err: unknown) => err instanceof SafeFetchError && err.code === 'refused' && /feeds\.example\.test resolves to an address that is not public$/.test(err.message),
    );
    assert.equal((await checkPublicUrl(`http://feeds.example.test:${port}/body`, { allowPrivate: false, resolve: rebinding })).ok, true);
    await assert.rejects(safeGetStream(`http://feeds.example.test:${port}/body`, { allowPrivate: false, resolve: rebinding }), (err: unknown) => err instanceof SafeFetchError && err.code === 'refused');
  });

  it('fails a body that stalls longer than the timeout', async () => {
    const res = await safeGetStream(`${base}/stall`, { allowPrivate: true, timeoutMs: 200 });
    await assert.rejects(text(res.body), (err: unknown) => err instanceof SafeFetchError && err.code === 'timeout');
  });
});
