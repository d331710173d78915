// Imports (DESIGN.md §9, §11): a product feed uploaded as a file or fetched from a URL (once,
// or kept as a feed re-imported every N minutes), live progress from the `import.progress`
// events on the partner's private channel (polling the import while the channel is not
// subscribed), the history (each finished import links to its products on the Products page;
// `?import=N` opens one import with its problems), and the feed subscriptions.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api/client';
import { listenPartner } from '../../api/realtime';
import { Confirm } from '../../components/confirm';
import { Page } from '../../components/console';
import { LoadError, Pager, Status, Table, useLoad, useQuery } from '../../components/data';
import { Checkbox, Field, Form, Select, Submit, bool, optNumber, text, useForm } from '../../components/form';
import { formatDateTime, formatNumber, useI18n } from '../../i18n';

type ImportStatus = 'queued' | 'running' | 'completed' | 'failed' | 'unchanged';
type ImportProblem = { line: number | null; column: number | null; item: number | null; message: string };

/** A problem with where it is: item, line and column when the import knows them. */
function problemText(t: ReturnType<typeof useI18n>['t'], e: ImportProblem): string {
  if (e.line === null) return e.message;
  if (e.item !== null && e.column !== null) return t('imports.error_at', { item: e.item, line: e.line, column: e.column, message: e.message });
  if (e.column !== null) return t('imports.error_line_column', { line: e.line, column: e.column, message: e.message });
  return t('imports.error_line', { line: e.line, message: e.message });
}

/** Imports that may have written products: the Products page lists them by import. */
const wroteProducts = (status: ImportStatus) => status === 'completed' || status === 'failed';
interface Progress {
  import_id: number;
  status: ImportStatus;
  items_seen: number;
}
const FINISHED = new Set<ImportStatus>(['completed', 'failed', 'unchanged']);
export const IMPORT_POLL_MS = 3000;

function isProgress(v: unknown): v is Progress {
  const p = v as Progress | null;
  return typeof p === 'object' && p !== null && typeof p.import_id === 'number' && typeof p.status === 'string' && typeof p.items_seen === 'number';
}

