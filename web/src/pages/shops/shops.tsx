// Shops (DESIGN.md §2): the partner's locations, created and edited here, listed paginated.
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Confirm } from '../../components/confirm';
import { Page } from '../../components/console';
import { LoadError, Pager, Table, useLoad, useQuery } from '../../components/data';
import { Field, Form, Submit, changedFields, nullNumber, nullText, text, useForm } from '../../components/form';
import { formatDateTime, useI18n } from '../../i18n';

interface Shop {
  id: number;
  name: string;
  address: string | null;
  city: string | null;
  lat: number | null;
  lng: number | null;
}

export default function Shops() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const list = useLoad(() => api.GET('/{locale}/partners/shops', { params: { query: { page, per_page: 20 } } }), [page]);
  const form = useForm();
  const deleteForm = useForm();
  const [editing, setEditing] = useState<Shop>();
  const [deleting, setDeleting] = useState<Shop>();
  const [saved, setSaved] = useState<string>();

  const save = async (fd: FormData, el: HTMLFormElement) => {
    const body = {
      name: text(fd, 'name'),
      address: nullText(fd, 'address'),
      city: nullText(fd, 'city'),
      lat: nullNumber(fd, 'lat'),
      lng: nullNumber(fd, 'lng'),
    };
    const r = editing
      ? await form.run(() => api.PUT('/{locale}/partners/shops/{id}', { params: { path: { id: editing.id } }, body: changedFields(body, editing) }))
      : await form.run(() => api.POST('/{locale}/partners/shops', { body }));
    if (r) {
      setSaved(t(editing ? 'shops.updated' : 'shops.created', { name: r.data.name }));
      setEditing(undefined);
      el.reset();
      list.reload();
    }
  };
  const remove = async () => {
    const shop = deleting;
    setDeleting(undefined);
    if (!shop) return;
    const r = await deleteForm.run(() => api.DELETE('/{locale}/partners/shops/{id}', { params: { path: { id: shop.id } } }));
    if (r) {
      setSaved(t('shops.deleted', { name: shop.name }));
      list.reload();
    }
  };

  return (
    <Page title={t('nav.shops')}>
      {saved && (
        <div class="notice notice--success" role="status">
          {saved}
        </div>
      )}
      <section class="panel" aria-labelledby="shop-form">
        <h2 id="shop-form">{editing ? t('shops.edit', { name: editing.name }) : t('shops.create')}</h2>
        <Form form={form} onSubmit={save} label={editing ? t('shops.edit', { name: editing.name }) : t('shops.create')} key={editing?.id ?? 'new'}>
          <div class="grid">
            <Field name="name" label={t('shops.name')} defaultValue={editing?.name} maxLength={255} />
            <Field name="address" label={t('shops.address')} defaultValue={editing?.address ?? ''} />
            <Field name="city" label={t('shops.city')} defaultValue={editing?.city ?? ''} />
            <Field name="lat" label={t('shops.lat')} hint={t('shops.lat_hint')} inputMode="decimal" defaultValue={editing?.lat?.toString() ?? ''} />
            <Field name="lng" label={t('shops.lng')} hint={t('shops.lng_hint')} inputMode="decimal" defaultValue={editing?.lng?.toString() ?? ''} />
          </div>
          <div class="actions">
            <Submit form={form}>{editing ? t('common.save') : t('shops.create')}</Submit>
            {editing && (
              <button type="button" class="button button--secondary" onClick={() => setEditing(undefined)}>
                {t('common.cancel')}
              </button>
            )}
          </div>
        </Form>
      </section>
      <LoadError failure={list.failure ?? deleteForm.failure} />
      <Table
        caption={t('shops.list')}
        loading={list.loading}
        empty={t('shops.none')}
        head={[t('common.id'), t('shops.name'), t('shops.address'), t('shops.city'), t('common.created'), t('common.actions')]}
        rows={(list.data?.data ?? []).map((s) => [
          s.id,
          <span id={`shop-${s.id}`}>{s.name}</span>,
          s.address ?? '—',
          s.city ?? '—',
          formatDateTime(locale, s.created_at),
          <span class="row-actions">
            <button type="button" class="button button--secondary button--small" aria-describedby={`shop-${s.id}`} onClick={() => setEditing(s)}>
              {t('common.edit')}
            </button>
            <button type="button" class="button button--danger button--small" aria-describedby={`shop-${s.id}`} onClick={() => setDeleting(s)}>
              {t('common.delete')}
            </button>
          </span>,
        ])}
      />
      <Pager meta={list.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('shops.list')} />
      <Confirm open={deleting !== undefined} title={t('shops.delete_title', { name: deleting?.name ?? '' })} confirm={t('common.delete')} onConfirm={remove} onClose={() => setDeleting(undefined)}>
        <p>{t('shops.delete_text')}</p>
      </Confirm>
    </Page>
  );
}
