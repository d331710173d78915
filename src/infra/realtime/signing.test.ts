// The test vectors of Pusher's library_auth_reference (shared/reference/realtime.md §1.7),
// and the failures of the HTTP API signature check.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  apiStringToSign,
  hmacSha256Hex,
  md5Hex,
  safeEqual,
  signApiRequest,
  signChannel,
  verifyApiRequest,
  verifyChannelAuth,
} from './signing.js';

const APP = { key: '278d425bdf160c739803', secret: '7ad3773142a6692b25b8' };
const BODY = '{"name":"foo","channels":["project-3"],"data":"{\\"some\\":\\"data\\"}"}';

describe('Pusher signatures: reference test vectors', () => {
  it('hashes the events body to the documented MD5', () => {
    assert.equal(md5Hex(BODY), 'ec365a775a4cd0599faeb73354201b6f');
  });

  it('signs POST /apps/3/events at 1353088179 as documented', () => {
    const params = {
      auth_key: APP.key,
      auth_timestamp: '1353088179',
      auth_version: '1.0',
      body_md5: 'ec365a775a4cd0599faeb73354201b6f',
    };
    assert.equal(
      apiStringToSign('POST', '/apps/3/events', params),
      'POST\n/apps/3/events\nauth_key=278d425bdf160c739803&auth_timestamp=1353088179&auth_version=1.0&body_md5=ec365a775a4cd0599faeb73354201b6f',
    );
    const signature = signApiRequest(APP.secret, 'POST', '/apps/3/events', params);
    assert.equal(signature, 'da454824c97ba181a32ccc17a72625ba02771f50b50e1e7430e47a1f3f457e6c');
    const request = { method: 'POST', path: '/apps/3/events', body: BODY, now: 1353088179 + 599 };
    assert.equal(verifyApiRequest(APP, { ...request, params: { ...params, auth_signature: signature } }), undefined);
  });

  it('signs a private channel as documented', () => {
    assert.equal(
      signChannel(APP.key, APP.secret, '1234.1234', 'private-foobar'),
      `${APP.key}:58df8b0c36d6982b82c3ecf6b4662e34fe8c25bba48f5369f135bf843651c3a4`,
    );
    assert.ok(verifyChannelAuth(APP, `${APP.key}:58df8b0c36d6982b82c3ecf6b4662e34fe8c25bba48f5369f135bf843651c3a4`, '1234.1234', 'private-foobar'));
    assert.ok(!verifyChannelAuth(APP, `${APP.key}:58df8b0c36d6982b82c3ecf6b4662e34fe8c25bba48f5369f135bf843651c3a5`, '1234.1234', 'private-foobar'));
    assert.ok(!verifyChannelAuth(APP, `${APP.key}:58df8b0c36d6982b82c3ecf6b4662e34fe8c25bba48f5369f135bf843651c3a4`, '1234.1235', 'private-foobar'));
    assert.ok(!verifyChannelAuth(APP, undefined, '1234.1234', 'private-foobar'));
  });

  it('signs a user sign-in string as documented', () => {
    assert.equal(
      hmacSha256Hex(APP.secret, '1234.1234::user::{"id":"12345"}'),
      '4708d583dada6a56435fb8bc611c77c359a31eebde13337c16ab43aa6de336ba',
    );
  });

  it('signs the printed presence example with the corrected value', () => {
    const channelData = '{"user_id":10,"user_info":{"name":"Mr. Channels"}}';
    assert.equal(
      signChannel(APP.key, APP.secret, '1234.1234', 'presence-foobar', channelData),
      `${APP.key}:31935e7d86dba64c2a90aed31fdc61869f9b22ba9d8863bba239c03ca481bc80`,
    );
  });
});

describe('HTTP API signature check', () => {
  const now = 1_700_000_000;
  function signed(overrides: Record<string, string> = {}, body = BODY, path = '/apps/3/events') {
    const params: Record<string, string> = { auth_key: APP.key, auth_timestamp: String(now), auth_version: '1.0', body_md5: md5Hex(body), ...overrides };
    params.auth_signature = signApiRequest(APP.secret, 'POST', path, params);
    return params;
  }
  const verify = (params: Record<string, string>, extra: Partial<{ body: string; now: number; path: string }> = {}) =>
    verifyApiRequest(APP, { method: 'POST', path: extra.path ?? '/apps/3/events', params, body: extra.body ?? BODY, now: extra.now ?? now });

  it('accepts a signed request, with extra parameters signed too', () => {
    assert.equal(verify(signed()), undefined);
    assert.equal(verify(signed({ info: 'user_count,subscription_count' })), undefined);
  });

  it('refuses each kind of tampering', () => {
    const { auth_key: _omitted, ...noKey } = signed();
    assert.equal(verify(noKey), 'missing_parameters');
    assert.equal(verify(signed({ auth_key: 'ffffffffffffffffffff' })), 'unknown_key');
    assert.equal(verify(signed({ auth_version: '2.0' })), 'bad_version');
    assert.equal(verify(signed({ auth_timestamp: 'soon' })), 'bad_timestamp');
    assert.equal(verify(signed(), { now: now + 601 }), 'expired');
    assert.equal(verify(signed(), { now: now - 601 }), 'expired');
    assert.equal(verify(signed(), { now: now + 600 }), undefined);
    assert.equal(verify(signed(), { body: `${BODY} ` }), 'body_md5');
    assert.equal(verify({ ...signed(), info: 'x' }), 'bad_signature');
    assert.equal(verify(signed(), { path: '/apps/4/events' }), 'bad_signature');
    assert.equal(verify({ ...signed(), auth_signature: '0'.repeat(64) }), 'bad_signature');
  });

  it('compares in constant time without throwing on a length mismatch', () => {
    assert.equal(safeEqual('abc', 'abc'), true);
    assert.equal(safeEqual('abc', 'abcd'), false);
    assert.equal(safeEqual('', ''), true);
  });
});
