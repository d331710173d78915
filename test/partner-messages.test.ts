// Messages between admins and a partner with attachments (DESIGN.md §7 "Messages";
// docs/decisions.md "Message attachments"), over real HTTP with real multipart uploads.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request, type Response } from './helpers/http.js';

const MAX_BYTES = 64 * 1024;
const MAX_FILES = 2;

let t: TestApp;
let filesDir: string;
let admin: AdminFixture;
let a: PartnerFixture;
let b: PartnerFixture;

before(async () => {
  filesDir = await mkdtemp(path.join(tmpdir(), 'loyalty-files-'));
  t = await startTestApp({ FILES_DIR: filesDir, ATTACHMENT_MAX_BYTES: String(MAX_BYTES), ATTACHMENT_MAX_FILES: String(MAX_FILES) });
  admin = await createAdmin(t);
  a = await createPartner(t, 'Partner A');
  b = await createPartner(t, 'Partner B');
});
after(async () => {
  await t.close();
  await rm(filesDir, { recursive: true, force: true });
});

interface Upload {
  name: string;
  type: string;
  bytes: Buffer;
}

/** POST multipart/form-data: `fields` then `files` (each under the field name "files"). */
async function postForm(pathname: string, token: string, fields: Record<string, string>, files: Upload[] = []): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of files) form.append('files', new Blob([f.bytes], { type: f.type }), f.name);
  const res = await fetch(`${t.url}${pathname}`, { method: 'POST', headers: bearer(token), body: form });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
}

