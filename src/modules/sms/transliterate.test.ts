// Opt-in transliteration of Lithuanian / Polish letters and typography to GSM-7 look-alikes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isGsm7, layout } from './sms-text.js';
import { TRANSLITERATIONS, transliterate } from './transliterate.js';

const LITHUANIAN: [string, string][] = [
  ['ą', 'a'], ['č', 'c'], ['ę', 'e'], ['ė', 'e'], ['į', 'i'], ['š', 's'], ['ų', 'u'], ['ū', 'u'], ['ž', 'z'],
  ['Ą', 'A'], ['Č', 'C'], ['Ę', 'E'], ['Ė', 'E'], ['Į', 'I'], ['Š', 'S'], ['Ų', 'U'], ['Ū', 'U'], ['Ž', 'Z'],
];
const POLISH: [string, string][] = [
  ['ą', 'a'], ['ć', 'c'], ['ę', 'e'], ['ł', 'l'], ['ń', 'n'], ['ó', 'o'], ['ś', 's'], ['ź', 'z'], ['ż', 'z'],
  ['Ą', 'A'], ['Ć', 'C'], ['Ę', 'E'], ['Ł', 'L'], ['Ń', 'N'], ['Ó', 'O'], ['Ś', 'S'], ['Ź', 'Z'], ['Ż', 'Z'],
];
const TYPOGRAPHY: [string, string][] = [
  ['\u201C', '"'], ['\u201D', '"'], ['\u201E', '"'],
  ['\u2018', "'"], ['\u2019', "'"], ['\u201A', "'"],
  ['\u2013', '-'], ['\u2014', '-'], ['\u2026', '...'], ['\u00A0', ' '], ['\u2022', '*'],
];

describe('transliterate: every letter and symbol', () => {
  for (const [name, table] of [['Lithuanian', LITHUANIAN], ['Polish', POLISH], ['typography', TYPOGRAPHY]] as const) {
    it(`${name}: each character becomes its GSM-7 look-alike`, () => {
      for (const [from, to] of table) {
        assert.equal(isGsm7(from), false, `${from} is not GSM-7 to begin with`);
        assert.deepEqual(transliterate(from), { text: to, changed: true }, from);
        assert.deepEqual(transliterate(`x${from}y`), { text: `x${to}y`, changed: true }, from);
        assert.ok(isGsm7(to), `${to} is GSM-7`);
      }
    });
  }

  it('the whole alphabets at once', () => {
    assert.equal(transliterate('ąčęėįšųūž ĄČĘĖĮŠŲŪŽ').text, 'aceeisuuz ACEEISUUZ');
    assert.equal(transliterate('ąćęłńóśźż ĄĆĘŁŃÓŚŹŻ').text, 'acelnoszz ACELNOSZZ');
  });

  it('the exported table is exactly the documented one and maps only to GSM-7', () => {
    const expected = Object.fromEntries([...LITHUANIAN, ...POLISH, ...TYPOGRAPHY]);
    assert.deepEqual({ ...TRANSLITERATIONS }, expected);
    for (const [from, to] of Object.entries(TRANSLITERATIONS)) {
      assert.equal(isGsm7(from), false, from);
      assert.equal(isGsm7(to), true, to);
    }
  });
});

describe('transliterate: what it leaves alone', () => {
  it('a text that is already GSM-7 comes back as the same string, changed false', () => {
    const texts = [
      '',
      'Hello, world!',
      'Grüße aus München: Äpfel, Öl, Übermaß',
      'Café Müller: 10€ {promo} [50%] ~ ^ | \\ é ä ö ü Ä Ö Ü Ñ Ç ß\r\nline two',
    ];
    for (const text of texts) {
      assert.ok(isGsm7(text), text);
      const r = transliterate(text);
      assert.equal(r.changed, false);
      assert.equal(r.text, text);
    }
  });

  it('GSM-7 characters next to mapped ones are kept (é, ä, ö, ü, Ä, Ç, €, CRLF)', () => {
    assert.deepEqual(transliterate('é ä ö ü Ä Ç € ą\r\n'), { text: 'é ä ö ü Ä Ç € a\r\n', changed: true });
  });

  it('characters with no look-alike stay, and the text goes as UCS-2', () => {
    const r = transliterate('Ačiū 😀 — спасибо');
    assert.equal(r.text, 'Aciu 😀 - спасибо');
    assert.equal(r.changed, true);
    assert.equal(layout(r.text).encoding, 'UCS-2');
  });

  it('a text with nothing to map comes back unchanged even if it is not GSM-7', () => {
    for (const text of ['привет', '😀', 'ç', 'tab\there', 'back`tick', '中文']) {
      assert.deepEqual(transliterate(text), { text, changed: false });
    }
  });
});

