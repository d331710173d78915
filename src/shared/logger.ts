// The logging surface services and infrastructure take: pino's logger satisfies it, and
// tests pass a recorder. Kept here, not in the composition root, so infra/ depends on
// nothing that wires the application together.
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
