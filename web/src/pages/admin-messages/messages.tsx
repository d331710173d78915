// Messages with one partner, with attachments.
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { useLoad, useQuery } from '../../components/data';
import { MessageThread, type Message } from '../../components/messages';
import { PartnerPicker, pickedPartner } from '../../components/partner-picker';
import type { PageMeta } from '../../components/data';
import { useT } from '../../i18n';

function Thread({ id }: { id: number }) {
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const list = useLoad(() => api.GET('/{locale}/admin/partners/{id}/messages', { params: { path: { id }, query: { page, per_page: 20 } } }), [id, page]);
  return (
    <MessageThread
      me="admin"
      list={list as typeof list & { data: { data: Message[]; meta: PageMeta } | undefined }}
      onPage={(p) => setQuery({ page: String(p) })}
      send={(body) => api.POST('/{locale}/admin/partners/{id}/messages', { params: { path: { id } }, body: body as never, bodySerializer: (b: unknown) => b })}
      attachmentUrl={(m, a) => `/{locale}/admin/partners/${id}/messages/${m}/attachment/${a}`}
    />
  );
}

export default function AdminMessages() {
  const t = useT();
  const [query] = useQuery();
  const id = pickedPartner(query);
  return (
    <Page title={t('nav.messages')}>
      <PartnerPicker />
      {id === undefined ? <p>{t('admin.pick_first')}</p> : <Thread key={id} id={id} />}
    </Page>
  );
}
