// Starts the real app on a fresh store for one test file; factories create tenants over HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig, type ConfigValue } from '../../src/config/load.js';
import type { Metrics } from '../../src/http/metrics.js';
import { createServices, type Services } from '../../src/services.js';
import type { Clock } from '../../src/shared/context.js';
import { createTestStore, type TestStore } from './store.js';

/** The sealing key of test apps: 32 bytes, base64. */
export const TEST_KEK = Buffer.alloc(32, 7).toString('base64');
export const OPERATOR_SECRET = 'test-operator-secret';
export const RDAP_BOOTSTRAP_FIXTURE_URL = new URL('../fixtures/rdap-bootstrap.json', import.meta.url).href;

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  store: TestStore;
  clock: TestClock;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** Calls the operator surface with the test secret. */
  operator(method: InjectOptions['method'], url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** A clock tests move by hand; it starts at the real time. */
export class TestClock implements Clock {
  private offsetMs = 0;
  now(): Date { return new Date(Date.now() + this.offsetMs); }
  advance(ms: number): void { this.offsetMs += ms; }
}

export interface TestAppOptions {
  config?: Record<string, ConfigValue | undefined>;
  /** Reuse a store (two nodes on one database). */
  store?: TestStore;
  /** Prometheus metrics, as `serve` passes them when `metrics.enabled`. */
  metrics?: Metrics;
  /** Mount probe routes on the real app before it starts (e.g. a scoped or nested-body route). */
  extraRoutes?: (app: FastifyInstance, services: Services) => void;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'keepwatch-data-'));
  const config = loadConfig({
    env: {},
    cwd: dataDir,
    overrides: {
      data_dir: dataDir,
      'operator.secret': OPERATOR_SECRET,
      'metrics.enabled': false,
      'auth.fingerprint_salt': 'test-salt',
      // Apps sharing one store (several nodes in a test) share its sealing key, as real nodes must.
      'security.credentials_kek_base64': TEST_KEK,
      // No internet here: IANA's registry is replaced by a local copy (com, net, org, uk, ...; no de).
      'checker.rdap_bootstrap_url': RDAP_BOOTSTRAP_FIXTURE_URL,
      // The built-in region takes flow monitors only where the process may run flows.
      'flow.enabled': true,
      ...options.config,
    },
  });
  const store = options.store ?? (await createTestStore());
  const clock = new TestClock();
  const services = await createServices(config, { db: store.db, clock, log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
  const app = await buildApp(services, { metrics: options.metrics });
  options.extraRoutes?.(app, services);
  await app.ready();
  return {
    app, services, store, clock,
    inject: (o) => app.inject(o),
    operator: (method, url, payload) => app.inject({
      method, url, headers: { authorization: `Bearer ${OPERATOR_SECRET}` },
      ...(payload !== undefined && { payload: payload as object }),
    }),
    async close() {
      await app.close();
      await services.close();
      if (!options.store) await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Tenant {
  userId: string;
  accountId: string;
  orgId: string;
  orgSlug: string;
  email: string;
}

let tenantSeq = 0;

/** A verified user owning a new account and org, through the operator surface. */
export async function createTenant(t: TestApp, options: { plan?: string; email?: string } = {}): Promise<Tenant> {
  const email = options.email ?? `user${++tenantSeq}-${process.pid}-${Date.now()}@example.test`;
  const res = await t.operator('POST', '/operator/users', { email, ...(options.plan && { plan_id: options.plan }) });
  if (res.statusCode !== 201) throw new Error(`createTenant: ${res.statusCode} ${res.body}`);
  const body = res.json() as { user_id: string; account_id: string; org_id: string; org_slug: string };
  return { userId: body.user_id, accountId: body.account_id, orgId: body.org_id, orgSlug: body.org_slug, email };
}

export interface TokenOptions { scopes?: string[]; orgId?: string | null; expiresInDays?: number }

/** Mints an API token for `userId`; bound to `orgId` when given. */
export async function createToken(t: TestApp, userId: string, options: TokenOptions = {}): Promise<string> {
  const res = await t.operator('POST', `/operator/users/${userId}/api-tokens`, {
    name: 'test', scopes: options.scopes ?? ['full_access'],
    ...(options.orgId !== undefined && { org_id: options.orgId }),
    ...(options.expiresInDays !== undefined && { expires_in_days: options.expiresInDays }),
  });
  if (res.statusCode !== 201) throw new Error(`createToken: ${res.statusCode} ${res.body}`);
  return (res.json() as { token: string }).token;
}

/** A tenant with a full-access token bound to its org. */
export async function createTenantWithToken(t: TestApp, options: { plan?: string; scopes?: string[] } = {}): Promise<Tenant & { token: string }> {
  const tenant = await createTenant(t, options);
  return { ...tenant, token: await createToken(t, tenant.userId, { orgId: tenant.orgId, scopes: options.scopes }) };
}

export const bearer = (token: string, org?: string): Record<string, string> => ({
  authorization: `Bearer ${token}`,
  ...(org !== undefined && { 'x-service-org': org }),
});
