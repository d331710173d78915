// TypeBox building blocks shared by every route: the envelopes of DESIGN.md §3, the
// locale parameter and pagination. They become the OpenAPI document.
import { Type, type TSchema } from 'typebox';

export const LocaleParam = Type.Union([Type.Literal('lt'), Type.Literal('en')], {
  description: 'Response language. Any other value is 404.',
});

export const LocaleParams = Type.Object({ locale: LocaleParam });

export const IdParam = Type.Integer({ minimum: 1, maximum: 2147483647 });

export const LocaleIdParams = Type.Object({ locale: LocaleParam, id: IdParam });

export const DateTime = Type.String({ format: 'date-time' });

/** The largest quantity or EUR amount a body takes, as a number or as decimal text. */
export const MAX_DECIMAL = 1_000_000_000;

/**
 * A quantity or EUR amount as a number or, for exactness, as decimal text — with the same
 * bounds either way: 0..1,000,000,000 (`positive`: above 0), at most `places` decimals. The
 * text form's pattern spells the upper bound out (≤ 9 integer digits, or 1000000000 with
 * zero decimals), so that "9999999999.999" is a 422 on the field like 9999999999.999 is.
 * The decimal places of the number form and the zero of the text form are checked where the
 * value is parsed (they need exact arithmetic).
 */
export function DecimalInput(places: 3 | 4, positive: boolean, description: string) {
  const fraction = `(\\.\\d{1,${places}})?`;
  return Type.Union(
    [
      Type.Number({ ...(positive ? { exclusiveMinimum: 0 } : { minimum: 0 }), maximum: MAX_DECIMAL }),
      Type.String({
        pattern: `^(\\d{1,9}${fraction}|1000000000(\\.0{1,${places}})?)$`,
        maxLength: 20,
        description: `Decimal text, ${positive ? '> 0' : '≥ 0'} and ≤ ${MAX_DECIMAL}, at most ${places} decimals`,
        'x-message': places === 3 ? 'validation.decimal_text_3' : 'validation.decimal_text_4',
      }),
    ],
    { description },
  );
}

/** A name-like text: 1..max characters, not only white space. */
export const Name = (maxLength = 255) =>
  Type.String({ minLength: 1, maxLength, pattern: '\\S', 'x-message': 'validation.not_blank' });

const ErrorsField = Type.Union(
  [
    Type.Record(Type.String(), Type.Array(Type.String()), {
      description: 'Shape A: field (dotted path) → messages',
    }),
    Type.Array(
      Type.Object({
        field: Type.String(),
        message: Type.String(),
        code: Type.String(),
        meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      }),
      { description: 'Shape B: business rule failures' },
    ),
  ],
  { description: 'Validation (Shape A) or business-rule (Shape B) details' },
);

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    code: Type.Union([Type.Integer(), Type.String()]),
    message: Type.String(),
    request_id: Type.String(),
    errors: Type.Optional(ErrorsField),
  },
  { $id: 'ErrorEnvelope', description: 'Error envelope' },
);

export const PageMeta = Type.Object({
  current_page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
  last_page: Type.Integer(),
});

export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({
    success: Type.Literal(true),
    code: Type.Integer(),
    message: Type.String(),
    data,
    request_id: Type.String(),
  });
}

export const EmptyEnvelope = Type.Object({
  success: Type.Literal(true),
  code: Type.Integer(),
  message: Type.String(),
  request_id: Type.String(),
});

/** Lists with `meta` (DESIGN.md §3; `pagination` is for coupon and partner-card lists). */
export function ListEnvelope<T extends TSchema>(item: T) {
  return Type.Object({
    success: Type.Literal(true),
    code: Type.Integer(),
    message: Type.String(),
    data: Type.Array(item),
    meta: PageMeta,
    request_id: Type.String(),
  });
}

export function PaginatedEnvelope<T extends TSchema>(item: T) {
  return Type.Object({
    success: Type.Literal(true),
    code: Type.Integer(),
    message: Type.String(),
    data: Type.Array(item),
    pagination: PageMeta,
    request_id: Type.String(),
  });
}

export const PageQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
});

const errorRef = Type.Unsafe<Record<string, unknown>>(Type.Ref('ErrorEnvelope'));

/** The error statuses a route can answer with, for the schema and the OpenAPI document. */
export function errorResponses(...statuses: number[]) {
  const out: Record<number, typeof errorRef> = {};
  for (const s of new Set([...statuses, 500])) out[s] = errorRef;
  return out;
}

/** Statuses every authenticated route can produce. */
export const AUTH_ERRORS = [400, 401, 403, 429] as const;

