// One way to load, one way to paginate: useLoad runs an API call when its inputs change;
// Pager moves through `meta`/`pagination`; list state (page, filters) lives in the URL's
// query, so back/forward and links keep it.
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { failureOf, type Failure } from '../api/client';
import { useI18n, useT } from '../i18n';

type ApiResult<T> = { data?: T; error?: unknown; response: Response };

export interface Loaded<T> {
  data: T | undefined;
  failure: Failure | undefined;
  loading: boolean;
  reload(): void;
}

export function useLoad<T>(call: () => Promise<ApiResult<T>>, deps: unknown[]): Loaded<T> {
  const t = useT();
  const { locale } = useI18n();
  const [state, setState] = useState<{ data?: T; failure?: Failure; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const n = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    call().then(
      (r) => {
        if (n !== latest.current) return;
        if (r.error !== undefined || !r.response.ok) setState({ failure: failureOf(r.response, r.error, t('error.request_failed')), loading: false });
        else setState({ data: r.data, loading: false });
      },
      () => n === latest.current && setState({ failure: { status: 0, code: undefined, message: t('error.network'), fields: {} }, loading: false }),
    );
    // The API's messages are in the path's locale: a locale switch reloads.
  }, [...deps, tick, locale]);
  const reload = useCallback(() => setTick((x) => x + 1), []);
  return { data: state.data, failure: state.failure, loading: state.loading, reload };
}

/** The page's query string as state; setting replaces the URL (page resets unless given). */
export function useQuery(): [Record<string, string>, (patch: Record<string, string | undefined>) => void] {
  const loc = useLocation();
  const set = (patch: Record<string, string | undefined>) => {
    const next = new URLSearchParams(loc.query);
    if (!('page' in patch)) next.delete('page');
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined || v === '') next.delete(k);
      else next.set(k, v);
    }
    const qs = next.toString();
    loc.route(`${loc.path}${qs ? `?${qs}` : ''}`, true);
  };
  return [loc.query, set];
}

export interface PageMeta {
  current_page: number;
  last_page: number;
  total: number;
  per_page?: number;
}

export function Pager({ meta, onPage, label }: { meta: PageMeta | undefined; onPage: (page: number) => void; label: string }) {
  const t = useT();
  if (!meta) return null;
  const { current_page: page, last_page: last } = meta;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="button button--secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        {t('list.previous')}
      </button>
      <span aria-live="polite">{t('list.page_of', { page, last: Math.max(last, 1), total: meta.total })}</span>
      <button type="button" class="button button--secondary" disabled={page >= last} onClick={() => onPage(page + 1)}>
        {t('list.next')}
      </button>
    </nav>
  );
}

export function LoadError({ failure }: { failure: Failure | undefined }) {
  const t = useT();
  if (!failure) return null;
  return (
    <div class="notice notice--error" role="alert">
      <strong>{t('form.problem')}</strong> {failure.message}
    </div>
  );
}

export function Table(props: { caption: string; head: ComponentChildren[]; rows: ComponentChildren[][]; empty: string; loading?: boolean }) {
  const t = useT();
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={props.caption}>
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {props.head.map((h, i) => (
              <th key={i} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.length === 0 ? (
            <tr>
              <td colSpan={props.head.length}>{props.loading ? t('list.loading') : props.empty}</td>
            </tr>
          ) : (
            props.rows.map((cells, i) => (
              <tr key={i}>
                {cells.map((c, j) => (
                  <td key={j}>{c}</td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

export function Status({ value, label }: { value: string; label: string }) {
  return <span class={`status status--${value}`}>{label}</span>;
}

/** A record's fields as a definition list; an empty value shows as "—". */
export function Facts({ items }: { items: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="facts">
      {items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value === null || value === undefined || value === '' ? '—' : value}</dd>
        </div>
      ))}
    </dl>
  );
}
