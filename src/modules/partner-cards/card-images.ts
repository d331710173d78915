// Card images (card_design.logo, card_design.background_image) arrive as data URIs and are
// shown by the mobile app and the dashboards. Only raster formats that every client decodes
// safely are taken; SVG is refused because it is a document (scripts, external references),
// not a picture. The declared type must match the bytes, so a client cannot label one format
// as another.
import type { MessageKey, MessageParams } from '../../shared/i18n.js';

export const IMAGE_TYPES = ['png', 'jpeg', 'gif', 'webp'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

/** Decoded-size limits, bytes. */
export const IMAGE_LIMITS = {
  logo: 512 * 1024,
  background_image: 2 * 1024 * 1024,
} as const;

const PREFIX = /^data:image\/(png|jpeg|gif|webp);base64,/;

/** `data:image/webp;base64,` is the longest prefix. */
const LONGEST_PREFIX = 'data:image/webp;base64,'.length;

/** Length of the longest data URI whose decoded image is at most `bytes`. */
export const dataUriMaxLength = (bytes: number) => LONGEST_PREFIX + Math.ceil(bytes / 3) * 4;

/** The schema pattern: the format is checked there, the bytes here. */
export const DATA_URI_PATTERN = '^data:image/(png|jpeg|gif|webp);base64,';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function matchesMagic(type: ImageType, b: Buffer): boolean {
  switch (type) {
    case 'png':
      return b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    case 'jpeg':
      return b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
    case 'gif': {
      const head = b.subarray(0, 6).toString('latin1');
      return head === 'GIF87a' || head === 'GIF89a';
    }
    case 'webp':
      return b.length >= 12 && b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP';
  }
}

const TYPE_NAMES: Record<ImageType, string> = { png: 'PNG', jpeg: 'JPEG', gif: 'GIF', webp: 'WebP' };

/** undefined when the data URI is an acceptable image; otherwise the message for the field. */
export function imageProblem(value: string, maxBytes: number): { key: MessageKey; params?: MessageParams } | undefined {
  const m = PREFIX.exec(value);
  if (!m) return { key: 'partner_cards.image_data_uri' };
  const type = m[1] as ImageType;
  const data = value.slice(m[0].length);
  if (data.length === 0 || data.length % 4 !== 0 || !BASE64.test(data)) return { key: 'partner_cards.image_base64' };
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  const size = (data.length / 4) * 3 - padding;
  if (size > maxBytes) return { key: 'partner_cards.image_too_large', params: { limit: maxBytes } };
  if (!matchesMagic(type, Buffer.from(data.slice(0, 24), 'base64'))) {
    return { key: 'partner_cards.image_type_mismatch', params: { type: TYPE_NAMES[type] } };
  }
  return undefined;
}
