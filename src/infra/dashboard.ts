// The partner console (/dashboard/) and the admin console (/dashboard/admin/), DESIGN.md §11:
// the static build of web/ (`npm run build` → web/dist), served by this process. Both are
// single-page apps: a path under a console that is not a file gets that console's page, and
// the app routes it. Everything here is a GET of a file; the consoles talk to the public
// API like any other client.
import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';

export const DASHBOARD_DIST = path.resolve(import.meta.dirname, '../../web/dist');

/**
 * No inline script or style, nothing from elsewhere: scripts, styles, fonts and API calls are
 * same-origin; images may be data:/blob: URIs (card logos, QR codes, charts); downloads are blobs.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface DashboardOptions {
  /** The built console (default web/dist beside src/ or dist/). */
  root?: string;
}

function securityHeaders(reply: FastifyReply) {
  reply.header('content-security-policy', DASHBOARD_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-frame-options', 'DENY');
}

async function dashboardPlugin(app: FastifyInstance, opts: DashboardOptions) {
  const root = opts.root ?? DASHBOARD_DIST;
  const built = existsSync(path.join(root, 'index.html'));
  if (!built) app.log.warn({ root }, 'dashboard not built: run `npm run build` to serve /dashboard/');

  // Only GETs of this plugin's routes get the console's headers (the /docs UI keeps its own).
  app.addHook('onRequest', async (_req, reply) => securityHeaders(reply));

  await app.register(fastifyStatic, { root, serve: false, preCompressed: true });

  const page = (reply: FastifyReply, file: string) => {
    if (!built) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The dashboard is not built. Run `npm run build` (npm start does it for you).\n');
    }
    // The page names the current assets: always revalidate it.
    return reply.sendFile(file, { cacheControl: false }).header('cache-control', 'no-cache');
  };

  const hidden = { config: { rateLimit: false }, schema: { hide: true } };
  app.get('/dashboard', hidden, async (_req, reply) => reply.redirect('/dashboard/', 301));
  // Vite names assets by content hash: they never change under a name.
  app.get('/dashboard/assets/*', hidden, async (req, reply) => {
    const rest = (req.params as { '*': string })['*'];
    return reply.sendFile(path.posix.join('assets', rest), { maxAge: '365d', immutable: true });
  });
  app.get('/dashboard/favicon.svg', hidden, async (_req, reply) => reply.sendFile('favicon.svg', { maxAge: '1d' }));
  app.get('/dashboard/admin', hidden, async (_req, reply) => page(reply, 'admin/index.html'));
  app.get('/dashboard/admin/*', hidden, async (_req, reply) => page(reply, 'admin/index.html'));
  app.get('/dashboard/*', hidden, async (_req, reply) => page(reply, 'index.html'));
}

export default fp(dashboardPlugin, { name: 'dashboard', dependencies: ['http-core'], fastify: '5.x', encapsulate: true });
