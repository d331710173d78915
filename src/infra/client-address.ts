// The client address behind a proxy (TRUST_PROXY, DESIGN §16). X-Forwarded-For is read
// only as far as the operator says the proxies go: a hop count (the nearest N addresses,
// the socket peer first, are proxies) or a list of proxy addresses/CIDRs. `true` — trust
// every hop — would let any client name its own address, so config.ts refuses it.
//
// Fastify computes `request.ip` from the trust function it is given; app.ts hands it the
// one built here, so anything outside a request's lifecycle (WebSocket upgrades) that uses
// `clientAddressResolver` sees exactly the address Fastify's own handlers see.
//
// A hop count is passed as a function rather than a number on purpose: Fastify 5.12 treats
// a numeric trustProxy as "trust nothing" (a hop count cannot tell whether the peer is the
// proxy), which would silently ignore the setting. The operator who gives a hop count takes
// on that the node is reachable only through those proxies (docs/operations.md).
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { TrustProxySetting } from '../config.js';

export type { TrustProxySetting };

/** Whether the address `addr`, `hop` steps from this node (0 = the socket peer), is a trusted proxy. */
export type ProxyTrust = (addr: string, hop: number) => boolean;

/** The trust function for a setting, or false when no proxy is trusted. */
export function proxyTrust(setting: TrustProxySetting): ProxyTrust | false {
  if (setting === false) return false;
  if (typeof setting === 'number') {
    const hops = setting;
    return (_addr, hop) => hop < hops;
  }
  // compile() throws on an entry that is neither an address, a CIDR nor a range name;
  // config.ts has refused those already, naming TRUST_PROXY.
  return proxyAddr.compile(setting);
}

/**
 * Returns a function giving a raw request's client address exactly as Fastify's
 * `request.ip` computes it under the same setting ('' when the socket is already gone).
 */
export function clientAddressResolver(setting: TrustProxySetting): (req: IncomingMessage) => string {
  const trust = proxyTrust(setting);
  if (trust === false) return (req) => req.socket?.remoteAddress ?? '';
  return (req) => {
    if (req.socket?.remoteAddress === undefined) return '';
    const addrs = proxyAddr.all(req, trust);
    return addrs[addrs.length - 1] ?? '';
  };
}
