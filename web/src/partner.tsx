// The partner console (/dashboard/). Navigation names are DESIGN.md §11's. To add a page: a
// folder under pages/, one entry below in the order §11 lists, and its texts in i18n/en.ts
// and i18n/lt.ts.
import { lazy } from 'preact-iso';
import { startConsole } from './components/console';

startConsole({
  kind: 'partner',
  base: '/dashboard/',
  title: 'app.partner_console',
  nav: [
    { path: '', label: 'nav.overview', page: lazy(() => import('./pages/overview/overview')) },
    { path: 'api-keys', label: 'nav.api_keys', page: lazy(() => import('./pages/api-keys/api-keys')) },
    { path: 'shops', label: 'nav.shops', page: lazy(() => import('./pages/shops/shops')) },
    {
      path: 'card-programmes',
      label: 'nav.card_programmes',
      page: lazy(() => import('./pages/card-programmes/card-programmes')),
      subroutes: [{ path: 'card-programmes/:id', page: lazy(() => import('./pages/card-programmes/card-programme')) }],
    },
    { path: 'games', label: 'nav.games', page: lazy(() => import('./pages/games/games')) },
    { path: 'offers', label: 'nav.offers', page: lazy(() => import('./pages/offers/offers')) },
    { path: 'campaigns', label: 'nav.campaigns', page: lazy(() => import('./pages/campaigns/campaigns')) },
    { path: 'coupons', label: 'nav.coupons', page: lazy(() => import('./pages/coupons/coupons')) },
    { path: 'customers', label: 'nav.customers', page: lazy(() => import('./pages/customers/customers')) },
    {
      path: 'transactions',
      label: 'nav.transactions',
      page: lazy(() => import('./pages/transactions/transactions')),
      subroutes: [{ path: 'transactions/:id', page: lazy(() => import('./pages/transactions/transaction')) }],
    },
    { path: 'sms', label: 'nav.sms', page: lazy(() => import('./pages/sms/sms')) },
    { path: 'webhooks', label: 'nav.webhooks', page: lazy(() => import('./pages/webhooks/webhooks')) },
    { path: 'wallet', label: 'nav.wallet', page: lazy(() => import('./pages/wallet/wallet')) },
    {
      path: 'products',
      label: 'nav.products',
      page: lazy(() => import('./pages/products/products')),
      subroutes: [{ path: 'products/:id', page: lazy(() => import('./pages/products/product')) }],
    },
    { path: 'imports', label: 'nav.imports', page: lazy(() => import('./pages/imports/imports')) },
    { path: 'messages', label: 'nav.messages', page: lazy(() => import('./pages/messages/messages')) },
  ],
});