describe('transliterate: mixed and decomposed text', () => {
  it('a mixed Lithuanian / Polish / typographic text', () => {
    const r = transliterate('„Šeštadienį“ – Łódź… ‘Żółć’ • Ąžuolas\u00A0ir Ęę');
    assert.deepEqual(r, { text: '"Sestadieni" - Lodz... \'Zolc\' * Azuolas ir Ee', changed: true });
    assert.ok(isGsm7(r.text));
  });

  it('decomposed letters (base + combining mark) are mapped like precomposed ones', () => {
    const nfd = 'Ačiū, Łódź, ąžuolas'.normalize('NFD');
    assert.notEqual(nfd, 'Ačiū, Łódź, ąžuolas');
    assert.deepEqual(transliterate(nfd), { text: 'Aciu, Lodz, azuolas', changed: true });
    // e + U+0301 becomes the GSM-7 é rather than losing its accent.
    assert.deepEqual(transliterate('Cafe\u0301'), { text: 'Café', changed: true });
  });

  it('a combining mark with no GSM-7 result is left as it came', () => {
    const text = 'a\u030C'; // ǎ decomposed: no look-alike defined
    assert.deepEqual(transliterate(text), { text, changed: false });
  });
});

describe('transliterate: idempotence', () => {
  const samples = [
    'Sveiki! Jūsų užsakymas Nr. 42 paruoštas – atsiimkite „Ąžuolo“ parduotuvėje…',
    'Dzień dobry! Zamówienie nr 42 czeka w sklepie „Żółw” — zapraszamy…',
    'Ačiū 😀 спасибо',
    'ż\u030C ą\u030C e\u0301\u0301 Š\u0328',
    'Café {ok}',
    '',
  ];
  it('transliterating twice equals transliterating once', () => {
    for (const s of samples) {
      const once = transliterate(s).text;
      const twice = transliterate(once);
      assert.equal(twice.text, once, JSON.stringify(s));
      assert.equal(twice.changed, false, JSON.stringify(s));
    }
  });
});

describe('transliterate: part count', () => {
  it('a 100-character Lithuanian sentence: UCS-2 in 2 parts before, GSM-7 in 1 part after', () => {
    const sentence =
      'Sveiki! Jūsų užsakymas Nr. 4521 paruoštas. Atsiimkite jį parduotuvėje iki šeštadienio 18 val. Ačiū!!';
    assert.equal([...sentence].length, 100);
    const before = layout(sentence);
    assert.equal(before.encoding, 'UCS-2');
    assert.equal(before.parts, 2);
    const r = transliterate(sentence);
    assert.equal(r.changed, true);
    assert.equal([...r.text].length, 100, 'letters map one to one');
    const after = layout(r.text);
    assert.equal(after.encoding, 'GSM-7');
    assert.equal(after.parts, 1);
    assert.equal(after.units, 100);
  });

  it('a Polish text that needs 3 UCS-2 parts fits 1 GSM-7 part after', () => {
    const text = 'Zażółć gęślą jaźń. '.repeat(8); // 152 characters
    assert.equal(layout(text).parts, 3);
    const after = layout(transliterate(text).text);
    assert.equal(after.encoding, 'GSM-7');
    assert.equal(after.parts, 1);
  });
});
