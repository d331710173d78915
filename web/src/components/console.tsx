// The frame both consoles share: sign-in, the header (account, LT/EN switch, sign-out), the
// navigation and the routed page. A console is a list of NavItems (see partner.tsx and
// admin.tsx): adding a page is one entry there, a folder under pages/ and its texts.
import type { ComponentChildren, ComponentType } from 'preact';
import { render } from 'preact';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../api/client';
import { session, type ConsoleKind, type Session } from '../api/session';
import { I18nContext, initLocale, setLocale as storeLocale, translator, useI18n, useT, type Locale } from '../i18n';
import type { MessageKey } from '../i18n/en';
import { Field, Form, Submit, text, useForm } from './form';
import '../styles.css';

export interface NavItem {
  /** Below the console's base, '' for the first page. */
  path: string;
  label: MessageKey;
  page: ComponentType;
  /** Extra routes of the same area (e.g. 'cards/:id'), same navigation entry. */
  subroutes?: Array<{ path: string; page: ComponentType }>;
}

export interface ConsoleSpec {
  kind: ConsoleKind;
  base: string;
  title: MessageKey;
  nav: NavItem[];
}

export function Page({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  const { t } = useI18n();
  const h1 = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} — ${t('app.name')}`;
  }, [title]);
  useEffect(() => {
    // After navigation, reading starts at the new page's heading.
    if (document.activeElement === document.body || document.activeElement?.closest('nav')) h1.current?.focus();
  }, []);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1} ref={h1}>
          {title}
        </h1>
        {actions && <div class="page-actions">{actions}</div>}
      </div>
      {children}
    </>
  );
}

function LocaleSwitch() {
  const { locale, setLocale, t } = useI18n();
  return (
    <div class="locale-switch" role="group" aria-label={t('app.language')}>
      {(['lt', 'en'] as const).map((l) => (
        <button key={l} type="button" lang={l} aria-pressed={locale === l} onClick={() => setLocale(l)}>
          {l.toUpperCase()}
        </button>
      ))}
    </div>
  );
}

function SignIn({ spec, reason }: { spec: ConsoleSpec; reason: 'expired' | undefined }) {
  const t = useT();
  const form = useForm();
  useEffect(() => {
    document.title = `${t('signin.title')} — ${t(spec.title)}`;
  }, [t]);
  const submit = async (fd: FormData) => {
    const body = { email: text(fd, 'email'), password: String(fd.get('password') ?? '') };
    if (spec.kind === 'partner') {
      const r = await form.run(() => api.POST('/{locale}/partners/auth/login', { body }));
      if (r) session.set({ token: r.data.token, expires_at: r.data.expires_at, account: r.data.partner });
    } else {
      const r = await form.run(() => api.POST('/{locale}/admin/auth/login', { body }));
      if (r) session.set({ token: r.data.token, expires_at: r.data.expires_at, account: r.data.admin });
    }
  };
  return (
    <div class="signin">
      <header class="signin-head">
        <span class="brand">{t('app.name')}</span>
        <LocaleSwitch />
      </header>
      <main id="main" class="signin-main">
        <h1>{t(spec.title)}</h1>
        {reason === 'expired' && (
          <div class="notice" role="status">
            {t('signin.expired')}
          </div>
        )}
        <Form form={form} onSubmit={submit} label={t('signin.title')}>
          <Field name="email" label={t('signin.email')} type="email" autoComplete="username" required />
          <Field name="password" label={t('signin.password')} type="password" autoComplete="current-password" required />
          <Submit form={form}>{t('signin.submit')}</Submit>
        </Form>
      </main>
    </div>
  );
}

/**
 * Signs out here at once, then revokes the token on the server too, so a copy left behind
 * (storage, another tab, a proxy log) stops working. A failed revoke is not retried: the
 * token still expires on its own.
 */
function signOut(kind: ConsoleKind) {
  const token = session.current()?.token;
  session.signOut();
  if (!token) return;
  const init = { headers: { authorization: `Bearer ${token}` } };
  const done = kind === 'admin' ? api.POST('/{locale}/admin/auth/logout', init) : api.POST('/{locale}/partners/auth/logout', init);
  done.catch(() => undefined);
}

function Shell({ spec, account }: { spec: ConsoleSpec; account: Session['account'] }) {
  const t = useT();
  const { path } = useLocation();
  const href = (p: string) => `${spec.base}${p}`;
  const current = (item: NavItem) => {
    const full = href(item.path).replace(/\/$/, '');
    const here = path.replace(/\/$/, '');
    return item.path === '' ? here === full : here === full || here.startsWith(`${full}/`);
  };
  return (
    <>
      <a class="skip-link" href="#main">
        {t('app.skip')}
      </a>
      <header class="top">
        <span class="brand">{t(spec.title)}</span>
        <span class="account" title={account.email}>
          {account.name}
        </span>
        <LocaleSwitch />
        <button type="button" class="button button--secondary" onClick={() => signOut(spec.kind)}>
          {t('app.sign_out')}
        </button>
      </header>
      <div class="layout">
        <nav class="side" aria-label={t('app.navigation')}>
          <ul>
            {spec.nav.map((item) => (
              <li key={item.path}>
                <a href={href(item.path)} aria-current={current(item) ? 'page' : undefined}>
                  {t(item.label)}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          <Router>
            {[
              ...spec.nav.flatMap((item) => [
                <Route key={item.path} path={href(item.path)} component={item.page} />,
                ...(item.subroutes ?? []).map((s) => <Route key={s.path} path={href(s.path)} component={s.page} />),
              ]),
              <Route key="*" default component={NotFound} />,
            ]}
          </Router>
        </main>
      </div>
    </>
  );
}

function NotFound() {
  const t = useT();
  return (
    <Page title={t('app.not_found')}>
      <p>{t('app.not_found_text')}</p>
    </Page>
  );
}

function App({ spec }: { spec: ConsoleSpec }) {
  const [locale, setLocaleState] = useState<Locale>(() => initLocale());
  const [current, setCurrent] = useState(() => session.current());
  const [reason, setReason] = useState<'expired' | undefined>(() => session.takeReason());
  useEffect(
    () =>
      session.subscribe(() => {
        setCurrent(session.current());
        setReason(session.takeReason());
      }),
    [],
  );
  const i18n = useMemo(
    () => ({
      locale,
      t: translator(locale),
      setLocale: (l: Locale) => {
        storeLocale(l);
        setLocaleState(l);
      },
    }),
    [locale],
  );
  return (
    <I18nContext.Provider value={i18n}>
      <LocationProvider scope={spec.base}>
        {current ? <Shell key={current.token} spec={spec} account={current.account} /> : <SignIn spec={spec} reason={reason} />}
      </LocationProvider>
    </I18nContext.Provider>
  );
}

export function startConsole(spec: ConsoleSpec) {
  session.init(spec.kind);
  render(<App spec={spec} />, document.getElementById('app')!);
}
