// layout(): encoding choice, unit counts and segmentation against the spec's part table,
// DESIGN.md §4 and reference/sms.md §2 (3GPP TS 23.038 / 23.040), and the GSM-7 alphabet
// against the `smpp` package's coder that the SMPP adapter sends with.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { characterCount, isGsm7, layout, LIMITS, type SmsLayout } from './sms-text.js';

const rep = (s: string, n: number) => s.repeat(n);

/** Units one segment costs, counted independently of sms-text.ts. */
const EXTENSION = new Set('\f^{}\\[~]|€');
function segmentUnits(segment: string, encoding: SmsLayout['encoding']): number {
  if (encoding === 'UCS-2') return segment.length;
  let n = 0;
  for (const ch of segment) n += EXTENSION.has(ch) ? 2 : 1;
  return n;
}

/** Every invariant a layout must keep, whatever the text. */
function assertConsistent(text: string, l: SmsLayout) {
  assert.equal(l.segments.join(''), text, 'segments joined give the text back');
  assert.equal(l.parts, l.segments.length);
  const limit = l.parts === 1 ? LIMITS[l.encoding].single : LIMITS[l.encoding].concatenated;
  let total = 0;
  for (const [i, seg] of l.segments.entries()) {
    const u = segmentUnits(seg, l.encoding);
    total += u;
    assert.ok(u <= limit, `segment ${i} has ${u} units > ${limit}`);
    if (l.parts > 1) assert.ok(seg.length > 0, `segment ${i} is empty`);
    // No surrogate pair split: a segment neither starts with a low nor ends with a high surrogate.
    assert.ok(!/^[\uDC00-\uDFFF]/.test(seg), `segment ${i} starts inside a surrogate pair`);
    assert.ok(!/[\uD800-\uDBFF]$/.test(seg), `segment ${i} ends inside a surrogate pair`);
  }
  assert.equal(total, l.units, 'units are the sum over segments');
  // A greedy split: the next segment's first character would not have fitted in this one.
  for (let i = 0; i + 1 < l.segments.length; i++) {
    const first = [...l.segments[i + 1]!][0]!;
    assert.ok(
      segmentUnits(l.segments[i]!, l.encoding) + segmentUnits(first, l.encoding) > limit,
      `segment ${i} was cut early`,
    );
  }
}

function check(text: string, encoding: SmsLayout['encoding'], parts: number, units?: number) {
  const l = layout(text);
  assert.equal(l.encoding, encoding, 'encoding');
  assert.equal(l.parts, parts, `parts of ${units ?? l.units} units`);
  if (units !== undefined) assert.equal(l.units, units, 'units');
  assertConsistent(text, l);
  return l;
}

describe('layout: the spec part table at every boundary', () => {
  const gsm: [number, number][] = [
    [1, 1], [160, 1], [161, 2], [306, 2], [307, 3], [459, 3], [460, 4],
  ];
  for (const [n, parts] of gsm) {
    it(`GSM-7: ${n} characters → ${parts} part(s)`, () => {
      check(rep('a', n), 'GSM-7', parts, n);
    });
  }
  const ucs: [number, number][] = [
    [1, 1], [70, 1], [71, 2], [134, 2], [135, 3], [201, 3], [202, 4],
  ];
  for (const [n, parts] of ucs) {
    it(`UCS-2: ${n} characters → ${parts} part(s)`, () => {
      check(rep('ж', n), 'UCS-2', parts, n);
    });
  }

  it('concatenated parts hold exactly 153 septets / 67 units', () => {
    const g = check(rep('a', 306), 'GSM-7', 2);
    assert.deepEqual(g.segments.map((s) => s.length), [153, 153]);
    const u = check(rep('ж', 134), 'UCS-2', 2);
    assert.deepEqual(u.segments.map((s) => s.length), [67, 67]);
  });

  it('1600 GSM characters = 11 parts; 1600 UCS-2 characters = 24 parts', () => {
    check(rep('a', 1600), 'GSM-7', 11, 1600);
    check(rep('ą', 1600), 'UCS-2', 24, 1600);
    assert.equal(characterCount(rep('a', 1600)), 1600);
  });

  it('an empty text is one empty part', () => {
    assert.deepEqual(layout(''), { encoding: 'GSM-7', units: 0, parts: 1, segments: [''] });
  });
});

