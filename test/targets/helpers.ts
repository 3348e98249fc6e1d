// Shared bits of the targets tests: a JSON client and minimal valid bodies per kind.
import type { LightMyRequestResponse } from 'fastify';
import { bearer, type TestApp } from '../helpers/app.js';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
export type Api = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;

export function client(t: TestApp, token: string): Api {
  return (method, url, payload, headers) => t.inject({
    method, url, headers: { ...bearer(token), ...headers }, ...(payload !== undefined && { payload: payload as object }),
  });
}

/** A public IPv4 literal: never contacted at write time, and no DNS needed. */
export const PUBLIC_URL = 'https://93.184.216.34/';

export const httpTarget = (extra: Json = {}, check: Json = {}): Json => ({ name: 'web', check: { type: 'http', url: PUBLIC_URL, ...check }, ...extra });

export function expectError(res: LightMyRequestResponse, status: number, code: string, field?: string): Json {
  const body = res.json() as Json;
  if (res.statusCode !== status || body.error?.code !== code || (field !== undefined && body.error?.field !== field)) {
    throw new Error(`expected ${status} ${code}${field ? ` (${field})` : ''}, got ${res.statusCode} ${res.body}`);
  }
  return body.error;
}

/** Sets plan overrides on an account (operator surface); throws unless accepted. */
export async function overrideCaps(t: TestApp, accountId: string, caps: Record<string, number>): Promise<void> {
  const res = await t.operator('PUT', `/operator/accounts/${accountId}/overrides`, { caps, reason: 'test' });
  if (res.statusCode !== 200) throw new Error(`overrideCaps: ${res.statusCode} ${res.body}`);
}
