// Every admin console page at 375 px, with data on it: axe-core finds no serious or
// critical violation and nothing scrolls sideways (see helpers/pages.ts).
import { adminPagesAt } from './helpers/pages.js';

adminPagesAt([375]);