describe('layout: GSM-7 extension characters count double and are never split', () => {
  it('every extension character costs two septets', () => {
    for (const ch of '\f^{}\\[~]|€') {
      assert.deepEqual(layout(ch), { encoding: 'GSM-7', units: 2, parts: 1, segments: [ch] }, JSON.stringify(ch));
    }
  });

  it('80 × € = 160 septets = 1 part; 81 × € = 162 → 2 parts', () => {
    check(rep('€', 80), 'GSM-7', 1, 160);
    const l = check(rep('€', 81), 'GSM-7', 2, 162);
    // 153 is odd: 76 pairs (152 septets) fit, the 77th moves on whole.
    assert.deepEqual(l.segments.map((s) => s.length), [76, 5]);
  });

  it("153 × ']' = 306 septets → 3 parts, because pairs cannot straddle (live Twilio agrees)", () => {
    const l = check(rep(']', 153), 'GSM-7', 3, 306);
    assert.deepEqual(l.segments.map((s) => s.length), [76, 76, 1]);
  });

  it("DESIGN example: 152 × 'a' + '€' + 152 × 'a' = 306 septets → 3 parts", () => {
    const text = rep('a', 152) + '€' + rep('a', 152);
    const l = check(text, 'GSM-7', 3, 306);
    assert.equal(l.segments[0], rep('a', 152), 'the escape pair moves to part 2 whole');
    assert.equal(l.segments[1], '€' + rep('a', 151));
    assert.equal(l.segments[2], 'a');
  });

  it("151 × 'a' + '€' fits the first concatenated part exactly (153 septets)", () => {
    const l = check(rep('a', 151) + '€' + rep('a', 153), 'GSM-7', 2, 306);
    assert.equal(l.segments[0], rep('a', 151) + '€');
  });

  it('a single part with an extension character: 158 a + € = 160 fits, 159 a + € = 161 does not', () => {
    check(rep('a', 158) + '€', 'GSM-7', 1, 160);
    check(rep('a', 159) + '€', 'GSM-7', 2, 161);
  });
});

describe('layout: UCS-2 surrogate pairs count two units and are never split', () => {
  it('35 × 😀 = 70 units = 1 part; 36 × 😀 = 72 → 2 parts', () => {
    check(rep('😀', 35), 'UCS-2', 1, 70);
    const l = check(rep('😀', 36), 'UCS-2', 2, 72);
    // 67 is odd: 33 emoji (66 units) fit a concatenated part, the 34th moves on whole.
    assert.deepEqual(l.segments.map((s) => s.length), [66, 6]);
  });

  it("66 × 'ж' + 😀 + 66 × 'ж' → 3 parts: the pair is not split at unit 67", () => {
    const text = rep('ж', 66) + '😀' + rep('ж', 66);
    const l = check(text, 'UCS-2', 3, 134);
    assert.equal(l.segments[0], rep('ж', 66));
    assert.equal(l.segments[1], '😀' + rep('ж', 65));
    assert.equal(l.segments[2], 'ж');
  });

  it("65 × 'ж' + 😀 fits the first concatenated part exactly (67 units)", () => {
    const l = check(rep('ж', 65) + '😀' + rep('ж', 67), 'UCS-2', 2, 134);
    assert.equal(l.segments[0], rep('ж', 65) + '😀');
  });

  it('a single part: 68 ж + 😀 = 70 units fits; 69 ж + 😀 = 71 does not', () => {
    check(rep('ж', 68) + '😀', 'UCS-2', 1, 70);
    check(rep('ж', 69) + '😀', 'UCS-2', 2, 71);
  });

  it('clusters count every code unit: 👍🏽 = 4, 👨‍👩‍👧 = 8, e + U+0301 = 2', () => {
    check('👍🏽', 'UCS-2', 1, 4);
    check('👨‍👩‍👧', 'UCS-2', 1, 8);
    check(rep('e\u0301', 70), 'UCS-2', 3, 140); // live Twilio: 3 parts
  });

  it('GSM characters in a UCS-2 text cost one unit each, extension characters too', () => {
    check('€' + rep('a', 68) + 'ж', 'UCS-2', 1, 70);
    check('€' + rep('a', 69) + 'ж', 'UCS-2', 2, 71);
  });
});

