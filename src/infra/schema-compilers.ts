// Request validators (AJV) and response serializers (fast-json-stringify), compiled when a
// route first needs them and once per process.
//
// Fastify compiles every route's schemas while it gets ready: for this API's ~300 routes
// that was about half the CPU of starting an app (measured with --cpu-prof: ~8 CPU-s of
// fast-json-stringify and AJV per start on a loaded 2-core machine) — paid by every node
// and cluster worker at boot, and by every test file for the handful of routes it calls.
// Here each route gets a stand-in that compiles the real function on its first call, and a
// compiled function is kept per schema object, so a second app in the same process (cluster
// tests, several nodes in one test) compiles nothing again. The functions are pure (AJV's
// `errors` is read right after the call), so apps may share them.
//
// A schema that cannot be compiled would then fail on the route's first request instead of
// at boot: the server compiles everything in the background once it listens (`warmPending`,
// src/server.ts), between requests, and stops if one fails — a wiring mistake still stops a
// node at start; the OpenAPI test compiles every route's schemas (`compilePending`).
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fastJsonStringify from 'fast-json-stringify';

// ajv-formats is published as CommonJS with a default export.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: true,
    removeAdditional: true,
    strict: false,
    // parentSchema lets a schema carry its own message key (`x-message`).
    verbose: true,
  });
  addFormats(ajv);
  return ajv;
}

// Bodies are validated strictly (a string is not a number); query strings and paths
// arrive as text and are coerced to the declared types.
const bodyAjv = makeAjv(false);
const textAjv = makeAjv('array');

/** Stand-ins not yet compiled: compilePending() compiles them. */
const pending = new Set<() => void>();
/** Functions compiled in this process (not counting the ones found compiled already). */
let compiledCount = 0;
export const schemaCompilerStats = () => ({ pending: pending.size, compiled: compiledCount });

const validators = { body: new WeakMap<object, ValidateFunction>(), text: new WeakMap<object, ValidateFunction>() };

type Validator = ((data: unknown) => boolean) & { errors?: ValidateFunction['errors'] };

/** Fastify's validatorCompiler: the AJV function of `schema`, compiled on its first call. */
export function lazyValidator({ schema, httpPart }: { schema?: unknown; httpPart?: string }): Validator {
  const body = httpPart === 'body';
  const cache = body ? validators.body : validators.text;
  let compiled: ValidateFunction | undefined;
  const compile = () => {
    compiled ??= cache.get(schema as object);
    if (!compiled) {
      compiled = (body ? bodyAjv : textAjv).compile(schema as object);
      cache.set(schema as object, compiled);
      compiledCount += 1;
    }
    pending.delete(compile);
    return compiled;
  };
  pending.add(compile);
  const validate: Validator = (data: unknown) => {
    const fn = compiled ?? compile();
    const ok = fn(data);
    validate.errors = fn.errors;
    return ok;
  };
  return validate;
}

type Serializer = (data: unknown) => string;
const serializers = new WeakMap<object, Map<string, Serializer>>();

/**
 * Fastify's `schemaController.compilersFactory.buildSerializer`: like Fastify's own (the
 * shared schemas given to fast-json-stringify for `$ref`s), compiled on the first response.
 */
export function lazySerializerFactory(externalSchemas: unknown, serializerOpts: unknown) {
  const shared = (externalSchemas ?? {}) as Record<string, unknown>;
  const options = (serializerOpts ?? {}) as Record<string, unknown>;
  // The shared schemas are the same module-level objects in every app; their ids tell them apart.
  const sharedKey = Object.keys(shared).sort().join(',');
  return ({ schema: routeSchema }: { schema?: unknown }): Serializer => {
    const schema = routeSchema as object;
    let compiled: Serializer | undefined;
    const compile = () => {
      if (!compiled) {
        let bySchema = serializers.get(schema);
        if (!bySchema) serializers.set(schema, (bySchema = new Map()));
        compiled = bySchema.get(sharedKey);
        if (!compiled) {
          compiled = fastJsonStringify(schema, { ...options, schema: shared as never }) as Serializer;
          bySchema.set(sharedKey, compiled);
          compiledCount += 1;
        }
      }
      pending.delete(compile);
      return compiled;
    };
    pending.add(compile);
    return (data: unknown) => (compiled ?? compile())(data);
  };
}

/** Compile every validator and serializer not compiled yet (throws on the first that cannot be). */
export function compilePending(): number {
  let n = 0;
  for (const compile of [...pending]) {
    compile();
    n += 1;
  }
  return n;
}

/**
 * Compile what is pending a few at a time between requests (the server calls it once it
 * listens): the first request of each route then finds its functions ready, and a schema that
 * cannot be compiled is reported at start, not on the route's first call.
 */
export function warmPending(onError: (err: unknown) => void, onDone?: (compiled: number) => void, slice = 8): void {
  const queue = [...pending];
  let done = 0;
  const step = () => {
    try {
      for (const compile of queue.splice(0, slice)) {
        compile();
        done += 1;
      }
    } catch (err) {
      onError(err);
      return;
    }
    if (queue.length > 0) setImmediate(step);
    else onDone?.(done);
  };
  setImmediate(step);
}
