// Where the logs go: standard output, through pino's own destination (sonic-boom), written
// asynchronously and flushed when the process exits — as pino does by default, with one
// difference: each line is handed over as bytes, not text.
//
// In its default text mode sonic-boom appends a line to the text still waiting to be written
// and then measures that whole text again (`Buffer.byteLength`), on every line. Under load a
// write is nearly always in flight, so the waiting text grows to its 16 KiB chunk and each
// line pays for copying and measuring all of it (measured in docs/decisions.md "Request
// logs"). In byte mode it keeps a list of buffers and their lengths, and concatenates them
// once per write.
import type { DestinationStream } from 'pino';
import pino from 'pino';

export function stdoutLogDestination(): DestinationStream {
  // pino.destination registers the flush at exit, as for its default destination.
  const boom = pino.destination({ dest: 1, sync: false, contentMode: 'buffer' });
  return {
    write: (line: string) => {
      // (sonic-boom's types know only its text mode)
      boom.write(Buffer.from(line) as unknown as string);
    },
  };
}
