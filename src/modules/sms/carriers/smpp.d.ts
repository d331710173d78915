// A minimal declaration of the npm `smpp` package (0.5.x, farhadi/node-smpp), covering only
// what the SMPP carrier and the test SMSC use. The package ships no types. It is CommonJS;
// import it as `import smpp from 'smpp'` (its constants are not static named exports).
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';

  namespace smpp {
    /**
     * A decoded PDU. Parameters and TLVs appear as properties named as in the SMPP
     * specification; `short_message` is decoded to `{ udh?, message }` on receipt (message a
     * string for the encodings the package knows, else a Buffer).
     */
    interface PDU {
      command: string;
      command_id: number;
      command_status: number;
      sequence_number: number;
      isResponse(): boolean;
      response(options?: Record<string, unknown>): PDU;
      toBuffer(): Buffer;
      [param: string]: unknown;
    }

    interface PDUConstructor {
      new (command: string, options?: Record<string, unknown>): PDU;
    }

    type ResponseCallback = (pdu: PDU) => void;

    interface Session extends EventEmitter {
      readonly socket: Socket;
      server?: Server;
      /** Sends a request (sequence_number assigned here) or a response; false if the socket is not writable. */
      send(pdu: PDU, responseCallback?: ResponseCallback, sendCallback?: ResponseCallback): boolean;
      close(callback?: () => void): void;
      destroy(callback?: () => void): void;
      pause(): void;
      resume(): void;
      /** Shortcut methods: one per SMPP operation (submit_sm, deliver_sm, enquire_link, …). */
      [command: string]: unknown;
    }

    interface Server extends NetServer {
      readonly sessions: Session[];
    }

    interface GsmCoder {
      /** GSM 03.38 default alphabet, one septet per octet (unpacked); extension characters escaped. */
      encode(text: string, table?: number): Buffer;
      decode(octets: Buffer, table?: number): string;
    }

    interface ConnectOptions {
      host: string;
      port: number;
      tls?: boolean;
      [option: string]: unknown;
    }
  }

  const smpp: {
    PDU: smpp.PDUConstructor;
    connect(options: smpp.ConnectOptions, listener?: () => void): smpp.Session;
    createServer(options: Record<string, unknown>, listener?: (session: smpp.Session) => void): smpp.Server;
    createServer(listener?: (session: smpp.Session) => void): smpp.Server;
    gsmCoder: smpp.GsmCoder;
    /** Command status codes by name (ESME_ROK, ESME_RTHROTTLED, …). */
    errors: Record<string, number>;
  };
  export = smpp;
}