describe('layout: which characters force UCS-2', () => {
  it("lowercase 'ç' is UCS-2, capital 'Ç' is GSM-7", () => {
    check('Façade', 'UCS-2', 1, 6);
    check('FAÇADE', 'GSM-7', 1, 6);
    assert.equal(isGsm7('ç'), false);
    assert.equal(isGsm7('Ç'), true);
  });

  it('every Lithuanian and Polish letter outside Latin-1-in-GSM forces UCS-2', () => {
    for (const ch of 'ąčęėįšųūžĄČĘĖĮŠŲŪŽćłńóśźżĆŁŃÓŚŹŻ') {
      assert.equal(isGsm7(ch), false, ch);
      const l = check(rep('a', 100) + ch, 'UCS-2', 2, 101);
      assert.equal(l.encoding, 'UCS-2', ch);
    }
  });

  it('backtick, tab, NBSP, á and ó force UCS-2', () => {
    for (const ch of ['`', '\t', '\u00A0', 'á', 'ó']) {
      assert.equal(isGsm7(ch), false, JSON.stringify(ch));
      check(`a${ch}b`, 'UCS-2', 1, 3);
    }
  });

  it('a raw ESC (0x1B) is not text and forces UCS-2', () => {
    assert.equal(isGsm7('\x1B'), false);
  });

  it('the letters GSM-7 does have stay GSM-7: é ä ö ü Ä Ö Ü Ñ ñ à è ù ì ò É Ø ø Å å Æ æ ß', () => {
    check('éäöüÄÖÜÑñàèùìòÉØøÅåÆæß', 'GSM-7', 1, 22);
  });

  it('the GSM-7 alphabet has 127 basic and 10 extension characters (3GPP TS 23.038)', () => {
    const accepted = bmpGsmCharacters();
    assert.equal(accepted.length, 137);
    const ext = accepted.filter((ch) => layout(ch).units === 2);
    assert.deepEqual(ext.sort(), [...'\f^{}\\[~]|€'].sort());
  });
});

describe('layout: line breaks', () => {
  it('CRLF counts 2: 80 a + CRLF + 79 a = 161 → 2 parts; with LF = 160 → 1 part', () => {
    check(rep('a', 80) + '\r\n' + rep('a', 79), 'GSM-7', 2, 161);
    check(rep('a', 80) + '\n' + rep('a', 79), 'GSM-7', 1, 160);
  });

  it('CRLF in UCS-2 counts 2 units as well', () => {
    check(rep('ж', 34) + '\r\n' + rep('ж', 34), 'UCS-2', 1, 70);
    check(rep('ж', 35) + '\r\n' + rep('ж', 34), 'UCS-2', 2, 71);
  });
});

