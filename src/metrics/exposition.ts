// What /metrics answers: the registry's families, then the per-schedule gauges, streamed in pieces
// of at most ~64 KiB instead of one string (7 MiB at 10,000 schedules, and again as a Buffer).
// Gzipped (as Prometheus asks) from pieces compressed once per change (gzip-pieces.ts).
//
// `names` restricts the answer to those metric families, like the Python client's `name[]` query
// parameter: a poller that reads a few gauges (the bench's progress polling) does not pay for, nor
// make the operator pay for, 80,000 samples it does not read.
import type { Registry } from 'prom-client';

import { type DeflatedPiece, GZIP_HEADER, deflatePiece, gzipTrailer } from './gzip-pieces.js';
import type { ScheduleGauges } from './schedule-gauges.js';

const WRITE_BYTES = 64 * 1024;

export class MetricsExposition {
  constructor(
    private readonly registry: Registry,
    private readonly gauges: ScheduleGauges | undefined,
  ) {}

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * The answer's bytes, pulled as the socket drains. Rejects (nothing sent yet) when a collector fails;
   * the per-schedule text is rendered block by block while it is sent.
   */
  async body(opts: { gzip: boolean; names?: ReadonlySet<string> }): Promise<Iterable<Buffer>> {
    const head = Buffer.from(await this.registryText(opts.names));
    if (!opts.gzip) return batches(plain(head, this.gauges?.text(opts.names) ?? []));
    const pieces: DeflatedPiece[] = [deflatePiece(head), ...(this.gauges?.deflated(opts.names) ?? [])];
    return batches([GZIP_HEADER, ...pieces.map((p) => p.data), gzipTrailer(pieces)]);
  }

  private async registryText(names: ReadonlySet<string> | undefined): Promise<string> {
    if (!names) return this.registry.metrics();
    // As Registry.metrics() joins them, for the named families that exist.
    const named = this.registry.getMetricsAsArray().filter((m) => names.has(m.name));
    const parts = await Promise.all(named.map((m) => this.registry.getSingleMetricAsString(m.name)));
    return parts.length ? `${parts.join('\n')}\n` : '';
  }
}

function* plain(head: Buffer, pieces: Iterable<string>): Generator<Buffer> {
  yield head;
  for (const text of pieces) yield Buffer.from(text);
}

/** Joins small buffers into writes of about WRITE_BYTES (one write per piece would be thousands of tiny chunks). */
function* batches(buffers: Iterable<Buffer>): Generator<Buffer> {
  let held: Buffer[] = [];
  let size = 0;
  for (const b of buffers) {
    held.push(b);
    size += b.length;
    if (size >= WRITE_BYTES) {
      yield held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held, size);
      held = [];
      size = 0;
    }
  }
  if (size > 0) yield Buffer.concat(held, size);
}
