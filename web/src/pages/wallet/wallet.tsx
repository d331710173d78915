// Wallet (DESIGN.md §15): the partner's Apple Wallet and Google Wallet configuration — what is
// configured (identifiers, certificate subjects and expiry; never a key) and a form for each,
// where a certificate, key or key file is pasted or loaded from a file (.p12 as base64).
import { useRef, useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { LoadError, useLoad } from '../../components/data';
import { Field, Form, Submit, TextArea, optText, text, useForm } from '../../components/form';
import { formatDateTime, useI18n } from '../../i18n';
import type { MessageKey } from '../../i18n/en';

/** A text area that can also be filled from a file: text files as they are, binary (.p12) as base64. */
function FileTextArea({ name, label, hint, rows = 5 }: { name: string; label: string; hint?: string; rows?: number }) {
  const { t } = useI18n();
  const area = useRef<HTMLDivElement>(null);
  const load = async (file: File | undefined) => {
    const target = area.current?.querySelector('textarea');
    if (!file || !target) return;
    const bytes = new Uint8Array(await file.arrayBuffer());
    const asText = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
    const binary = /\.(p12|pfx)$/i.test(file.name) || asText.includes('\uFFFD');
    target.value = binary ? btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join('')) : asText;
  };
  return (
    <div ref={area}>
      <TextArea name={name} label={label} hint={hint} rows={rows} spellcheck={false} class="mono" />
      <label class="file-load">
        {t('wallet.load_file', { field: label })}{' '}
        <input type="file" accept=".pem,.cer,.crt,.key,.p12,.pfx,.json" onChange={(e) => void load(e.currentTarget.files?.[0])} />
      </label>
    </div>
  );
}

export default function Wallet() {
  const { t, locale } = useI18n();
  const config = useLoad(() => api.GET('/{locale}/partners/wallet'), []);
  const appleForm = useForm();
  const googleForm = useForm();
  const [saved, setSaved] = useState<MessageKey>();
  const apple = config.data?.data.apple;
  const google = config.data?.data.google;

  const saveApple = async (fd: FormData, el: HTMLFormElement) => {
    const r = await appleForm.run(() =>
      api.PUT('/{locale}/partners/wallet/apple', {
        body: {
          pass_type_identifier: text(fd, 'pass_type_identifier'),
          team_identifier: text(fd, 'team_identifier'),
          certificate: text(fd, 'certificate'),
          private_key: optText(fd, 'private_key'),
          passphrase: optText(fd, 'passphrase'),
          wwdr_certificate: text(fd, 'wwdr_certificate'),
        },
      }),
    );
    if (r) {
      el.reset();
      setSaved('wallet.apple');
      config.reload();
    }
  };
  const saveGoogle = async (fd: FormData, el: HTMLFormElement) => {
    const r = await googleForm.run(() =>
      api.PUT('/{locale}/partners/wallet/google', { body: { issuer_id: text(fd, 'issuer_id'), service_account: text(fd, 'service_account') } }),
    );
    if (r) {
      el.reset();
      setSaved('wallet.google');
      config.reload();
    }
  };
  const status = (on: boolean) => <p class={on ? 'status status--active' : 'status'}>{t(on ? 'wallet.configured' : 'wallet.not_configured')}</p>;

  return (
    <Page title={t('nav.wallet')}>
      <p class="lead">{t('wallet.intro')}</p>
      <LoadError failure={config.failure} />
      {saved && (
        <p class="panel panel--success" role="status">
          {t(saved)}: {t('wallet.saved')}
        </p>
      )}
      <section class="panel" aria-labelledby="wallet-apple">
        <h2 id="wallet-apple">{t('wallet.apple')}</h2>
        {status(Boolean(apple))}
        {apple && (
          <dl class="facts" data-testid="apple-config">
            <dt>{t('wallet.pass_type_identifier')}</dt>
            <dd>{apple.pass_type_identifier}</dd>
            <dt>{t('wallet.team_identifier')}</dt>
            <dd>{apple.team_identifier}</dd>
            <dt>{t('wallet.subject')}</dt>
            <dd>{apple.certificate.subject}</dd>
            <dt>{t('wallet.expires')}</dt>
            <dd>{formatDateTime(locale, apple.certificate.expires_at)}</dd>
            <dt>{t('wallet.wwdr_certificate')}</dt>
            <dd>{apple.wwdr_certificate.subject}</dd>
            <dt>{t('wallet.updated')}</dt>
            <dd>{formatDateTime(locale, apple.updated_at)}</dd>
          </dl>
        )}
        <Form form={appleForm} onSubmit={saveApple} label={t('wallet.apple')}>
          <Field name="pass_type_identifier" label={t('wallet.pass_type_identifier')} maxLength={255} autoComplete="off" />
          <Field name="team_identifier" label={t('wallet.team_identifier')} maxLength={20} autoComplete="off" />
          <FileTextArea name="certificate" label={t('wallet.certificate')} hint={t('wallet.certificate_hint')} />
          <FileTextArea name="private_key" label={t('wallet.private_key')} hint={t('wallet.private_key_hint')} />
          <Field name="passphrase" type="password" label={t('wallet.passphrase')} hint={t('wallet.passphrase_hint')} autoComplete="off" />
          <FileTextArea name="wwdr_certificate" label={t('wallet.wwdr_certificate')} hint={t('wallet.wwdr_hint')} />
          <Submit form={appleForm}>{t('wallet.save_apple')}</Submit>
        </Form>
      </section>
      <section class="panel" aria-labelledby="wallet-google">
        <h2 id="wallet-google">{t('wallet.google')}</h2>
        {status(Boolean(google))}
        {google && (
          <dl class="facts" data-testid="google-config">
            <dt>{t('wallet.issuer_id')}</dt>
            <dd>{google.issuer_id}</dd>
            <dt>{t('wallet.client_email')}</dt>
            <dd>{google.client_email}</dd>
            <dt>{t('wallet.updated')}</dt>
            <dd>{formatDateTime(locale, google.updated_at)}</dd>
          </dl>
        )}
        <Form form={googleForm} onSubmit={saveGoogle} label={t('wallet.google')}>
          <Field name="issuer_id" label={t('wallet.issuer_id')} maxLength={64} inputMode="numeric" autoComplete="off" />
          <FileTextArea name="service_account" label={t('wallet.service_account')} hint={t('wallet.service_account_hint')} rows={6} />
          <Submit form={googleForm}>{t('wallet.save_google')}</Submit>
        </Form>
      </section>
    </Page>
  );
}
