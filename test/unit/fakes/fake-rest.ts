// An in-memory stand-in for the REST client: records every request, answers from routes the test
// registers (newest first), and lets the test feed open watches event by event.
import { ApiError } from '../../../src/kube/api-error.js';
import type { RequestOptions, RestClient, Verb } from '../../../src/kube/rest.js';

export type Responder = (req: RequestOptions) => unknown;

interface Route {
  verb: Verb;
  path: string | RegExp;
  respond: Responder;
}

interface OpenWatch {
  path: string;
  query: Record<string, string | number | boolean | undefined>;
  onEvent: (type: string, object: unknown) => void;
  end: () => void;
  fail: (err: unknown) => void;
}

export class FakeRest implements RestClient {
  readonly requests: RequestOptions[] = [];
  readonly watches: OpenWatch[] = [];
  private readonly routes: Route[] = [];

  /** Answers requests of this verb whose path equals (string) or matches (RegExp); a thrown error rejects. */
  on(verb: Verb, path: string | RegExp, respond: Responder): this {
    this.routes.unshift({ verb, path, respond });
    return this;
  }

  /** Requests so far of one verb (and path prefix). */
  sent(verb: Verb, pathPrefix = ''): RequestOptions[] {
    return this.requests.filter((r) => r.verb === verb && r.path.startsWith(pathPrefix));
  }

  async request<T>(opts: RequestOptions): Promise<T> {
    this.requests.push(opts);
    const route = this.routes.find((r) => r.verb === opts.verb && (typeof r.path === 'string' ? r.path === opts.path : r.path.test(opts.path)));
    if (!route) throw new ApiError(404, 'NotFound', `fake: no route for ${opts.verb} ${opts.path}`);
    return (await route.respond(opts)) as T;
  }

  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, object: unknown) => void,
    signal: AbortSignal,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const w: OpenWatch = {
        path,
        query,
        onEvent,
        end: () => {
          this.watches.splice(this.watches.indexOf(w), 1);
          resolve();
        },
        fail: (err) => {
          this.watches.splice(this.watches.indexOf(w), 1);
          reject(err);
        },
      };
      this.watches.push(w);
      signal.addEventListener('abort', () => w.fail(new Error('aborted')), { once: true });
    });
  }

  /** The newest open watch on a path. */
  openWatch(path: string): OpenWatch | undefined {
    return [...this.watches].reverse().find((w) => w.path === path);
  }
}

/** A promise the test settles by hand (a request that hangs until then). */
export function deferred<T = unknown>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets pending promise callbacks (and the I/O phase) run. */
export async function flush(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}
