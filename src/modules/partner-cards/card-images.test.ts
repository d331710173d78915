import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dataUriMaxLength, imageProblem } from './card-images.js';

const uri = (type: string, bytes: Buffer) => `data:image/${type};base64,${bytes.toString('base64')}`;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xdb, 0, 0]);
const GIF = Buffer.from('GIF87a\x01\x00', 'latin1');
const WEBP = Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8L', 'latin1');

describe('card images', () => {
  it('accepts PNG, JPEG, GIF and WebP whose bytes match the declared type', () => {
    for (const [type, bytes] of [['png', PNG], ['jpeg', JPEG], ['gif', GIF], ['webp', WEBP]] as const) {
      assert.equal(imageProblem(uri(type, bytes), 1024), undefined, type);
    }
  });

  it('refuses a type the bytes do not match, SVG, other types and non-data URIs', () => {
    assert.deepEqual(imageProblem(uri('jpeg', PNG), 1024), { key: 'partner_cards.image_type_mismatch', params: { type: 'JPEG' } });
    assert.deepEqual(imageProblem(uri('webp', Buffer.from('RIFF\x10\x00\x00\x00WAVEfmt ', 'latin1')), 1024)?.key, 'partner_cards.image_type_mismatch');
    assert.equal(imageProblem(uri('svg+xml', Buffer.from('<svg/>')), 1024)?.key, 'partner_cards.image_data_uri');
    assert.equal(imageProblem(uri('bmp', Buffer.from('BM')), 1024)?.key, 'partner_cards.image_data_uri');
    assert.equal(imageProblem('https://example.com/a.png', 1024)?.key, 'partner_cards.image_data_uri');
    assert.equal(imageProblem(`data:image/png,${PNG.toString('latin1')}`, 1024)?.key, 'partner_cards.image_data_uri');
  });

  it('refuses malformed base64', () => {
    for (const data of ['', 'iVBORw0', 'iVBO RW0=', 'iVB=ORw0', 'iVBORw0KG===']) {
      assert.equal(imageProblem(`data:image/png;base64,${data}`, 1024)?.key, 'partner_cards.image_base64', JSON.stringify(data));
    }
  });

  it('limits the decoded size exactly, padding included', () => {
    for (const size of [8, 9, 10, 11, 12]) {
      const bytes = Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(size - 8)]);
      assert.equal(imageProblem(uri('png', bytes), size), undefined, `${size} bytes at a limit of ${size}`);
      assert.deepEqual(imageProblem(uri('png', bytes), size - 1), { key: 'partner_cards.image_too_large', params: { limit: size - 1 } });
      assert.ok(uri('png', bytes).length <= dataUriMaxLength(size), 'the schema length bound admits every legal image');
    }
  });
});
