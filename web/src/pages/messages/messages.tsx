// Messages with the platform's administrators, with attachments.
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { useLoad, useQuery } from '../../components/data';
import { MessageThread } from '../../components/messages';
import { useT } from '../../i18n';

export default function Messages() {
  const t = useT();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const list = useLoad(() => api.GET('/{locale}/partners/messages', { params: { query: { page, per_page: 20 } } }), [page]);
  return (
    <Page title={t('nav.messages')}>
      <p class="lead">{t('messages.partner_intro')}</p>
      <MessageThread
        me="partner"
        list={list}
        onPage={(p) => setQuery({ page: String(p) })}
        send={(body) => api.POST('/{locale}/partners/messages', { body: body as never, bodySerializer: (b: unknown) => b })}
        attachmentUrl={(m, a) => `/{locale}/partners/messages/${m}/attachment/${a}`}
      />
    </Page>
  );
}
