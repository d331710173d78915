// Partner console pages at 375 px, second half of the navigation (see pages-partner.test.ts).
import { PARTNER_PAGES, partnerPagesAt } from './helpers/pages.js';

partnerPagesAt(375, PARTNER_PAGES.slice(5), false);
