import type { Config } from '../../../config.js';
import type { Database } from '../../../infra/db/index.js';
import type { Clock } from '../../../shared/time.js';
import type { Carrier } from './carrier.js';
import { SimulatorCarrier } from './simulator.js';
import { SmppCarrier } from './smpp-carrier.js';

export function createCarrier(
  config: Config,
  database: Database,
  clock: Clock,
  log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void },
): Carrier {
  if (config.sms.carrier === 'smpp') {
    return new SmppCarrier({
      url: config.sms.smppUrl!,
      enquireLinkMs: config.sms.smppEnquireLinkMs,
      windowSize: config.sms.smppWindow,
      throughputPerSecond: config.sms.smppThroughput,
      pduTimeoutMs: config.sms.smppResponseTimeoutMs,
      log,
    });
  }
  return new SimulatorCarrier(database, { delayMs: config.sms.simulatorDelayMs, pollMs: config.sms.dispatchPollMs, clock, log });
}