async function download(pathname: string, token: string) {
  const res = await fetch(`${t.url}${pathname}`, { headers: bearer(token) });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function storedFiles(): Promise<string[]> {
  const entries = await readdir(filesDir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

const adminThread = (p: PartnerFixture, query = '') =>
  request(t.url, 'GET', `/en/admin/partners/${p.id}/messages${query}`, { headers: bearer(admin.token) });
const partnerThread = (p: PartnerFixture) => request(t.url, 'GET', '/en/partners/messages', { headers: bearer(p.token) });

describe('messages with attachments', () => {
  const png: Upload = { name: 'logo.png', type: 'image/png', bytes: Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(40_000)]) };
  const pdf: Upload = { name: 'ataskaita už kovą (v2).pdf', type: 'application/pdf', bytes: randomBytes(MAX_BYTES) };
  let message: { id: number; attachments: Array<{ id: number; filename: string; content_type: string; size: number }> };

  it('admin posts multipart with files: 201, the message with its attachments', async () => {
    const res = await postForm(`/en/admin/partners/${a.id}/messages`, admin.token, { body: 'Your March invoice, see attached' }, [png, pdf]);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.success, true);
    assert.equal(res.body.code, 201);
    message = res.body.data;
    assert.equal(res.body.data.partner_id, a.id);
    assert.equal(res.body.data.sender, 'admin');
    assert.equal(res.body.data.body, 'Your March invoice, see attached');
    assert.equal(res.body.data.read_at, null);
    assert.deepEqual(
      message.attachments.map(({ filename, content_type, size }) => ({ filename, content_type, size })),
      [
        { filename: 'logo.png', content_type: 'image/png', size: png.bytes.length },
        { filename: pdf.name, content_type: 'application/pdf', size: MAX_BYTES },
      ],
    );
    // On disk under random names, never the client's.
    const files = await storedFiles();
    assert.equal(files.length, 2);
    for (const f of files) assert.match(path.relative(filesDir, f), /^[0-9a-f]{2}\/[0-9a-f]{32}$/);
  });

  it('downloads return the identical bytes with the stored type, length, a safe disposition and nosniff', async () => {
    for (const [i, upload] of [png, pdf].entries()) {
      const att = message.attachments[i]!;
      for (const [label, pathname, token] of [
        ['admin', `/en/admin/partners/${a.id}/messages/${message.id}/attachment/${att.id}`, admin.token],
        ['partner', `/en/partners/messages/${message.id}/attachment/${att.id}`, a.token],
      ] as const) {
        const res = await download(pathname, token);
        assert.equal(res.status, 200, label);
        assert.ok(res.bytes.equals(upload.bytes), `${label}: identical bytes`);
        assert.equal(res.headers.get('content-type'), upload.type, label);
        assert.equal(res.headers.get('content-length'), String(upload.bytes.length), label);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff', label);
        assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
      }
    }
    const res = await download(`/en/partners/messages/${message.id}/attachment/${message.attachments[1]!.id}`, a.token);
    assert.equal(res.headers.get('content-disposition'), "attachment; filename*=UTF-8''ataskaita%20u%C5%BE%20kov%C4%85%20%28v2%29.pdf");
  });

  it('the partner reads its thread (marking admin messages read) and replies with JSON; each side sees the other read', async () => {
    const listed = await partnerThread(a);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(Object.keys(listed.body.meta).sort(), ['current_page', 'last_page', 'per_page', 'total']);
    assert.equal(listed.body.meta.total, 1);
    assert.equal(listed.body.data[0].id, message.id);
    assert.match(listed.body.data[0].read_at, /^\d{4}-/);

    const reply = await request(t.url, 'POST', '/en/partners/messages', { headers: bearer(a.token), json: { body: 'Thanks, received.' } });
    assert.equal(reply.status, 201, reply.text);
    assert.equal(reply.body.data.sender, 'partner');
    assert.deepEqual(reply.body.data.attachments, []);
    assert.equal(reply.body.data.read_at, null);

    const thread = await adminThread(a);
    assert.equal(thread.status, 200, thread.text);
    assert.deepEqual(thread.body.data.map((m: { id: number }) => m.id), [reply.body.data.id, message.id], 'newest first');
    assert.match(thread.body.data[0].read_at, /^\d{4}-/, 'the admin listing marks the reply read');
    const again = await partnerThread(a);
    assert.match(again.body.data[0].read_at, /^\d{4}-/, 'the partner sees that its reply was read');
  });

  it('another partner sees nothing of the thread: its list is empty and every attachment URL is 404, like a missing one', async () => {
    const before = await adminThread(a);
    const list = await partnerThread(b);
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data, []);
    assert.equal(list.body.meta.total, 0);

    const att = message.attachments[0]!;
    const probes = [
      `/en/partners/messages/${message.id}/attachment/${att.id}`,
      `/en/partners/messages/${message.id}/attachment/2000000000`,
      `/en/partners/messages/2000000000/attachment/${att.id}`,
    ];
    const seen = [];
    for (const p of probes) {
      const res = await request(t.url, 'GET', p, { headers: bearer(b.token) });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
      seen.push({ ...res.body, request_id: undefined });
    }
    assert.deepEqual(seen[0], seen[1], 'no existence oracle');
    // Through the admin route, the attachment is not in B's thread either.
    const wrongThread = await request(t.url, 'GET', `/en/admin/partners/${b.id}/messages/${message.id}/attachment/${att.id}`, { headers: bearer(admin.token) });
    assert.equal(wrongThread.status, 404);
    // B writing adds to B's thread only.
    const bPost = await request(t.url, 'POST', '/en/partners/messages', { headers: bearer(b.token), json: { body: 'Hello from B' } });
    assert.equal(bPost.status, 201);
    const after = await adminThread(a);
    assert.deepEqual(after.body.data.map((m: { id: number; body: string }) => [m.id, m.body]), before.body.data.map((m: { id: number; body: string }) => [m.id, m.body]));
    assert.equal((await adminThread(b)).body.meta.total, 1);
  });

  it('refuses a file over the limit with a 400 in the envelope; no row and no file are left', async () => {
    const total = (await adminThread(a)).body.meta.total;
    const filesBefore = await storedFiles();
    const cases: Array<[string, Upload[], string]> = [
      ['one byte over', [{ name: 'big.bin', type: 'application/octet-stream', bytes: randomBytes(MAX_BYTES + 1) }], 'big.bin'],
      [
        'a good file then one over',
        [
          { name: 'ok.txt', type: 'text/plain', bytes: Buffer.from('fine') },
          { name: 'huge.bin', type: 'application/octet-stream', bytes: randomBytes(MAX_BYTES * 3) },
        ],
        'huge.bin',
      ],
    ];
    for (const [label, files, name] of cases) {
      const res = await postForm(`/en/admin/partners/${a.id}/messages`, admin.token, { body: 'too big' }, files);
      assert.equal(res.status, 400, `${label}: ${res.text}`);
      assert.equal(res.body.success, false);
      assert.equal(res.body.code, 400);
      assert.ok(res.body.message.includes(name) && res.body.message.includes(String(MAX_BYTES)), res.body.message);
      assert.deepEqual(Object.keys(res.body.errors), ['files']);
    }
    const tooMany = await postForm(`/en/partners/messages`, a.token, { body: 'three files' }, [png, png, png]);
    assert.equal(tooMany.status, 400, tooMany.text);
    assert.match(tooMany.body.message, /At most 2 files/);

    assert.equal((await adminThread(a)).body.meta.total, total);
    assert.deepEqual(await storedFiles(), filesBefore);
  });

  it('validates the text: required, not blank, at most 10000 characters (422 on body), and cleans up the files', async () => {
    const filesBefore = await storedFiles();
    const noBody = await postForm(`/en/admin/partners/${a.id}/messages`, admin.token, {}, [png]);
    assert.equal(noBody.status, 422, noBody.text);
    assert.deepEqual(Object.keys(noBody.body.errors), ['body']);
    const blank = await postForm(`/en/admin/partners/${a.id}/messages`, admin.token, { body: '  \n ' }, [png]);
    assert.equal(blank.status, 422, blank.text);
    const long = await postForm(`/en/partners/messages`, a.token, { body: 'ą'.repeat(10_001) });
    assert.equal(long.status, 422, long.text);
    assert.deepEqual(Object.keys(long.body.errors), ['body']);
    const okLong = await postForm(`/en/partners/messages`, a.token, { body: 'ą'.repeat(10_000) });
    assert.equal(okLong.status, 201, okLong.text);
    const nothing = await request(t.url, 'POST', '/en/partners/messages', { headers: bearer(a.token) });
    assert.equal(nothing.status, 422, nothing.text);
    assert.deepEqual(Object.keys(nothing.body.errors), ['body']);
    const nul = await postForm(`/en/partners/messages`, a.token, { body: 'a\u0000b' });
    assert.equal(nul.status, 422, nul.text);
    for (const json of [{}, { body: '' }, { body: '   ' }, { body: 5 }, { body: 'a\u0000b' }]) {
      const res = await request(t.url, 'POST', `/en/admin/partners/${a.id}/messages`, { headers: bearer(admin.token), json });
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(Object.keys(res.body.errors), ['body']);
    }
    assert.deepEqual(await storedFiles(), filesBefore);
  });

  it('keeps only the base name of a path-like file name and defaults a missing type', async () => {
    const res = await postForm(`/en/partners/messages`, a.token, { body: 'odd names' }, [
      { name: '../../etc/passwd', type: '', bytes: Buffer.from('root:x:0:0') },
    ]);
    assert.equal(res.status, 201, res.text);
    const [att] = res.body.data.attachments;
    assert.equal(att.filename, 'passwd');
    assert.equal(att.content_type, 'application/octet-stream');
    const file = await download(`/en/partners/messages/${res.body.data.id}/attachment/${att.id}`, a.token);
    assert.equal(file.bytes.toString(), 'root:x:0:0');
    for (const f of await storedFiles()) assert.ok(f.startsWith(filesDir), f);
    assert.equal((await readFile(path.join(filesDir, '..', 'etc', 'passwd')).catch(() => null)), null);
  });

  it('paginates the thread and answers 404 for an unknown partner', async () => {
    const page = await adminThread(a, '?per_page=1&page=2');
    assert.equal(page.status, 200);
    assert.equal(page.body.data.length, 1);
    assert.equal(page.body.meta.per_page, 1);
    assert.equal(page.body.meta.current_page, 2);
    for (const [method, p] of [
      ['GET', '/en/admin/partners/2000000000/messages'],
      ['POST', '/en/admin/partners/2000000000/messages'],
      ['GET', '/en/admin/partners/2000000000/messages/1/attachment/1'],
    ] as const) {
      const res = await request(t.url, method, p, { headers: bearer(admin.token), json: method === 'POST' ? { body: 'x' } : undefined });
      assert.equal(res.status, 404, `${method} ${p}: ${res.text}`);
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
    }
  });
});
