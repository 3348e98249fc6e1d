// Discovery (monitoring-api.md, Conventions 4): the RFC 9727 API catalog and the RFC 8288 Link
// header on the pages about the API, built from the deployment's public base URL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';

const BASE = 'https://status.example.com';

describe('api catalog', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ config: { 'auth.public_base_url': BASE } }); });
  after(async () => { await t.close(); });

  const LINKS = `<${BASE}/.well-known/api-catalog>; rel="api-catalog", <${BASE}/api/openapi.json>; rel="service-desc", <${BASE}/docs>; rel="service-doc"`;

  it('serves a linkset naming the REST API, its OpenAPI document and its docs, as this deployment serves them', async () => {
    const res = await t.inject({ method: 'GET', url: '/.well-known/api-catalog' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"; charset=utf-8');
    assert.deepEqual(res.json(), {
      linkset: [{
        anchor: `${BASE}/api/v1`,
        'service-desc': [{ href: `${BASE}/api/openapi.json`, type: 'application/vnd.oai.openapi+json;version=3.1' }],
        'service-doc': [{ href: `${BASE}/docs`, type: 'text/html' }],
      }],
    });
    assert.equal(res.headers.link, LINKS);
    const head = await t.inject({ method: 'HEAD', url: '/.well-known/api-catalog' });
    assert.equal(head.statusCode, 200);
    assert.match(head.headers['content-type'] as string, /^application\/linkset\+json/);
    // The links it names are served.
    assert.equal((await t.inject({ method: 'GET', url: '/api/openapi.json' })).statusCode, 200);
  });

  it('puts the Link header on the docs page and the OpenAPI document, not on API answers', async () => {
    for (const url of ['/api/openapi.json', '/docs', '/docs/']) {
      const res = await t.inject({ method: 'GET', url });
      assert.ok(res.statusCode < 400, `${url}: ${res.statusCode}`);
      if (res.statusCode === 200) assert.equal(res.headers.link, LINKS, url);
    }
    assert.equal((await t.inject({ method: 'GET', url: '/healthz' })).headers.link, undefined);
  });
});
