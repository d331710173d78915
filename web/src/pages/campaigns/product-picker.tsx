// Products picked from the partner's catalogue (GET shop/products, the partner's JWT): a search
// box with its results, each with an Add button. ProductPicker keeps the picked ones as
// hidden inputs of the campaign form (conditions.product_ids), with the API's errors on them;
// the Preview panel uses ProductSearch alone to add basket lines.
import { useEffect, useId, useState } from 'preact/hooks';
import { api } from '../../api/client';
import { LoadError } from '../../components/data';
import type { FormState } from '../../components/form';
import { formatEur, useI18n } from '../../i18n';
import type { Failure } from '../../api/client';
import { failureOf } from '../../api/client';

export interface Picked {
  id: number;
  name: string;
  sku: string | null;
  price: number | null;
}

export function ProductSearch({ label, addLabel, onPick }: { label: string; addLabel: (name: string) => string; onPick: (p: Picked) => void }) {
  const { t, locale } = useI18n();
  const id = `ps-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const [q, setQ] = useState('');
  const [results, setResults] = useState<Picked[]>();
  const [failure, setFailure] = useState<Failure>();
  const [busy, setBusy] = useState(false);
  const search = async () => {
    setBusy(true);
    try {
      const r = await api.GET('/{locale}/shop/products', { params: { query: { per_page: 10, is_active: true, ...(q.trim() ? { q: q.trim() } : {}) } } });
      if (r.error !== undefined || !r.data) {
        setFailure(failureOf(r.response, r.error, t('error.request_failed')));
        return;
      }
      setFailure(undefined);
      setResults(r.data.data.map((p) => ({ id: p.id, name: p.name, sku: p.sku, price: p.discounted_price ?? p.price })));
    } catch {
      setFailure({ status: 0, code: undefined, message: t('error.network'), fields: {} });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="product-search">
      <div class="field">
        <label for={id}>{label}</label>
        <p class="hint" id={`${id}-hint`}>
          {t('campaigns.product_search_hint')}
        </p>
        <div class="filters">
          <input
            id={id}
            type="search"
            value={q}
            aria-describedby={`${id}-hint`}
            onInput={(e) => setQ(e.currentTarget.value)}
            onKeyDown={(e) => {
              // Enter searches here; it must not submit the form around the box.
              if (e.key === 'Enter') {
                e.preventDefault();
                void search();
              }
            }}
          />
          <button type="button" class="button button--secondary" onClick={search} disabled={busy}>
            {t('campaigns.find_products')}
          </button>
        </div>
      </div>
      <LoadError failure={failure} />
      {results && (
        <div aria-live="polite">
          {results.length === 0 ? (
            <p>{t('campaigns.no_products')}</p>
          ) : (
            <ul class="plain" aria-label={t('campaigns.product_results')}>
              {results.map((p) => (
                <li key={p.id} class="picked-row">
                  <span>
                    {p.name}
                    {p.sku ? <span class="hint"> ({p.sku})</span> : null}
                    {p.price !== null ? <span class="hint"> {formatEur(locale, p.price)}</span> : null}
                  </span>{' '}
                  <button type="button" class="button button--secondary button--small" onClick={() => onPick(p)}>
                    {addLabel(p.name)}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}

export function ProductPicker({ form, name, picked, onChange }: { form: FormState; name: string; picked: Picked[]; onChange: (p: Picked[]) => void }) {
  const { t } = useI18n();
  const id = `pp-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  form.labels.set(name, { id, label: t('campaigns.products') });
  const errors = Object.entries(form.failure?.fields ?? {})
    .filter(([field]) => field === name || field.startsWith(`${name}.`))
    .flatMap(([, messages]) => messages);
  // A stored campaign names its products by id: read their names once.
  const unnamed = picked.filter((p) => p.name === `#${p.id}`).map((p) => p.id);
  useEffect(() => {
    if (unnamed.length === 0) return;
    let live = true;
    void Promise.all(unnamed.map((pid) => api.GET('/{locale}/shop/products/{id}', { params: { path: { id: pid } } }).catch(() => undefined))).then((rs) => {
      if (!live) return;
      const names = new Map(rs.flatMap((r) => (r?.data ? [[r.data.data.id, r.data.data] as const] : [])));
      onChange(picked.map((p) => {
        const found = names.get(p.id);
        return found ? { id: p.id, name: found.name, sku: found.sku, price: found.discounted_price ?? found.price } : p;
      }));
    });
    return () => {
      live = false;
    };
  }, [unnamed.join(',')]);
  return (
    <fieldset class={`field-group${errors.length > 0 ? ' field--error' : ''}`} aria-describedby={`${id}-hint${errors.length > 0 ? ` ${id}-error` : ''}`}>
      <legend id={id} tabIndex={-1}>
        {t('campaigns.products')}
      </legend>
      <p class="hint" id={`${id}-hint`}>
        {t('campaigns.products_hint')}
      </p>
      {errors.length > 0 && (
        <p class="field-error" id={`${id}-error`}>
          {errors.join(' ')}
        </p>
      )}
      {picked.length > 0 && (
        <ul class="plain" aria-label={t('campaigns.picked_products')}>
          {picked.map((p) => (
            <li key={p.id} class="picked-row">
              <input type="hidden" name={name} value={String(p.id)} />
              <span>
                {p.name}
                {p.sku ? <span class="hint"> ({p.sku})</span> : null}
              </span>{' '}
              <button type="button" class="button button--secondary button--small" onClick={() => onChange(picked.filter((x) => x.id !== p.id))}>
                {t('campaigns.remove_product', { name: p.name })}
              </button>
            </li>
          ))}
        </ul>
      )}
      <ProductSearch
        label={t('campaigns.find_product')}
        addLabel={(n) => t('campaigns.add_product', { name: n })}
        onPick={(p) => {
          if (!picked.some((x) => x.id === p.id)) onChange([...picked, p]);
        }}
      />
    </fieldset>
  );
}
