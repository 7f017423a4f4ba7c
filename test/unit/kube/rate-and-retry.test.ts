import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ApiError, isAlreadyExists, isRetryable, parseRetryAfterMs } from '../../../src/kube/api-error.js';
import { backoffDelayMs, retryDelayMs } from '../../../src/kube/backoff.js';
import { TokenBucket } from '../../../src/kube/token-bucket.js';

test('token bucket: a burst goes at once, then one token per 1/qps seconds', () => {
  let now = 0;
  const bucket = new TokenBucket(10, 3, { nowMs: () => now });
  assert.deepEqual([bucket.tryTake(), bucket.tryTake(), bucket.tryTake()], [true, true, true]);
  assert.equal(bucket.msUntilToken(), 100);
  now = 60;
  assert.equal(bucket.msUntilToken(), 40);
  now = 100;
  assert.equal(bucket.msUntilToken(), 0);
  now = 10_000; // long idle: refilled, capped at the burst
  assert.deepEqual([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()], [true, true, true, false]);
});

test('backoff doubles up to the cap, with jitter in [base/2, base]', () => {
  const policy = { initialMs: 100, maxMs: 1000 };
  assert.equal(backoffDelayMs(policy, 0, () => 0), 50);
  assert.equal(backoffDelayMs(policy, 0, () => 1), 100);
  assert.equal(backoffDelayMs(policy, 3, () => 1), 800);
  assert.equal(backoffDelayMs(policy, 10, () => 1), 1000);
  assert.equal(retryDelayMs(policy, 0, () => 1, 700), 700, 'Retry-After wins when longer');
  assert.equal(retryDelayMs(policy, 0, () => 1, 3_600_000), 1000, 'but not beyond the longest backoff');
  assert.equal(retryDelayMs(policy, 3, () => 1, 10), 800, 'but never shortens our own backoff');
});

test('Retry-After in seconds or as an HTTP date', () => {
  assert.equal(parseRetryAfterMs('2'), 2000);
  assert.equal(parseRetryAfterMs('Wed, 02 Dec 2026 10:00:05 GMT', Date.parse('2026-12-02T10:00:00Z')), 5000);
  assert.equal(parseRetryAfterMs('soon'), undefined);
  assert.equal(parseRetryAfterMs(null), undefined);
});

test('retryable: 429, 5xx and network failures; not validation errors or conflicts', () => {
  assert.equal(isRetryable(new ApiError(429, 'TooManyRequests', 'x')), true);
  assert.equal(isRetryable(new ApiError(503, 'ServiceUnavailable', 'x')), true);
  assert.equal(isRetryable(new ApiError(0, 'NetworkError', 'x')), true);
  assert.equal(isRetryable(new ApiError(422, 'Invalid', 'x')), false);
  assert.equal(isRetryable(new Error('x')), false);
  assert.equal(isAlreadyExists(new ApiError(409, 'AlreadyExists', 'x')), true);
  assert.equal(isAlreadyExists(new ApiError(409, 'Conflict', 'x')), false);
});

test('token bucket: tryTake never borrows from the future', () => {
  let now = 0;
  const bucket = new TokenBucket(10, 2, { nowMs: () => now });
  assert.deepEqual([bucket.tryTake(), bucket.tryTake(), bucket.tryTake()], [true, true, false]);
  now = 50;
  assert.equal(bucket.tryTake(), false, 'half a token is not a token');
  now = 100;
  assert.equal(bucket.tryTake(), true);
});
