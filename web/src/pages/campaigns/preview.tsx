// The Preview panel (DESIGN.md §12 "Preview"): a basket built from the catalogue (or a plain
// amount) at a shop, for a programme or one card, sent to POST shop/transactions/preview with
// the partner's JWT. It shows what the till would show before tender — the points, the
// breakdown by source and campaign with the lines each row sits on, and the campaigns that
// did not apply with their reason. Nothing is written.
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { paths } from '../../api/loyalty-api';
import { Table } from '../../components/data';
import { Field, Form, Select, Submit, optNumber, text, useForm } from '../../components/form';
import { formatNumber, useI18n } from '../../i18n';
import { ProductSearch, type Picked } from './product-picker';

type PreviewBody = paths['/{locale}/shop/transactions/preview']['post']['requestBody']['content']['application/json'];
type PreviewResult = Omit<paths['/{locale}/shop/transactions/preview']['post']['responses'][200]['content']['application/json']['data'], 'tier'>;
type Card = { id: number; title: Record<string, string> & { en: string } };
type Shop = { id: number; name: string };

interface Line {
  key: number;
  product_id: number;
  name: string;
  quantity: string;
  amount: string;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export function Preview({ cards, shops }: { cards: Card[]; shops: Shop[] }) {
  const { t, locale } = useI18n();
  const form = useForm();
  const [lines, setLines] = useState<Line[]>([]);
  const [nextKey, setNextKey] = useState(1);
  const [result, setResult] = useState<{ data: PreviewResult; names: Map<string, string> }>();

  const add = (p: Picked) => {
    setLines([...lines, { key: nextKey, product_id: p.id, name: p.name, quantity: '1', amount: p.price === null ? '' : String(round2(p.price)) }]);
    setNextKey(nextKey + 1);
  };
  const update = (key: number, patch: Partial<Line>) => setLines(lines.map((l) => (l.key === key ? { ...l, ...patch } : l)));

  const run = async (fd: FormData) => {
    const card = optNumber(fd, 'card_id');
    const body: PreviewBody = {
      shop_id: optNumber(fd, 'shop_id') as number,
      ...(card !== undefined ? { card_id: card } : { partner_card_id: optNumber(fd, 'partner_card_id') as number }),
      ...(lines.length > 0
        ? {
            items: lines.map((l, i) => ({
              line_id: String(i + 1),
              product_id: l.product_id,
              name: l.name,
              quantity: text(fd, `items.${i}.quantity`).replace(',', '.'),
              amount: text(fd, `items.${i}.amount`).replace(',', '.'),
            })),
          }
        : { amount: text(fd, 'amount').replace(',', '.') }),
    };
    const r = await form.run(() => api.POST('/{locale}/shop/transactions/preview', { body }));
    setResult(r ? { data: r.data, names: new Map(lines.map((l, i) => [String(i + 1), l.name])) } : undefined);
  };

  const lineText = (ids: string[], names: Map<string, string>) => (ids.length === 0 ? '—' : ids.map((id) => (names.has(id) ? `${id} (${names.get(id)})` : id)).join(', '));
  const data = result?.data;
  return (
    <section class="panel" aria-labelledby="campaign-preview">
      <h2 id="campaign-preview">{t('preview.title')}</h2>
      <p class="hint">{t('preview.lead')}</p>
      <Form form={form} onSubmit={run} label={t('preview.title')}>
        <div class="grid">
          <Select name="partner_card_id" label={t('preview.programme')} options={cards.map((c) => ({ value: String(c.id), label: c.title[locale] || c.title.en }))} />
          <Select name="shop_id" label={t('preview.shop')} options={shops.map((s) => ({ value: String(s.id), label: s.name }))} />
          <Field name="card_id" label={t('preview.card_id')} hint={t('preview.card_id_hint')} inputMode="numeric" />
          {lines.length === 0 && <Field name="amount" label={t('preview.amount')} hint={t('preview.amount_hint')} inputMode="decimal" />}
        </div>
        <h3>{t('preview.basket')}</h3>
        {lines.length === 0 ? (
          <p>{t('preview.basket_empty')}</p>
        ) : (
          <ol class="plain basket">
            {lines.map((l, i) => (
              <li key={l.key}>
                <fieldset class="field-group">
                  <legend>{t('preview.line', { n: i + 1, name: l.name })}</legend>
                  <div class="grid">
                    <Field name={`items.${i}.quantity`} label={t('preview.quantity_of', { name: l.name })} inputMode="decimal" value={l.quantity} onInput={(e) => update(l.key, { quantity: e.currentTarget.value })} />
                    <Field name={`items.${i}.amount`} label={t('preview.amount_of', { name: l.name })} hint={t('preview.line_amount_hint')} inputMode="decimal" value={l.amount} onInput={(e) => update(l.key, { amount: e.currentTarget.value })} />
                  </div>
                  <button type="button" class="button button--secondary button--small" onClick={() => setLines(lines.filter((x) => x.key !== l.key))}>
                    {t('preview.remove_line', { name: l.name })}
                  </button>
                </fieldset>
              </li>
            ))}
          </ol>
        )}
        <ProductSearch label={t('preview.find_product')} addLabel={(n) => t('preview.add_line', { name: n })} onPick={add} />
        <div class="actions">
          <Submit form={form}>{t('preview.run')}</Submit>
        </div>
      </Form>
      {data && (
        <div class="preview-result" role="region" aria-label={t('preview.result')}>
          <h3>{t('preview.result')}</h3>
          <dl class="facts">
            <div>
              <dt>{t('preview.points')}</dt>
              <dd>{formatNumber(locale, data.points)}</dd>
            </div>
            <div>
              <dt>{t('preview.balance_after')}</dt>
              <dd>{formatNumber(locale, data.balance_after)}</dd>
            </div>
          </dl>
          <Table
            caption={t('preview.breakdown')}
            empty={t('preview.no_breakdown')}
            head={[t('breakdown.source'), t('breakdown.campaign'), t('breakdown.points'), t('breakdown.lines')]}
            rows={data.breakdown.map((b) => [t(`breakdown.source_${b.source}`), b.name ?? '—', formatNumber(locale, b.points), lineText(b.line_ids, result.names)])}
          />
          <Table
            caption={t('preview.skipped')}
            empty={t('preview.none_skipped')}
            head={[t('breakdown.campaign'), t('preview.reason')]}
            rows={data.campaigns_skipped.map((s) => [s.name, t(`preview.reason_${s.reason}`)])}
          />
        </div>
      )}
    </section>
  );
}
