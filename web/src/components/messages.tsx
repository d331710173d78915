// A message thread between a partner and the platform (newest first), with attachments to
// download and a form to write with files. Used by both consoles.
import { useState } from 'preact/hooks';
import { download, type Failure } from '../api/client';
import { formatDateTime, formatNumber, useI18n } from '../i18n';
import { LoadError, Pager, type Loaded, type PageMeta } from './data';
import { Form, Submit, TextArea, useForm } from './form';

export interface Message {
  id: number;
  sender: 'admin' | 'partner';
  body: string;
  attachments: Array<{ id: number; filename: string; content_type: string; size: number }>;
  created_at: string;
}

type ApiResult<T> = { data?: T; error?: unknown; response: Response };

export function MessageThread(props: {
  list: Loaded<{ data: Message[]; meta: PageMeta }>;
  onPage: (page: number) => void;
  send: (form: FormData) => Promise<ApiResult<unknown>>;
  attachmentUrl: (messageId: number, attachmentId: number) => string;
  me: 'admin' | 'partner';
}) {
  const { t, locale } = useI18n();
  const form = useForm();
  const [downloadFailure, setDownloadFailure] = useState<Failure>();
  const [formKey, setFormKey] = useState(0);

  const submit = async (fd: FormData) => {
    // Only the chosen files: an empty file input still sends an empty part.
    const body = new FormData();
    body.set('body', String(fd.get('body') ?? ''));
    for (const f of fd.getAll('files')) if (f instanceof File && f.name !== '') body.append('files', f, f.name);
    const r = await form.run(() => props.send(body));
    if (r) {
      setFormKey((k) => k + 1);
      props.list.reload();
    }
  };
  return (
    <>
      <section class="panel" aria-labelledby="message-new">
        <h2 id="message-new">{t('messages.write')}</h2>
        <Form form={form} onSubmit={submit} label={t('messages.write')} key={formKey}>
          <TextArea name="body" label={t('messages.body')} rows={4} />
          <div class="field">
            <label for="message-files">{t('messages.files')}</label>
            <p class="hint" id="message-files-hint">
              {t('messages.files_hint')}
            </p>
            {form.failure?.fields.files && (
              <p class="field-error" id="message-files-error">
                {form.failure.fields.files.join(' ')}
              </p>
            )}
            <input
              id="message-files"
              name="files"
              type="file"
              multiple
              aria-describedby={`message-files-hint${form.failure?.fields.files ? ' message-files-error' : ''}`}
            />
          </div>
          <Submit form={form}>{t('messages.send')}</Submit>
        </Form>
      </section>
      <LoadError failure={props.list.failure ?? downloadFailure} />
      <ol class="thread" aria-label={t('messages.thread')}>
        {(props.list.data?.data ?? []).map((m) => (
          <li key={m.id} class={`message message--${m.sender === props.me ? 'mine' : 'theirs'}`}>
            <p class="message-meta">
              <strong>{m.sender === 'admin' ? t('messages.from_admin') : t('messages.from_partner')}</strong> · {formatDateTime(locale, m.created_at)}
            </p>
            <p class="message-body">{m.body}</p>
            {m.attachments.length > 0 && (
              <ul class="attachments" aria-label={t('messages.attachments')}>
                {m.attachments.map((a) => (
                  <li key={a.id}>
                    <button type="button" class="link" onClick={async () => setDownloadFailure(await download(props.attachmentUrl(m.id, a.id), a.filename))}>
                      {a.filename}
                    </button>{' '}
                    <span class="hint">({formatNumber(locale, Math.ceil(a.size / 1024))} KB)</span>
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
        {props.list.data && props.list.data.data.length === 0 && <li class="message">{t('messages.none')}</li>}
      </ol>
      <Pager meta={props.list.data?.meta} onPage={props.onPage} label={t('messages.thread')} />
    </>
  );
}