describe('layout: invariants over many generated texts', () => {
  // Deterministic pseudo-random texts mixing plain, extension, BMP and astral characters,
  // around every part boundary.
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const gsmAlphabet = ['a', 'Z', ' ', '€', ']', '{', '\n', '\r', 'É', 'ß'];
  const ucsAlphabet = [...gsmAlphabet, 'ж', 'ą', '😀', '👍🏽', 'e\u0301', '中'];

  it('segments join to the text, fit their limits and are cut greedily', () => {
    for (let i = 0; i < 400; i++) {
      const alphabet = i % 2 === 0 ? gsmAlphabet : ucsAlphabet;
      const len = 1 + rnd(700);
      let text = '';
      for (let k = 0; k < len; k++) text += alphabet[rnd(alphabet.length)];
      const l = layout(text);
      assert.equal(l.encoding, isGsm7(text) ? 'GSM-7' : 'UCS-2');
      assertConsistent(text, l);
      const expectedUnits = segmentUnits(text, l.encoding);
      assert.equal(l.units, expectedUnits);
      if (l.units <= LIMITS[l.encoding].single) assert.equal(l.parts, 1);
      // Never fewer parts than the units allow, never more than one wasted unit per boundary allows.
      const per = LIMITS[l.encoding].concatenated;
      if (l.parts > 1) {
        assert.ok(l.parts >= Math.ceil(l.units / per));
        assert.ok(l.parts <= Math.ceil(l.units / (per - 1)));
      }
    }
  });
});

// ---- The smpp package's GSM coder (node_modules/smpp/lib/defs.js) ----

interface SmppEncoding {
  match(value: string): boolean;
  encode(value: string): Buffer;
  decode(value: Buffer): string;
}
const require = createRequire(import.meta.url);
const smpp = require('smpp') as {
  encodings: { ASCII: SmppEncoding; detect(value: string): string | false };
  gsmCoder: { GSM: { charRegex: RegExp } };
};

/** Every BMP character that isGsm7 accepts. */
function bmpGsmCharacters(): string[] {
  const out: string[] = [];
  for (let cp = 0; cp <= 0xffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCharCode(cp);
    if (isGsm7(ch)) out.push(ch);
  }
  return out;
}

describe('GSM-7 alphabet agrees with the smpp package the SMPP adapter sends with', () => {
  const gsm = smpp.encodings.ASCII; // node-smpp's name for the GSM 03.38 default alphabet

  it('every character isGsm7 accepts round-trips through smpp’s GSM coder', () => {
    for (const ch of bmpGsmCharacters()) {
      assert.ok(gsm.match(ch), `smpp does not match ${JSON.stringify(ch)}`);
      const bytes = gsm.encode(ch);
      assert.equal(gsm.decode(bytes), ch, `round trip of ${JSON.stringify(ch)}`);
      assert.equal(bytes.length, layout(ch).units, `septets of ${JSON.stringify(ch)}`);
    }
  });

  it('every character smpp’s GSM table accepts (except raw ESC) is GSM-7 for us too', () => {
    for (let cp = 0; cp <= 0xffff; cp++) {
      if ((cp >= 0xd800 && cp <= 0xdfff) || cp === 0x1b) continue;
      const ch = String.fromCharCode(cp);
      assert.equal(isGsm7(ch), smpp.gsmCoder.GSM.charRegex.test(ch), `U+${cp.toString(16)}`);
    }
  });

  it('smpp picks its GSM encoding for GSM-7 texts, and its septet count equals ours per segment', () => {
    const text = bmpGsmCharacters().join('').repeat(3) + '\r\n' + rep('€', 40);
    const l = layout(text);
    assert.equal(l.encoding, 'GSM-7');
    assert.equal(smpp.encodings.detect(text), 'ASCII');
    assert.equal(gsm.decode(gsm.encode(text)), text);
    for (const seg of l.segments) {
      const bytes = gsm.encode(seg);
      assert.equal(gsm.decode(bytes), seg);
      assert.ok(bytes.length <= LIMITS['GSM-7'].concatenated, `${bytes.length} septets`);
      assert.equal(bytes.length, segmentUnits(seg, 'GSM-7'));
      // The segment never ends on a bare ESC: the escape pair was kept whole.
      assert.notEqual(bytes[bytes.length - 1], 0x1b);
    }
  });

  it('smpp does not take UCS-2 texts for its GSM encoding', () => {
    for (const text of ['ą', 'ç', '`', '\t', '\u00A0', '😀', 'ж']) {
      assert.equal(layout(text).encoding, 'UCS-2');
      assert.equal(gsm.match(text), false, JSON.stringify(text));
    }
  });
});
