// The admin console (/dashboard/admin/). Navigation names are DESIGN.md §11's.
import { lazy } from 'preact-iso';
import { startConsole } from './components/console';

startConsole({
  kind: 'admin',
  base: '/dashboard/admin/',
  title: 'app.admin_console',
  nav: [
    { path: '', label: 'nav.partners', page: lazy(() => import('./pages/admin-partners/partners')) },
    { path: 'sms-accounts', label: 'nav.sms_accounts', page: lazy(() => import('./pages/admin-sms-accounts/sms-accounts')) },
    { path: 'commission', label: 'nav.commission', page: lazy(() => import('./pages/admin-commission/commission')) },
    { path: 'statistics', label: 'nav.statistics', page: lazy(() => import('./pages/admin-statistics/statistics')) },
    { path: 'messages', label: 'nav.messages', page: lazy(() => import('./pages/admin-messages/messages')) },
  ],
});
