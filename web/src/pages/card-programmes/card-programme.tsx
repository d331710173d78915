// One card programme: edit every setting (the tier settings among them), manage its tiers, or
// delete it.
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api } from '../../api/client';
import { Confirm } from '../../components/confirm';
import { Page } from '../../components/console';
import { LoadError, useLoad } from '../../components/data';
import { useForm } from '../../components/form';
import { useI18n } from '../../i18n';
import { CardForm, editedCardBody } from './card-form';
import { Tiers } from './tiers';

export default function CardProgramme() {
  const { t, locale } = useI18n();
  const { params } = useRoute();
  const { route } = useLocation();
  const id = Number(params.id);
  const card = useLoad(() => api.GET('/{locale}/partners/cards/{id}', { params: { path: { id } } }), [id]);
  const form = useForm();
  const deleteForm = useForm();
  const [saved, setSaved] = useState(false);
  const [deleting, setDeleting] = useState(false);

  const save = async (fd: FormData) => {
    const loaded = card.data?.data;
    if (!loaded) return;
    const body = editedCardBody(fd, loaded);
    const r = await form.run(() => api.PUT('/{locale}/partners/cards/{id}', { params: { path: { id } }, body }));
    if (r) {
      setSaved(true);
      card.reload();
    }
  };
  const remove = async () => {
    setDeleting(false);
    const r = await deleteForm.run(() => api.DELETE('/{locale}/partners/cards/{id}', { params: { path: { id } } }));
    if (r) route('/dashboard/card-programmes');
  };
  const data = card.data?.data;
  return (
    <Page
      title={data ? data.title[locale] || data.title.en : t('nav.card_programmes')}
      actions={
        data && (
          <button type="button" class="button button--danger" onClick={() => setDeleting(true)}>
            {t('common.delete')}
          </button>
        )
      }
    >
      <p>
        <a href="/dashboard/card-programmes">{t('cards.back')}</a>
      </p>
      <LoadError failure={card.failure ?? deleteForm.failure} />
      {saved && (
        <div class="notice notice--success" role="status">
          {t('common.saved')}
        </div>
      )}
      {data && <CardForm key={data.updated_at} form={form} card={data} onSubmit={save} submit={t('common.save')} />}
      {data && <Tiers programme={id} />}
      <Confirm open={deleting} title={t('cards.delete_title')} confirm={t('common.delete')} onConfirm={remove} onClose={() => setDeleting(false)}>
        <p>{t('cards.delete_text')}</p>
      </Confirm>
    </Page>
  );
}
