import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import { isBlockedAddress } from '../../src/net/address-policy.js';
import { NetworkGuard, type ResolvedAddress, type Resolver } from '../../src/net/guard.js';
import { AppError } from '../../src/shared/errors.js';

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

/** A static zone; names not in it fail like getaddrinfo does. Records every name asked. */
function zone(records: Record<string, ResolvedAddress[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolver = async (host: string): Promise<ResolvedAddress[]> => {
    asked.push(host);
    const found = records[host];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  return Object.assign(resolver, { asked });
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a refusal');
}

const ZONE = {
  'public.test': [v4('93.184.216.34'), v6('2606:2800:220:1::1')],
  'inside.test': [v4('10.0.0.5')],
  'mixed.test': [v4('93.184.216.34'), v4('127.0.0.1')],
  'v6loop.test': [v4('93.184.216.34'), v6('::1')],
  'mapped.test': [v6('::ffff:169.254.169.254')],
};

describe('NetworkGuard.checkHost (write time)', () => {
  it('refuses a literal in a blocked range with 400 VALIDATION_FAILED on the given field', async () => {
    const guard = new NetworkGuard({ allowPrivate: false, resolver: zone({}) });
    for (const host of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '[::1]', '::ffff:127.0.0.1', '0x7f.1', '2130706433', '0']) {
      const err = await refusal(guard.checkHost(host, 'check.host'));
      assert.equal(err.status, 400);
      assert.equal(err.code, 'VALIDATION_FAILED');
      assert.equal(err.extra.field, 'check.host');
      assert.match(err.message, /^check\.host: target address .* is in a blocked range/);
    }
  });

  it('accepts a public literal and returns it normalised', async () => {
    const guard = new NetworkGuard({ allowPrivate: false, resolver: zone({}) });
    assert.deepEqual(await guard.checkHost('8.8.8.8', 'check.host'), { addresses: ['8.8.8.8'] });
    assert.deepEqual(await guard.checkHost('[2606:4700:4700::1111]', 'check.url'), { addresses: ['2606:4700:4700::1111'] });
  });

  it('resolves a name and accepts it when every address is public', async () => {
    const guard = new NetworkGuard({ allowPrivate: false, resolver: zone(ZONE) });
    assert.deepEqual(await guard.checkHost('Public.Test.', 'check.url'), { addresses: ['93.184.216.34', '2606:2800:220:1::1'] });
  });

  it('refuses a name when ANY resolved A or AAAA address is blocked', async () => {
    const guard = new NetworkGuard({ allowPrivate: false, resolver: zone(ZONE) });
    for (const [host, address] of [['inside.test', '10.0.0.5'], ['mixed.test', '127.0.0.1'], ['v6loop.test', '::1'],
      ['mapped.test', '::ffff:169.254.169.254']] as const) {
      const err = await refusal(guard.checkHost(host, 'check.url'));
      assert.equal(err.code, 'VALIDATION_FAILED');
      assert.equal(err.extra.field, 'check.url');
      assert.ok(err.message.includes(`resolves to ${address}`), err.message);
    }
  });

  it('refuses localhost and *.localhost without resolving', async () => {
    const resolver = zone({ 'localhost': [v4('8.8.8.8')], 'app.localhost': [v4('8.8.8.8')] });
    const guard = new NetworkGuard({ allowPrivate: false, resolver });
    for (const host of ['localhost', 'LOCALHOST.', 'app.localhost', 'a.b.localhost.']) {
      const err = await refusal(guard.checkHost(host, 'check.host'));
      assert.match(err.message, /loopback name/);
    }
    assert.deepEqual(resolver.asked, []);
  });

  it('accepts a name that does not resolve yet (the connect-time guard re-checks)', async () => {
    const guard = new NetworkGuard({ allowPrivate: false, resolver: zone({}) });
    assert.deepEqual(await guard.checkHost('not-yet.test', 'check.url'), { addresses: [] });
  });

  it('accepts a name whose resolution outlasts the budget', async () => {
    const never: Resolver = () => new Promise(() => {});
    const guard = new NetworkGuard({ allowPrivate: false, resolver: never, resolveTimeoutMs: 20 });
    assert.deepEqual(await guard.checkHost('slow.test', 'check.url'), { addresses: [] });
  });

  it('refuses a string that is not a host', async () => {
    const guard = new NetworkGuard({ allowPrivate: true, resolver: zone({}) });
    const err = await refusal(guard.checkHost('evil.com@127.0.0.1', 'check.host'));
    assert.match(err.message, /not a valid host/);
  });

  it('lets everything pass with allowPrivate, without resolving names', async () => {
    const resolver = zone(ZONE);
    const guard = new NetworkGuard({ allowPrivate: true, resolver });
    assert.deepEqual(await guard.checkHost('127.0.0.1', 'check.host'), { addresses: ['127.0.0.1'] });
    assert.deepEqual(await guard.checkHost('[fe80::1]', 'check.host'), { addresses: ['fe80::1'] });
    assert.deepEqual(await guard.checkHost('localhost', 'check.host'), { addresses: [] });
    assert.deepEqual(await guard.checkHost('inside.test', 'check.host'), { addresses: [] });
    assert.deepEqual(resolver.asked, []);
  });

  it('uses the process resolver by default: an unknown name is accepted', async () => {
    const guard = new NetworkGuard({ allowPrivate: false });
    assert.deepEqual(await guard.checkHost('no-such-host.invalid', 'check.url'), { addresses: [] });
  });

  it('uses the process resolver by default: this machine\'s name is judged by what it resolves to', async () => {
    const name = hostname();
    const resolved = await lookup(name, { all: true });
    const guard = new NetworkGuard({ allowPrivate: false });
    const outcome = await guard.checkHost(name, 'check.host').then(() => 'accepted', (err: AppError) => err.code);
    const expected = resolved.some((a) => isBlockedAddress(a.address)) ? 'VALIDATION_FAILED' : 'accepted';
    assert.equal(outcome, expected);
  });
});

describe('NetworkGuard.resolveForConnect (connect time)', () => {
  it('drops blocked addresses and keeps the allowed ones', async () => {
    const guard = new NetworkGuard({ allowPrivate: false, resolver: zone(ZONE) });
    assert.deepEqual(await guard.resolveForConnect('mixed.test'), [v4('93.184.216.34')]);
  });

  it('filters by family', async () => {
    const guard = new NetworkGuard({ allowPrivate: false, resolver: zone(ZONE) });
    assert.deepEqual(await guard.resolveForConnect('public.test', 6), [v6('2606:2800:220:1::1')]);
    await assert.rejects(guard.resolveForConnect('inside.test', 6), { code: 'ENOTFOUND' });
  });

  it('refuses with EBLOCKEDADDRESS when nothing allowed remains, literals included', async () => {
    const guard = new NetworkGuard({ allowPrivate: false, resolver: zone(ZONE) });
    await assert.rejects(guard.resolveForConnect('inside.test'), { code: 'EBLOCKEDADDRESS', hostname: 'inside.test' });
    await assert.rejects(guard.resolveForConnect('127.1'), { code: 'EBLOCKEDADDRESS' });
    await assert.rejects(guard.resolveForConnect('localhost'), { code: 'EBLOCKEDADDRESS' });
  });

  it('passes resolver failures through', async () => {
    const guard = new NetworkGuard({ allowPrivate: false, resolver: zone({}) });
    await assert.rejects(guard.resolveForConnect('gone.test'), { code: 'ENOTFOUND' });
  });
});
