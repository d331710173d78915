// The one way the console talks to the API: openapi-fetch over the generated types
// (loyalty-api.d.ts), with the session's bearer token, the chosen locale filled into every
// `/{locale}/` path, and errors turned into one shape the forms show (Failure).
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './loyalty-api';
import { currentLocale } from '../i18n';
import { session } from './session';

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';
type PathWithoutLocale<P> = keyof Omit<P, 'locale'> extends never ? { path?: never } : { path: Omit<P, 'locale'> };
type WithoutLocale<Op> = Op extends { parameters: { path: infer P } }
  ? Omit<Op, 'parameters'> & { parameters: Omit<Op['parameters'], 'path'> & PathWithoutLocale<P> }
  : Op;
/** The API's paths as the console calls them: the locale comes from the locale switch. */
export type ConsolePaths = {
  [K in keyof paths]: { [M in keyof paths[K]]: M extends HttpMethod ? WithoutLocale<paths[K][M]> : paths[K][M] };
};

const raw = createClient<paths>({ baseUrl: '' });
raw.use({
  onRequest({ request }) {
    const token = session.current()?.token;
    if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ request, response }) {
    // An expired or revoked token (or a suspended account): back to sign-in.
    if (response.status === 401 && request.headers.has('authorization')) session.expire();
    return response;
  },
});

type Init = { params?: { path?: Record<string, unknown>; query?: Record<string, unknown> } } & Record<string, unknown>;
const withLocale = (init: Init = {}) => ({ ...init, params: { ...init.params, path: { ...init.params?.path, locale: currentLocale() } } });

type Api = Pick<Client<ConsolePaths>, 'GET' | 'POST' | 'PUT' | 'DELETE'>;
const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE') => (path: string, init?: Init) =>
  (raw[method] as (p: string, i: unknown) => Promise<unknown>)(path, withLocale(init));

export const api = { GET: call('GET'), POST: call('POST'), PUT: call('PUT'), DELETE: call('DELETE') } as unknown as Api;

/** What a form shows when a request fails: the API's message and its field errors (Shape A or B). */
export interface Failure {
  status: number;
  code: string | number | undefined;
  message: string;
  fields: Record<string, string[]>;
}

type ErrorBody = {
  code?: string | number;
  message?: string;
  errors?: Record<string, string[]> | Array<{ field: string; message: string; code: string }>;
};

export function failureOf(response: Response | undefined, error: unknown, fallback: string): Failure {
  const body = (error ?? {}) as ErrorBody;
  const fields: Record<string, string[]> = {};
  if (Array.isArray(body.errors)) {
    for (const item of body.errors) (fields[item.field] ??= []).push(item.message);
  } else if (body.errors && typeof body.errors === 'object') {
    for (const [field, messages] of Object.entries(body.errors)) fields[field] = [...messages];
  }
  return { status: response?.status ?? 0, code: body.code, message: body.message ?? fallback, fields };
}

/** A file from an authenticated GET (CSV export, attachment), saved through a blob link. */
export async function download(url: string, filename: string): Promise<Failure | undefined> {
  const token = session.current()?.token;
  const response = await fetch(url.replace('/{locale}/', `/${currentLocale()}/`), {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (!response.ok) {
    if (response.status === 401) session.expire();
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    return failureOf(response, body, response.statusText);
  }
  const blob = await response.blob();
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
  return undefined;
}