export default function Imports() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const history = useLoad(() => api.GET('/{locale}/shop/xml-import/history', { params: { query: { page, per_page: 20 } } }), [page]);
  const feeds = useLoad(() => api.GET('/{locale}/shop/xml-import/feeds', { params: { query: { per_page: 100 } } }), []);
  const shownId = query.import ? Number(query.import) : undefined;
  const shown = useLoad(
    () =>
      shownId !== undefined && Number.isInteger(shownId) && shownId > 0
        ? api.GET('/{locale}/shop/xml-import/{import_id}', { params: { path: { import_id: shownId } } })
        : Promise.resolve({ data: undefined, response: new Response(null, { status: 200 }) }),
    [shownId],
  );
  const fileForm = useForm();
  const urlForm = useForm();
  const rowForm = useForm();
  const [progress, setProgress] = useState<Map<number, Progress>>(new Map());
  const [live, setLive] = useState(false);
  const [stopping, setStopping] = useState<{ id: number; url: string }>();
  const [fileKey, setFileKey] = useState(0);
  const [urlKey, setUrlKey] = useState(0);
  const reloadHistory = useRef(history.reload);
  reloadHistory.current = history.reload;

  const track = (p: Progress) => {
    // An answer that crossed a later event never takes a finished import back.
    setProgress((m) => {
      const known = m.get(p.import_id);
      return known && FINISHED.has(known.status) ? m : new Map(m).set(p.import_id, p);
    });
    if (FINISHED.has(p.status)) reloadHistory.current();
  };

  useEffect(() => {
    const channel = listenPartner(
      (event, data) => {
        if (event === 'import.progress' && isProgress(data)) track(data);
      },
      setLive,
    );
    return () => channel.close();
  }, []);

  // Without the channel (blocked WebSocket, a proxy), the imports on screen are re-read; once
  // it is subscribed they are read once more, for events sent before it was.
  const active = [...progress.values()].filter((p) => !FINISHED.has(p.status));
  const activeIds = active.map((p) => p.import_id).join();
  useEffect(() => {
    if (active.length === 0) return;
    const refresh = () => {
      for (const p of active) {
        void api.GET('/{locale}/shop/xml-import/{import_id}', { params: { path: { import_id: p.import_id } } }).then((r) => {
          if (r.data) track({ import_id: r.data.data.id, status: r.data.data.status, items_seen: r.data.data.items_seen });
        });
      }
    };
    if (live) {
      refresh();
      return;
    }
    const timer = setInterval(refresh, IMPORT_POLL_MS);
    return () => clearInterval(timer);
  }, [live, activeIds]);

  const queued = (id: number) => {
    setProgress((m) => (m.has(id) ? m : new Map(m).set(id, { import_id: id, status: 'queued', items_seen: 0 })));
    history.reload();
  };

  const upload = async (fd: FormData) => {
    const file = fd.get('file');
    if (!(file instanceof File) || file.size === 0) {
      fileForm.fail({ status: 0, code: undefined, message: t('imports.file_missing'), fields: { file: [t('imports.file_missing')] } });
      return;
    }
    const body = new FormData();
    body.set('mode', text(fd, 'mode'));
    if (bool(fd, 'allow_mass_deactivation')) body.set('allow_mass_deactivation', 'true');
    body.set('file', file, file.name);
    const r = await fileForm.run(() =>
      api.POST('/{locale}/shop/xml-import/from-file', { body: body as never, bodySerializer: (b: unknown) => b as FormData }),
    );
    if (r) {
      queued(r.data.import_id);
      setFileKey((k) => k + 1);
    }
  };

  const fromUrl = async (fd: FormData) => {
    const every = optNumber(fd, 'every_minutes');
    const r = await urlForm.run(() =>
      api.POST('/{locale}/shop/xml-import/from-url', {
        body: {
          url: text(fd, 'url'),
          mode: text(fd, 'mode') as 'upsert' | 'replace',
          ...(every !== undefined ? { every_minutes: every } : {}),
          ...(bool(fd, 'allow_mass_deactivation') ? { allow_mass_deactivation: true } : {}),
        },
      }),
    );
    if (r) {
      queued(r.data.import_id);
      if (every !== undefined) feeds.reload();
      setUrlKey((k) => k + 1);
    }
  };

  const stopFeed = async () => {
    const feed = stopping;
    setStopping(undefined);
    if (!feed) return;
    const r = await rowForm.run(() => api.DELETE('/{locale}/shop/xml-import/feeds/{id}', { params: { path: { id: feed.id } } }));
    if (r) feeds.reload();
  };

  const modes = [
    { value: 'upsert', label: t('imports.mode_upsert') },
    { value: 'replace', label: t('imports.mode_replace') },
  ];
  const tracked = [...progress.values()].sort((a, b) => b.import_id - a.import_id);
  return (
    <Page title={t('nav.imports')}>
      <p class="lead">{t('imports.intro')}</p>
      <div class="grid grid--two">
        <section class="panel" aria-labelledby="import-file">
          <h2 id="import-file">{t('imports.upload')}</h2>
          <Form form={fileForm} onSubmit={upload} label={t('imports.upload')} key={fileKey}>
            <Field name="file" label={t('imports.file')} hint={t('imports.file_hint')} type="file" accept=".xml,.gz,application/xml,text/xml,application/gzip" />
            <Select name="mode" label={t('imports.mode')} hint={t('imports.mode_hint')} options={modes} />
            <Checkbox name="allow_mass_deactivation" label={t('imports.allow_mass_deactivation')} />
            <Submit form={fileForm}>{t('imports.upload_submit')}</Submit>
          </Form>
        </section>
        <section class="panel" aria-labelledby="import-url">
          <h2 id="import-url">{t('imports.from_url')}</h2>
          <Form form={urlForm} onSubmit={fromUrl} label={t('imports.from_url')} key={urlKey}>
            <Field name="url" label={t('imports.url')} type="url" inputMode="url" placeholder="https://" />
            <Select name="mode" label={t('imports.mode')} hint={t('imports.mode_hint')} options={modes} />
            <Field name="every_minutes" label={t('imports.every_minutes')} hint={t('imports.every_minutes_hint')} inputMode="numeric" />
            <Checkbox name="allow_mass_deactivation" label={t('imports.allow_mass_deactivation')} />
            <Submit form={urlForm}>{t('imports.from_url_submit')}</Submit>
          </Form>
        </section>
      </div>
      {tracked.length > 0 && (
        <section class="panel" aria-labelledby="import-progress">
          <h2 id="import-progress">{t('imports.progress')}</h2>
          <p class="hint">{live ? t('imports.live') : t('imports.polling')}</p>
          <ul class="progress-list" aria-live="polite">
            {tracked.map((p) => (
              <li key={p.import_id}>
                {t('imports.import_n', { id: p.import_id })}: <Status value={p.status} label={t(`imports.status_${p.status}`)} />{' '}
                {t('imports.items_seen', { n: formatNumber(locale, p.items_seen) })}
              </li>
            ))}
          </ul>
        </section>
      )}
      {shownId !== undefined && <LoadError failure={shown.failure} />}
      {shownId !== undefined && shown.data?.data && (
        <section class="panel" aria-labelledby="import-detail">
          <h2 id="import-detail">{t('imports.detail', { id: shown.data.data.id })}</h2>
          <p>
            <Status value={shown.data.data.status} label={t(`imports.status_${shown.data.data.status}`)} />{' '}
            {t('imports.count_line', {
              seen: formatNumber(locale, shown.data.data.items_seen),
              created: formatNumber(locale, shown.data.data.created),
              updated: formatNumber(locale, shown.data.data.updated),
              skipped: formatNumber(locale, shown.data.data.skipped),
            })}{' '}
            {formatDateTime(locale, shown.data.data.finished_at)}
          </p>
          {wroteProducts(shown.data.data.status) && (
            <p>
              <a href={`/dashboard/products?import_id=${shown.data.data.id}`}>{t('imports.products_link', { id: shown.data.data.id })}</a>
            </p>
          )}
          {shown.data.data.errors.length === 0 ? (
            <p>{t('imports.no_errors')}</p>
          ) : (
            <ul aria-label={t('imports.errors')}>
              {shown.data.data.errors.map((e, i) => (
                <li key={i}>{problemText(t, e)}</li>
              ))}
            </ul>
          )}
          <button type="button" class="button button--secondary button--small" onClick={() => setQuery({ import: undefined })}>
            {t('imports.close_detail')}
          </button>
        </section>
      )}
      <LoadError failure={history.failure ?? rowForm.failure} />
      <Table
        caption={t('imports.history')}
        loading={history.loading}
        empty={t('imports.none')}
        head={[t('common.id'), t('imports.source'), t('imports.mode'), t('common.status'), t('imports.finished'), t('imports.counts'), t('imports.errors'), t('imports.products')]}
        rows={(history.data?.data ?? []).map((r) => [
          r.id,
          <span class="clip">{r.source === 'file' ? (r.filename ?? t('imports.file')) : r.url}</span>,
          t(`imports.mode_${r.mode}`),
          <Status value={r.status} label={t(`imports.status_${r.status}`)} />,
          formatDateTime(locale, r.finished_at),
          t('imports.count_line', {
            seen: formatNumber(locale, r.items_seen),
            created: formatNumber(locale, r.created),
            updated: formatNumber(locale, r.updated),
            skipped: formatNumber(locale, r.skipped),
          }) + (r.mode === 'replace' ? t('imports.count_deactivated', { deactivated: formatNumber(locale, r.deactivated) }) : ''),
          r.errors_count === 0 ? (
            '0'
          ) : (
            <details>
              <summary>{formatNumber(locale, r.errors_count)}</summary>
              <ul>
                {r.errors.map((e, i) => (
                  <li key={i}>{problemText(t, e)}</li>
                ))}
              </ul>
            </details>
          ),
          wroteProducts(r.status) ? <a href={`/dashboard/products?import_id=${r.id}`}>{t('imports.products_link', { id: r.id })}</a> : '—',
        ])}
      />
      <Pager meta={history.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('imports.history')} />
      <LoadError failure={feeds.failure} />
      <Table
        caption={t('imports.feeds')}
        loading={feeds.loading}
        empty={t('imports.no_feeds')}
        head={[t('imports.url'), t('imports.every_minutes'), t('imports.next_run'), t('common.actions')]}
        rows={(feeds.data?.data ?? []).map((f) => [
          <span class="clip" id={`feed-${f.id}`}>
            {f.url}
          </span>,
          formatNumber(locale, f.every_minutes),
          formatDateTime(locale, f.next_run_at),
          <button type="button" class="button button--danger button--small" aria-describedby={`feed-${f.id}`} onClick={() => setStopping({ id: f.id, url: f.url })}>
            {t('imports.stop')}
          </button>,
        ])}
      />
      <Confirm open={stopping !== undefined} title={t('imports.stop_title')} confirm={t('imports.stop')} onConfirm={stopFeed} onClose={() => setStopping(undefined)}>
        <p>{t('imports.stop_text', { url: stopping?.url ?? '' })}</p>
      </Confirm>
    </Page>
  );
}
