#!/usr/bin/env node
// The kubectl plugin's executable (`kubectl secondcron …` once dist/bin is on PATH). Composition only:
// real streams, clock and randomness in; everything else is in src/plugin/.
import { readFileSync } from 'node:fs';

import { buildInfo } from '../build-info.js';
import { runPlugin } from '../plugin/plugin.js';

runPlugin(
  process.argv.slice(2),
  {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: () => readFileSync(0, 'utf8'),
    nowMs: Date.now,
    random: Math.random,
  },
  buildInfo(),
).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
