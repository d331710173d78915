// Every partner console page at 375 px, with data on it: axe-core finds no serious or
// critical violation and nothing scrolls sideways (see helpers/pages.ts). One file, so one
// app, seed and browser for the whole navigation: they cost as much as half of the pages.
import { partnerPagesAt } from './helpers/pages.js';

partnerPagesAt(375);
