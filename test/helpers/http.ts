// A small fetch wrapper: what a client sees — status, headers, parsed JSON body.
export interface Response<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** JSON-encoded and sent with Content-Type: application/json. */
  json?: unknown;
  /** Sent as is (set the content type yourself). */
  raw?: string | Buffer;
}

export async function request<T = any>(base: string, method: string, path: string, opts: RequestOptions = {}): Promise<Response<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | Buffer | undefined;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  } else if (opts.raw !== undefined) {
    body = opts.raw;
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** Headers for API-credential calls. */
export const apiHeaders = (key: { key: string; secret: string }) => ({ 'x-api-key': key.key, 'x-api-secret': key.secret });

/** Headers for bearer-token calls. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
