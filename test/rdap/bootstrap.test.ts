// The RDAP bootstrap registry: parsing RFC 9224, longest-suffix lookup, one lazy fetch kept for
// the process, and a failed fetch retried only after a pause.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseBootstrap, RdapBootstrap, RdapUnavailableError, serversFor } from '../../src/rdap/index.js';
import { TestClock } from '../helpers/app.js';

const FIXTURE_URL = new URL('../fixtures/rdap-bootstrap.json', import.meta.url);
const RDAP_BOOTSTRAP_FIXTURE = readFileSync(FIXTURE_URL, 'utf8');

describe('rdap bootstrap: parsing and lookup', () => {
  const services = parseBootstrap(JSON.parse(RDAP_BOOTSTRAP_FIXTURE));

  it('finds the service by the longest matching suffix, case-insensitively, preferring https', () => {
    assert.deepEqual(serversFor(services, 'example.com'), ['https://rdap.verisign.com/com/v1/']);
    assert.deepEqual(serversFor(services, 'Shop.Example.NET'), ['https://rdap.verisign.com/com/v1/']);
    assert.deepEqual(serversFor(services, 'bbc.co.uk'), ['https://rdap.nominet.uk/uk/']);
    assert.deepEqual(serversFor(services, 'a.co.example'), ['https://rdap.co-example.test/']);
    assert.deepEqual(serversFor(services, 'wikipedia.org'), ['https://rdap.publicinterestregistry.org/rdap/', 'http://rdap.publicinterestregistry.org/rdap/']);
  });

  it('an internationalised name is looked up by its ASCII form', () => {
    assert.deepEqual(serversFor(services, 'пример.рф'), ['https://rdap.tcinet.ru/']);
  });

  it('a TLD without a service, or with no usable URL, has none', () => {
    assert.equal(serversFor(services, 'example.de'), null);
    assert.equal(serversFor(services, 'x.broken'), null);
    assert.equal(serversFor(services, 'example'), null, 'the TLD itself is not a registrable domain');
  });

  it('a document without services is refused', () => {
    assert.throws(() => parseBootstrap({ version: '1.0' }), RdapUnavailableError);
    assert.throws(() => parseBootstrap(null), RdapUnavailableError);
  });
});

describe('rdap bootstrap: fetching', () => {
  let server: Server;
  let base: string;
  let hits = 0;
  let failing = true;
  before(async () => {
    server = createServer((req, res) => {
      hits++;
      if (req.url === '/flaky' && failing) { res.writeHead(503).end(); return; }
      if (req.url === '/junk') { res.writeHead(200, { 'content-type': 'application/json' }).end('not json'); return; }
      res.writeHead(200, { 'content-type': 'application/json' }).end(RDAP_BOOTSTRAP_FIXTURE);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => { server.close(); });

  it('fetches once on first use, shared by concurrent callers, and keeps it', async () => {
    hits = 0;
    const bootstrap = new RdapBootstrap(`${base}/dns.json`, new TestClock());
    assert.equal(hits, 0, 'lazy: nothing fetched before first use');
    const answers = await Promise.all(['a.com', 'b.de', 'c.uk'].map((d) => bootstrap.publishesExpiryData(d)));
    assert.deepEqual(answers, [true, false, true]);
    await bootstrap.publishesExpiryData('d.org');
    assert.equal(hits, 1);
  });

  it('a failed fetch answers unknown and is retried only after a pause', async () => {
    hits = 0;
    failing = true;
    const clock = new TestClock();
    const bootstrap = new RdapBootstrap(`${base}/flaky`, clock);
    assert.equal(await bootstrap.publishesExpiryData('a.com'), null);
    assert.equal(await bootstrap.publishesExpiryData('a.com'), null);
    assert.equal(hits, 1, 'not refetched at once');
    failing = false;
    clock.advance(61_000);
    assert.equal(await bootstrap.publishesExpiryData('a.com'), true);
    assert.equal(hits, 2);
  });

  it('a file: URL reads a local copy', async () => {
    const bootstrap = new RdapBootstrap(pathToFileURL(FIXTURE_URL.pathname).href, new TestClock());
    assert.equal(await bootstrap.publishesExpiryData('example.co.uk'), true);
    assert.equal(await bootstrap.publishesExpiryData('example.de'), false);
  });

  it('a body that is not the registry is unavailable, not an answer', async () => {
    const bootstrap = new RdapBootstrap(`${base}/junk`, new TestClock());
    await assert.rejects(bootstrap.services(), RdapUnavailableError);
    const unreachable = new RdapBootstrap('http://127.0.0.1:1/dns.json', new TestClock());
    assert.equal(await unreachable.publishesExpiryData('a.com'), null);
  });
});
