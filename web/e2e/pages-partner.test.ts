// Partner console pages at 375 px, with data on them (first half of the navigation; the
// rest in pages-partner-more.test.ts, so each file stays short): axe-core finds no serious
// or critical violation and nothing scrolls sideways (see helpers/pages.ts).
import { PARTNER_PAGES, partnerPagesAt } from './helpers/pages.js';

partnerPagesAt(375, PARTNER_PAGES.slice(0, 5), true);
